"""The evaluate stage: trec_eval-exact metrics of any retriever on gold sets, sliced by any field.

``evaluate`` scores loaded objects; ``evaluate_files`` loads gold sets, corpus and run from paths and
builds a retriever by name first (what the CLI, one-call calibrate and the scheduled job call).
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr

# Scoring loads numpy: exported lazily, so the CLI's start-up and ``evaluate.defaults`` stay cheap.
_LAZY = {
    "DEFAULT_K": "realrecall.evaluate.evaluation",
    "default_metrics": "realrecall.evaluate.evaluation",
    "evaluate": "realrecall.evaluate.evaluation",
    "EvaluationInputs": "realrecall.evaluate.from_files",
    "evaluate_files": "realrecall.evaluate.from_files",
    "load_inputs": "realrecall.evaluate.from_files",
    **{
        name: "realrecall.evaluate.results"
        for name in (
            "EvaluationResult",
            "GoldSetResult",
            "QueryResult",
            "SliceResult",
            "load_results",
            "read_per_query",
            "write_per_query",
            "write_results",
        )
    },
}

if _typing.TYPE_CHECKING:
    from realrecall.evaluate.evaluation import DEFAULT_K, default_metrics, evaluate
    from realrecall.evaluate.from_files import EvaluationInputs, evaluate_files, load_inputs
    from realrecall.evaluate.results import (
        EvaluationResult,
        GoldSetResult,
        QueryResult,
        SliceResult,
        load_results,
        read_per_query,
        write_per_query,
        write_results,
    )

__getattr__ = _lazy_getattr("realrecall.evaluate", _LAZY)

__all__ = [
    "DEFAULT_K",
    "EvaluationInputs",
    "EvaluationResult",
    "GoldSetResult",
    "QueryResult",
    "SliceResult",
    "default_metrics",
    "evaluate",
    "evaluate_files",
    "load_inputs",
    "load_results",
    "read_per_query",
    "write_per_query",
    "write_results",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The evaluate stage: trec_eval-exact metrics of any retriever on gold sets, sliced by any field.

``evaluate`` scores loaded objects; ``evaluate_files`` loads gold sets, corpus and run from paths and
builds a retriever by name first (what the CLI, one-call calibrate and the scheduled job call). Both
take an ``EvaluateSettings`` (or its fields as keywords): the stage's options, declared once.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# Scoring loads numpy: exported lazily, so the CLI's start-up and ``evaluate.settings`` stay cheap.
if _typing.TYPE_CHECKING:
    from realrecall.evaluate.evaluation import DEFAULT_K as DEFAULT_K
    from realrecall.evaluate.evaluation import evaluate as evaluate
    from realrecall.evaluate.from_files import EvaluationInputs as EvaluationInputs
    from realrecall.evaluate.from_files import evaluate_files as evaluate_files
    from realrecall.evaluate.from_files import load_inputs as load_inputs
    from realrecall.evaluate.results import EvaluationResult as EvaluationResult
    from realrecall.evaluate.results import GoldSetResult as GoldSetResult
    from realrecall.evaluate.results import QueryResult as QueryResult
    from realrecall.evaluate.results import SliceResult as SliceResult
    from realrecall.evaluate.results import load_results as load_results
    from realrecall.evaluate.results import read_per_query as read_per_query
    from realrecall.evaluate.results import write_per_query as write_per_query
    from realrecall.evaluate.results import write_results as write_results
    from realrecall.evaluate.settings import EvaluateSettings as EvaluateSettings
    from realrecall.evaluate.settings import default_metrics as default_metrics

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

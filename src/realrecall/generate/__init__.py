"""The generate stage: synthetic questions from chunks, written as a gold set with provenance.

    from realrecall.generate import GenerateConfig, generate
    summary = generate(load_corpus("chunks.jsonl"), "synthetic.jsonl", GenerateConfig(), client=client)

Each output line is a gold-set record (``query_id``, ``query``, ``gold: {chunk_id: 1}``, ``origin:
"synthetic"``, ``type``, ``language``) with a ``provenance`` object saying how it was made.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr

# The generator loads asyncio, curate and numpy: exported lazily, so ``realrecall generate --help``
# and the CLI's other commands start without it (the config module alone is light).
_LAZY = {
    "BatchOptions": "realrecall.generate.batch",
    **{
        name: "realrecall.generate.config"
        for name in ("BACKENDS", "QUESTION_TYPES", "GenerateConfig", "Shard", "parse_shard", "parse_weights")
    },
    "CostEstimate": "realrecall.generate.dry_run",
    "estimate": "realrecall.generate.dry_run",
    "agenerate": "realrecall.generate.run",
    "generate": "realrecall.generate.run",
    "style_leak_warning": "realrecall.style_leak",
    "GenerateProgress": "realrecall.generate.summary",
    "GenerateSummary": "realrecall.generate.summary",
    "StageSummary": "realrecall.generate.summary",
    "lexical_overlap": "realrecall.text_features",
}

if _typing.TYPE_CHECKING:
    from realrecall.generate.batch import BatchOptions
    from realrecall.generate.config import (
        BACKENDS,
        QUESTION_TYPES,
        GenerateConfig,
        Shard,
        parse_shard,
        parse_weights,
    )
    from realrecall.generate.dry_run import CostEstimate, estimate
    from realrecall.generate.run import agenerate, generate
    from realrecall.generate.summary import GenerateProgress, GenerateSummary, StageSummary
    from realrecall.style_leak import style_leak_warning
    from realrecall.text_features import lexical_overlap

__getattr__ = _lazy_getattr("realrecall.generate", _LAZY)

__all__ = [
    "BACKENDS",
    "QUESTION_TYPES",
    "BatchOptions",
    "CostEstimate",
    "GenerateConfig",
    "GenerateProgress",
    "GenerateSummary",
    "Shard",
    "StageSummary",
    "agenerate",
    "estimate",
    "generate",
    "lexical_overlap",
    "parse_shard",
    "parse_weights",
    "style_leak_warning",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

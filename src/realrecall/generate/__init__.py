"""The generate stage: synthetic questions from chunks, written as a gold set with provenance.

    from realrecall.generate import GenerateConfig, generate
    summary = generate(load_corpus("chunks.jsonl"), "synthetic.jsonl", GenerateConfig(), client=client)

Each output line is a gold-set record (``query_id``, ``query``, ``gold: {chunk_id: 1}``, ``origin:
"synthetic"``, ``type``, ``language``) with a ``provenance`` object saying how it was made.
"""

from __future__ import annotations

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
from realrecall.generate.style import style_leak_warning
from realrecall.generate.summary import GenerateProgress, GenerateSummary, StageSummary
from realrecall.text_features import lexical_overlap

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

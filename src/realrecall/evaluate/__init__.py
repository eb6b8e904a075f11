"""The evaluate stage: trec_eval-exact metrics of any retriever on gold sets, sliced by any field."""

from __future__ import annotations

from realrecall.evaluate.evaluation import DEFAULT_K, default_metrics, evaluate
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

__all__ = [
    "DEFAULT_K",
    "EvaluationResult",
    "GoldSetResult",
    "QueryResult",
    "SliceResult",
    "default_metrics",
    "evaluate",
    "load_results",
    "read_per_query",
    "write_per_query",
    "write_results",
]

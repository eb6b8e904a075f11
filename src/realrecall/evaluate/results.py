"""What an evaluation produced, and its two files: ``results.json`` and the per-query JSON Lines.

``results.json`` holds every figure with the number of queries behind it, the retriever's description
and the input files' hashes; calibrate, compare, review and the scheduled pipeline read it back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.files import atomic_write_text, write_jsonl_atomic

__all__ = [
    "EvaluationResult",
    "GoldSetResult",
    "QueryResult",
    "SliceResult",
    "write_per_query",
    "write_results",
]


@dataclass(frozen=True)
class SliceResult:
    """The mean of each metric over the queries whose ``field`` equals ``value`` (n of them)."""

    field: str | None
    value: Any
    n: int
    metrics: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "value": self.value, "n": self.n, "metrics": dict(self.metrics)}


@dataclass(frozen=True)
class QueryResult:
    """One query's outcome: where its first gold passage ranked, what came first, each metric."""

    query_id: str
    query: str
    gold: tuple[str, ...]
    origin: str | None
    type: str | None
    language: str | None
    first_relevant_rank: int | None
    top: tuple[str, ...]
    metrics: Mapping[str, float]
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, *, with_top: bool) -> dict[str, Any]:
        record: dict[str, Any] = {
            "query_id": self.query_id,
            "query": self.query,
            "gold": list(self.gold),
            "origin": self.origin,
            "type": self.type,
            "language": self.language,
            **{
                name: value
                for name, value in self.fields.items()
                if name not in ("origin", "type", "language")
            },
            "first_relevant_rank": self.first_relevant_rank,
        }
        if with_top:
            record["top"] = list(self.top)
        record["metrics"] = dict(self.metrics)
        return record


@dataclass(frozen=True)
class GoldSetResult:
    """Every figure for one gold set: overall, per slice and per query, with what was wrong with it."""

    name: str
    path: str | None
    sha256: str | None
    modified: str | None
    origins: Mapping[str, int]
    overall: SliceResult
    slices: tuple[SliceResult, ...]
    queries: tuple[QueryResult, ...]
    missing_run: tuple[str, ...]
    no_relevant: tuple[str, ...]
    missing_passages: int

    @property
    def n_queries(self) -> int:
        return self.overall.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.sha256,
            "modified": self.modified,
            "n_queries": self.n_queries,
            "origins": dict(self.origins),
            "missing_run": len(self.missing_run),
            "no_relevant": len(self.no_relevant),
            "missing_passages": self.missing_passages,
            "overall": {"n": self.overall.n, "metrics": dict(self.overall.metrics)},
            "slices": [s.to_dict() for s in self.slices],
            "per_query": [q.to_dict(with_top=False) for q in self.queries],
        }


@dataclass(frozen=True)
class EvaluationResult:
    """The outcome of ``evaluate``: one ``GoldSetResult`` per gold set, and how it was obtained."""

    retriever: Mapping[str, str]
    corpus: Mapping[str, Any] | None
    metrics: tuple[str, ...]
    relevance_threshold: int
    gold_sets: tuple[GoldSetResult, ...]
    created: str
    warnings: tuple[str, ...] = ()
    version: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "realrecall_version": self.version,
            "created": self.created,
            "retriever": dict(self.retriever),
            "corpus": None if self.corpus is None else dict(self.corpus),
            "metrics": list(self.metrics),
            "relevance_threshold": self.relevance_threshold,
            "warnings": list(self.warnings),
            "gold_sets": [g.to_dict() for g in self.gold_sets],
        }


def write_results(result: EvaluationResult, path: str | Path) -> None:
    """Write ``results.json`` atomically."""
    atomic_write_text(path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")


def write_per_query(result: EvaluationResult, path: str | Path) -> int:
    """Write one JSON line per query of every gold set (with its top-k ids) for miss analysis."""
    records: list[dict[str, Any]] = []
    for gold_set in result.gold_sets:
        for query in gold_set.queries:
            records.append({"gold_set": gold_set.name, **query.to_dict(with_top=True)})
    return write_jsonl_atomic(path, records)

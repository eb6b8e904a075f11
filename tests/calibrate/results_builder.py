"""Builders of hand-written results.json documents (the schema evaluate writes) for calibrate tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

METRICS = ["recall@1", "recall@5", "recall@10", "mrr@10"]


def per_query(
    query_id: str,
    origin: str,
    *,
    rank: int | None,
    type: str | None = None,
    language: str | None = "en",
    query: str | None = None,
    gold: Sequence[str] = ("p1",),
    **extra: Any,
) -> dict[str, Any]:
    """One per-query record whose metric values follow from ``rank`` (first relevant rank)."""
    metrics = {
        "recall@1": float(rank is not None and rank <= 1),
        "recall@5": float(rank is not None and rank <= 5),
        "recall@10": float(rank is not None and rank <= 10),
        "mrr@10": 1.0 / rank if rank is not None and rank <= 10 else 0.0,
    }
    return {
        "query_id": query_id,
        "query": query or f"question {query_id}",
        "gold": list(gold),
        "origin": origin,
        "type": type,
        "language": language,
        "first_relevant_rank": rank,
        "metrics": metrics,
        **extra,
    }


def results_document(
    gold_sets: Sequence[tuple[str, Sequence[dict[str, Any]]]],
    *,
    retriever: str = "bm25",
    modified: str | None = "2026-11-30T10:00:00+00:00",
    corpus_path: str | None = None,
) -> dict[str, Any]:
    """A results.json mapping holding the given gold sets (name, per-query records)."""
    sets = []
    for name, records in gold_sets:
        origins: dict[str, int] = {}
        for record in records:
            origins[record["origin"]] = origins.get(record["origin"], 0) + 1
        sets.append(
            {
                "name": name,
                "path": f"{name}.jsonl",
                "sha256": "0" * 64,
                "modified": modified,
                "n_queries": len(records),
                "origins": origins,
                "per_query": list(records),
            }
        )
    return {
        "realrecall_version": "0.1.0",
        "created": "2026-12-02T18:40:00+00:00",
        "retriever": {"name": retriever, "description": retriever},
        "corpus": {"path": corpus_path, "sha256": "0" * 64, "chunks": 3},
        "fingerprints": {"retriever": {"name": retriever, "options": {}, "versions": {}}},
        "metrics": METRICS,
        "relevance_threshold": 1,
        "gold_sets": sets,
    }


def ranks_set(origin: str, hits: int, misses: int, *, prefix: str, **fields: Any) -> list[dict[str, Any]]:
    """``hits`` queries found at rank 1 and ``misses`` never found."""
    found = [per_query(f"{prefix}{i}", origin, rank=1, **fields) for i in range(hits)]
    lost = [per_query(f"{prefix}{hits + i}", origin, rank=None, **fields) for i in range(misses)]
    return found + lost

"""Reading an evaluation's per-query file (``realrecall evaluate --per-query``) and its results.json.

The per-query file holds, per query: ``query_id``, ``query``, ``gold`` (ids, or ``{id: grade}``),
``origin``/``type``/``language``, ``first_relevant_rank`` and ``top`` (the retrieved ids, best first).
Only ``query_id`` and ``top`` are required here; a ``gold_set`` field, when present, tells apart the
queries of several gold sets evaluated in one run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import iter_jsonl, read_text_lines

__all__ = ["PerQuery", "Results", "read_per_query", "read_results", "records_for"]

_RECALL = re.compile(r"^recall@(\d+)$")


@dataclass(frozen=True)
class PerQuery:
    """One query's line of the per-query file."""

    query_id: str
    top: tuple[str, ...]
    query: str = ""
    gold: Mapping[str, int] = field(default_factory=dict)
    gold_set: str | None = None
    type: str | None = None
    language: str | None = None
    origin: str | None = None
    first_relevant_rank: int | None = None
    line: int | None = None
    gold_listed: bool = False

    def relevant(self, threshold: int) -> frozenset[str]:
        """The relevant gold ids: all of a plain list (evaluate writes only relevant ids), else by grade."""
        if self.gold_listed:
            return frozenset(self.gold)
        return frozenset(pid for pid, grade in self.gold.items() if grade >= threshold)


@dataclass(frozen=True)
class Results:
    """What review needs from results.json: corpus, relevance threshold and the cut-offs evaluated."""

    path: str
    corpus_path: str | None
    corpus_sha256: str | None
    relevance_threshold: int
    recall_ks: tuple[int, ...]


def read_results(path: str | Path) -> Results:
    """Read the fields of results.json that review uses; errors name the file."""
    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    if not isinstance(data, dict) or "gold_sets" not in data:
        raise InputError(
            "not a realrecall results.json (no gold_sets)", path=path, hint="give the file evaluate wrote"
        )
    corpus = data.get("corpus") or {}
    metrics = data.get("metrics") or []
    ks = sorted({int(m.group(1)) for name in metrics if isinstance(name, str) and (m := _RECALL.match(name))})
    threshold = data.get("relevance_threshold", 1)
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise InputError(f"relevance_threshold must be an integer, got {threshold!r}", path=path)
    return Results(
        path=str(path),
        corpus_path=corpus.get("path") if isinstance(corpus, dict) else None,
        corpus_sha256=corpus.get("sha256") if isinstance(corpus, dict) else None,
        relevance_threshold=threshold,
        recall_ks=tuple(ks),
    )


def read_per_query(path: str | Path) -> tuple[PerQuery, ...]:
    """Every record of a per-query file, in file order."""
    records = []
    for number, record in iter_jsonl(path, what="per-query record"):
        query_id = record.get("query_id")
        if not isinstance(query_id, str | int) or isinstance(query_id, bool) or query_id == "":
            raise InputError('record has no "query_id"', path=path, line=number)
        top = record.get("top")
        if not isinstance(top, list):
            raise InputError(
                'record has no "top" list of retrieved ids',
                path=path,
                line=number,
                hint="write the per-query file with realrecall evaluate --per-query",
            )
        rank = record.get("first_relevant_rank")
        raw_gold = record.get("gold", record.get("gold_ids"))
        records.append(
            PerQuery(
                query_id=str(query_id),
                top=tuple(str(pid) for pid in top),
                query=str(record.get("query") or ""),
                gold=_gold(raw_gold, path, number),
                gold_listed=isinstance(raw_gold, list),
                gold_set=_text(record.get("gold_set")),
                type=_text(record.get("type")),
                language=_text(record.get("language")),
                origin=_text(record.get("origin")),
                first_relevant_rank=rank if isinstance(rank, int) and not isinstance(rank, bool) else None,
                line=number,
            )
        )
    return tuple(records)


def records_for(records: tuple[PerQuery, ...], gold_set: str | None) -> tuple[PerQuery, ...]:
    """The records of one gold set (by the ``gold_set`` field); all records when it names none of them."""
    if gold_set is None:
        return records
    chosen = tuple(r for r in records if r.gold_set == gold_set)
    return chosen if chosen or any(r.gold_set is not None for r in records) else records


def _gold(value: Any, path: str | Path, line: int) -> dict[str, int]:
    if value is None:
        return {}
    if isinstance(value, list):
        return {str(pid): 1 for pid in value}
    if isinstance(value, dict):
        return {str(pid): int(grade) for pid, grade in value.items()}
    raise InputError('"gold" must be a list of ids or an object {id: grade}', path=path, line=line)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)

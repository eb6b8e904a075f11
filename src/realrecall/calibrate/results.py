"""Reading evaluate's results.json into typed records: one per query, with its origin and slice fields.

The calibrate stage works from the per-query values in results.json (schema in the evaluate stage), so
intervals, gaps and paired tests never need the gold sets or the run again. Several results files of
the same retriever (one per gold set, say) merge into one; files of different retrievers stay apart
and feed the rank agreement.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import read_text_lines
from realrecall.gold import ORIGINS

__all__ = [
    "MAX_SLICE_VALUES",
    "GoldSetInfo",
    "QueryRecord",
    "Results",
    "default_slice_fields",
    "distinct_labels",
    "load_results",
    "merge_by_retriever",
]

# A field with more distinct values than this (a per-query id, free text) is not a slice anyone reads.
MAX_SLICE_VALUES = 50

# Per-query keys that are not slice fields: identity, judgments, ranks and values.
_NOT_SLICE_FIELDS = frozenset(
    {"query_id", "query", "gold", "origin", "first_relevant_rank", "metrics", "top"}
)


@dataclass(frozen=True)
class QueryRecord:
    """One evaluated query: its text, gold ids, origin, slice fields and metric values."""

    query_id: str
    query: str
    gold: tuple[str, ...]
    origin: str
    gold_set: str
    first_relevant_rank: int | None
    metrics: Mapping[str, float]
    fields: Mapping[str, Any] = field(default_factory=dict)

    def field(self, name: str) -> Any:
        return self.fields.get(name)


@dataclass(frozen=True)
class GoldSetInfo:
    """What results.json says about one gold set besides its queries."""

    name: str
    path: str | None
    modified: str | None
    n_queries: int
    origins: Mapping[str, int]


@dataclass(frozen=True)
class Results:
    """The evaluation of one retriever on one or more gold sets."""

    retriever: str
    description: str
    metrics: tuple[str, ...]
    queries: tuple[QueryRecord, ...]
    gold_sets: tuple[GoldSetInfo, ...] = ()
    corpus_path: str | None = None
    source: str | None = None
    warnings: tuple[str, ...] = ()
    """What evaluate warned about (ids missing from the corpus, ...): every report repeats it."""

    def of_origin(self, origin: str) -> tuple[QueryRecord, ...]:
        """The queries of one origin (``real`` or ``synthetic``)."""
        return tuple(q for q in self.queries if q.origin == origin)

    def slice_fields(self) -> tuple[str, ...]:
        """Every slice field present in at least one query record, type and language first."""
        names: dict[str, None] = {}
        for query in self.queries:
            names.update(dict.fromkeys(query.fields))
        preferred = [name for name in ("type", "language") if name in names]
        return tuple(preferred + sorted(name for name in names if name not in preferred))

    def real_set_dates(self) -> tuple[str, ...]:
        """``modified`` stamps of the gold sets that hold real queries."""
        return tuple(g.modified for g in self.gold_sets if g.modified and g.origins.get("real"))

    @property
    def identity(self) -> tuple[str, str]:
        return (self.retriever, self.description)


def load_results(
    source: Mapping[str, Any] | str | Path, *, origins: Mapping[str, str] | None = None
) -> Results:
    """Read results.json (a path, or the already-parsed mapping) into :class:`Results`.

    ``origins`` (gold set name -> ``real`` | ``synthetic``) sets the origin of every query of the named
    gold sets, for sets evaluated without one (a BEIR or TREC real set, say).
    """
    if isinstance(source, Mapping):
        return _parse(source, None, origins or {})
    path = Path(source)
    if not path.is_file():
        raise InputError("results file not found", path=path, hint="run `realrecall evaluate` first")
    # Read line by line: a byte that is not UTF-8 (a binary or Latin-1 file) is named by its line.
    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg})", path=path, line=exc.lineno, hint="give evaluate's results.json"
        ) from exc
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object", path=path, hint="give evaluate's results.json")
    return _parse(data, str(path), origins or {})


def merge_by_retriever(results: Iterable[Results]) -> tuple[Results, ...]:
    """Merge results of the same retriever (name and description), keeping first-seen order."""
    merged: dict[tuple[str, str], Results] = {}
    for item in results:
        previous = merged.get(item.identity)
        if previous is None:
            merged[item.identity] = item
            continue
        metrics = previous.metrics + tuple(m for m in item.metrics if m not in previous.metrics)
        _check_no_overlap(previous, item)
        merged[item.identity] = Results(
            retriever=previous.retriever,
            description=previous.description,
            metrics=metrics,
            queries=previous.queries + item.queries,
            gold_sets=previous.gold_sets + item.gold_sets,
            corpus_path=previous.corpus_path or item.corpus_path,
            source=previous.source,
            warnings=tuple(dict.fromkeys(previous.warnings + item.warnings)),
        )
    return tuple(merged.values())


def default_slice_fields(results: Results) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every slice field except those with too many values to read as slices (ids, free text)."""
    fields, skipped = [], []
    for name in results.slice_fields():
        count = len({q.field(name) for q in results.queries})
        if count > MAX_SLICE_VALUES:
            skipped.append(
                f"field {name!r} has {count} values: not sliced (give --by {name} to slice it anyway)"
            )
        else:
            fields.append(name)
    return tuple(fields), tuple(skipped)


def _check_no_overlap(first: Results, second: Results) -> None:
    """The same query in two results files of one retriever would count twice in every figure."""
    known = {(q.gold_set, q.query_id) for q in first.queries}
    for query in second.queries:
        if (query.gold_set, query.query_id) in known:
            raise InputError(
                f"query {query.query_id!r} of gold set {query.gold_set!r} is in two results files of the "
                f"same retriever ({first.source or 'the first'} and {second.source or 'the second'})",
                path=second.source,
                hint="give each results file once; files of one retriever must hold different gold sets",
            )


def distinct_labels(results: Sequence[Results]) -> list[str]:
    """Short labels that tell the retrievers apart: the name, plus what differs in the descriptions.

    ``bm25`` and ``bm25`` described as ``... k1=0.9 b=0.4 ...`` and ``... k1=1.5 b=0.75 ...`` become
    ``bm25 k1=0.9 b=0.4`` and ``bm25 k1=1.5 b=0.75``.
    """
    names = [r.retriever for r in results]
    if len(set(names)) == len(names):
        return names
    words = [r.description.split() for r in results]
    shared = set.intersection(*(set(w) for w in words)) if words else set()
    labels = [
        " ".join([name, *(w for w in description if w not in shared)])
        for name, description in zip(names, words, strict=True)
    ]
    if len(set(labels)) < len(labels):
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return labels


_RESULTS_HINT = "give evaluate's results.json (or rerun evaluate)"


def _parse(data: Mapping[str, Any], path: str | None, forced: Mapping[str, str]) -> Results:
    gold_sets = data.get("gold_sets")
    if not isinstance(gold_sets, list) or not gold_sets:
        raise InputError('no "gold_sets" in results', path=path, hint="give evaluate's results.json")
    retriever = data.get("retriever") or {}
    if not isinstance(retriever, Mapping):
        retriever = {"name": _text(retriever, '"retriever"', path)}
    corpus = data.get("corpus") or {}
    if not isinstance(corpus, Mapping):
        raise InputError('"corpus" must be an object', path=path, hint=_RESULTS_HINT)
    raw_metrics = data.get("metrics") or []
    if not isinstance(raw_metrics, list) or not all(isinstance(m, str) for m in raw_metrics):
        raise InputError('"metrics" must be a list of metric names', path=path, hint=_RESULTS_HINT)
    metrics = tuple(raw_metrics)
    infos: list[GoldSetInfo] = []
    queries: list[QueryRecord] = []
    for position, gold_set in enumerate(gold_sets):
        if not isinstance(gold_set, Mapping):
            raise InputError(
                f"gold set {position + 1} is not an object", path=path, hint="give evaluate's results.json"
            )
        name = _text(gold_set.get("name") or f"gold_set_{position}", f"name of gold set {position + 1}", path)
        per_query = gold_set.get("per_query")
        if not isinstance(per_query, list) or not all(isinstance(r, Mapping) for r in per_query):
            raise InputError(
                f'gold set {name!r} has no "per_query" records',
                path=path,
                hint="rerun evaluate; calibrate needs per-query values for its intervals",
            )
        origins = _counts(gold_set.get("origins") or {}, f"origins of gold set {name!r}", path)
        n_queries = gold_set.get("n_queries", len(per_query))
        if isinstance(n_queries, bool) or not isinstance(n_queries, int) or n_queries < 0:
            raise InputError(f"n_queries of gold set {name!r} must be a count", path=path, hint=_RESULTS_HINT)
        infos.append(
            GoldSetInfo(
                name=name,
                path=_optional_text(gold_set.get("path"), f"path of gold set {name!r}", path),
                modified=_optional_text(gold_set.get("modified"), f"modified of gold set {name!r}", path),
                n_queries=n_queries,
                origins=origins,
            )
        )
        default_origin = next(iter(origins)) if len(origins) == 1 else None
        seen: set[str] = set()
        for record in per_query:
            query = _query(record, name, default_origin, forced.get(name), path)
            if query.query_id in seen:
                raise InputError(
                    f"query {query.query_id!r} of gold set {name!r} appears twice",
                    path=path,
                    hint=_RESULTS_HINT,
                )
            seen.add(query.query_id)
            queries.append(query)
    if not metrics:
        metrics = tuple(dict.fromkeys(m for q in queries for m in q.metrics))
    return Results(
        retriever=_text(retriever.get("name") or "retriever", "retriever name", path),
        description=_text(retriever.get("description") or "", "retriever description", path),
        metrics=metrics,
        queries=tuple(queries),
        gold_sets=tuple(infos),
        corpus_path=_optional_text(corpus.get("path"), "corpus path", path),
        source=path,
        warnings=_warnings(data.get("warnings"), path),
    )


def _text(value: Any, what: str, path: str | None) -> str:
    if not isinstance(value, str):
        raise InputError(
            f"{what} must be a string, got {type(value).__name__}", path=path, hint=_RESULTS_HINT
        )
    return value


def _optional_text(value: Any, what: str, path: str | None) -> str | None:
    return None if value is None else _text(value, what, path)


def _counts(value: Any, what: str, path: str | None) -> dict[str, int]:
    if not isinstance(value, Mapping) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values()
    ):
        raise InputError(f"{what} must be an object of counts", path=path, hint=_RESULTS_HINT)
    return {str(k): int(v) for k, v in value.items()}


def _warnings(value: Any, path: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(
            '"warnings" must be a list of strings', path=path, hint="give evaluate's results.json"
        )
    return tuple(value)


def _query(
    record: Mapping[str, Any],
    gold_set: str,
    default_origin: str | None,
    forced_origin: str | None,
    path: str | None,
) -> QueryRecord:
    raw_id = record.get("query_id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
        raise InputError(
            f"a query of gold set {gold_set!r} has no query_id (got {raw_id!r})",
            path=path,
            hint=_RESULTS_HINT,
        )
    query_id = str(raw_id)
    origin = forced_origin or record.get("origin") or default_origin
    if origin not in ORIGINS:
        raise InputError(
            f"query {query_id!r} of gold set {gold_set!r} has origin {origin!r}",
            path=path,
            hint=f"name it: --origin {gold_set}=real (or synthetic), or evaluate with --origin",
        )
    raw_metrics = record.get("metrics")
    if not isinstance(raw_metrics, Mapping):
        raise InputError(f"query {query_id!r} of gold set {gold_set!r} has no metrics object", path=path)
    values: dict[str, float] = {}
    for name, value in raw_metrics.items():
        if value is None:
            continue  # not measured for this query: left out of that metric's figures
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            # Dropping it would quietly shrink n and move the figure; say which value is wrong.
            raise InputError(
                f"{name} of query {query_id!r} of gold set {gold_set!r} is {_shown(value)}, not a number",
                path=path,
                hint="metric values are numbers (null when not measured); rerun evaluate",
            )
        values[str(name)] = float(value)
    rank = record.get("first_relevant_rank")
    gold = record.get("gold") or ()
    gold_ids: Sequence[Any] = list(gold) if isinstance(gold, Mapping | list | tuple) else ()
    fields = {
        str(k): v
        for k, v in record.items()
        if k not in _NOT_SLICE_FIELDS and (v is None or isinstance(v, str | int | float | bool))
    }
    return QueryRecord(
        query_id=query_id,
        query=str(record.get("query") or ""),
        gold=tuple(str(g) for g in gold_ids),
        origin=origin,
        gold_set=gold_set,
        first_relevant_rank=_rank(rank, query_id, gold_set, path),
        metrics=values,
        fields=fields,
    )


def _rank(value: Any, query_id: str, gold_set: str, path: str | None) -> int | None:
    """The first relevant rank: a whole number from 1, or null when nothing relevant was retrieved."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 1:
        raise InputError(
            f"first_relevant_rank of query {query_id!r} of gold set {gold_set!r} must be a rank from 1 "
            f"or null, got {value!r}",
            path=path,
            hint=_RESULTS_HINT,
        )
    return int(value)


def _shown(value: Any) -> str:
    """A value as JSON writes it (NaN, "high", true); repr for one that came from Python, not JSON."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)

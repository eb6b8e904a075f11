"""Per-query scores of several systems: the input of set agreement and prediction-powered inference.

A :class:`QueryScores` is a systems x queries matrix of one measure. :func:`load_query_scores` reads
it from any mix of:

- trec_eval ``-q`` output (``realrecall.formats.trec_eval_scores``): several systems a file;
- realrecall's ``results.json`` (``evaluate -o``) or per-query JSON Lines (``evaluate --per-query``):
  one system a file, named by its retriever (results) or by the file (per-query);
- a folder: every file in it, in name order.

Measures are named either way: ``ndcg@10`` finds trec_eval's ``ndcg_cut_10`` and ``ndcg_cut_10`` finds
realrecall's ``ndcg@10`` (the table in ``realrecall.evaluate.metrics``).

A :class:`QuerySelection` keeps some queries: ``FIELD=VALUE`` (``origin=real``; realrecall files
only, trec_eval output has no fields), ``LOW-HIGH`` (numeric query ids, either end open:
``3000000-``), or ``@FILE`` (query ids one a line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.errors import InputError
from realrecall.evaluate.metrics import trec_eval_alias
from realrecall.evaluate.results import QueryResult, distinct_labels, load_results, read_per_query
from realrecall.files import read_text_lines
from realrecall.formats.trec_eval_scores import read_trec_eval_scores

__all__ = [
    "QueryScores",
    "QuerySelection",
    "load_query_scores",
    "measure_aliases",
    "parse_query_selection",
]

_RANGE = re.compile(r"^(\d*)-(\d*)$")
_SELECTION_HINT = "write FIELD=VALUE (origin=real), LOW-HIGH (2000000-2999999) or @FILE (ids one a line)"


@dataclass(frozen=True)
class QueryScores:
    """Each system's value of ``measure`` on each query: ``values[i, j]`` is system i on query j.

    Only queries that every system was scored on are kept; ``dropped`` counts the others.
    """

    measure: str
    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    dropped: int = 0

    @property
    def means(self) -> np.ndarray:
        """Each system's mean over the queries."""
        return np.asarray(self.values.mean(axis=1), dtype=np.float64)

    def select_systems(self, names: Sequence[str]) -> QueryScores:
        """The rows of ``names``, in that order."""
        index = [self.systems.index(name) for name in names]
        return QueryScores(self.measure, tuple(names), self.query_ids, self.values[index], self.dropped)

    def select_queries(self, query_ids: Sequence[str]) -> QueryScores:
        """The columns of ``query_ids``, in that order."""
        position = {query_id: i for i, query_id in enumerate(self.query_ids)}
        index = [position[query_id] for query_id in query_ids]
        return QueryScores(self.measure, self.systems, tuple(query_ids), self.values[:, index], self.dropped)


@dataclass(frozen=True)
class QuerySelection:
    """Which queries to keep (see the module doc); ``text`` is the spec as the user wrote it."""

    text: str
    field: str | None = None
    value: str | None = None
    low: int | None = None
    high: int | None = None
    ids: frozenset[str] | None = None

    def keeps(self, query_id: str, record: QueryResult | None) -> bool:
        if self.ids is not None:
            return query_id in self.ids
        if self.field is not None:
            if record is None:
                raise InputError(
                    f"cannot select {self.text!r}: trec_eval output has no fields",
                    hint="select its queries by id: LOW-HIGH or @FILE",
                )
            value = record.field(self.field)
            return value is not None and str(value) == self.value
        try:
            number = int(query_id)
        except ValueError:
            return False
        return (self.low is None or number >= self.low) and (self.high is None or number <= self.high)


def parse_query_selection(spec: str) -> QuerySelection:
    """A :class:`QuerySelection` from ``FIELD=VALUE``, ``LOW-HIGH`` or ``@FILE``."""
    text = spec.strip()
    if text.startswith("@"):
        path = Path(text[1:])
        ids = frozenset(line.strip() for _, line in read_text_lines(path) if line.strip())
        if not ids:
            raise InputError("no query ids in the file", path=path, hint="list the query ids one a line")
        return QuerySelection(spec, ids=ids)
    if (match := _RANGE.match(text)) is not None and (match.group(1) or match.group(2)):
        low = int(match.group(1)) if match.group(1) else None
        high = int(match.group(2)) if match.group(2) else None
        if low is not None and high is not None and low > high:
            raise InputError(f"query range {spec!r} is empty (low above high)", hint=_SELECTION_HINT)
        return QuerySelection(spec, low=low, high=high)
    name, sep, value = text.partition("=")
    if sep and name.strip() and value.strip():
        return QuerySelection(spec, field=name.strip(), value=value.strip())
    raise InputError(f"cannot read the query selection {spec!r}", hint=_SELECTION_HINT)


def measure_aliases(measure: str) -> tuple[str, ...]:
    """``measure`` and the name the other convention gives it (``ndcg@10`` <-> ``ndcg_cut_10``)."""
    alias = trec_eval_alias(measure)
    return (measure,) if alias is None or alias == measure else (measure, alias)


def load_query_scores(
    paths: Sequence[str | Path] | str | Path,
    measure: str,
    *,
    queries: QuerySelection | None = None,
) -> QueryScores:
    """The systems x queries matrix of ``measure`` from the files (or folders) ``paths``.

    Every system must have a distinct name across the files. Queries not scored for every system are
    dropped (counted in ``dropped``); none left is an error.
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise InputError("no score files given", hint="give trec_eval -q output or realrecall results")
    systems: dict[str, dict[str, float]] = {}
    origins: dict[str, str] = {}
    for path in _files(items):
        for name, values in _read_file(path, measure, queries).items():
            if name in systems:
                raise InputError(
                    f"system {name!r} is in {origins[name]} and in {path}",
                    path=path,
                    hint="give each system once (rename a run, or leave one file out)",
                )
            systems[name], origins[name] = values, str(path)
    where = ", ".join(str(p) for p in items)
    if not systems:
        raise InputError(
            f"no scores of {measure!r}" + (f" on the queries {queries.text!r}" if queries else ""),
            path=where if len(items) == 1 else None,
            hint="check --measure (e.g. ndcg@10 or ndcg_cut_10) and the query selection",
        )
    names = tuple(systems)
    shared = set.intersection(*(set(values) for values in systems.values()))
    every = set().union(*(set(values) for values in systems.values()))
    if not shared:
        raise InputError(
            "no query was scored for every system", hint="score every system on the same queries"
        )
    ids = tuple(sorted(shared, key=_id_order))
    matrix = np.array([[systems[name][q] for q in ids] for name in names], dtype=np.float64)
    return QueryScores(measure, names, ids, matrix.reshape(len(names), len(ids)), len(every) - len(shared))


def _files(items: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            if not found:
                raise InputError("folder holds no score file", path=path, hint="give a folder of score files")
            files += found
        else:
            files.append(path)
    return files


def _read_file(path: Path, measure: str, queries: QuerySelection | None) -> dict[str, dict[str, float]]:
    kind = _kind(path)
    if kind == "trec_eval":
        for name in measure_aliases(measure):
            scores = read_trec_eval_scores(path, name)
            if scores:
                return {
                    system: {q: v for q, v in values.items() if queries is None or queries.keeps(q, None)}
                    for system, values in scores.items()
                }
        return {}
    if kind == "results":
        result = load_results(path)
        records: Sequence[QueryResult] = result.queries
        name = distinct_labels([result])[0]
    else:
        records = read_per_query(path)
        name = path.stem
    return {name: _record_values(records, measure, queries, path)}


def _record_values(
    records: Sequence[QueryResult], measure: str, queries: QuerySelection | None, path: Path
) -> dict[str, float]:
    names = measure_aliases(measure)
    # Query ids repeat across gold sets of one file (a real and a synthetic q1): then the set names it.
    repeated = len({r.query_id for r in records}) < len(records)
    values: dict[str, float] = {}
    for record in records:
        if queries is not None and not queries.keeps(record.query_id, record):
            continue
        found = next((record.metrics[name] for name in names if name in record.metrics), None)
        if found is None:
            continue
        key = f"{record.gold_set}/{record.query_id}" if repeated else record.query_id
        if key in values:
            raise InputError(f"query {key!r} is given twice", path=path, hint="give each query once")
        values[key] = float(found)
    return values


def _kind(path: Path) -> str:
    """``results`` (one JSON object), ``per_query`` (JSON Lines) or ``trec_eval`` (text)."""
    for _, line in read_text_lines(path):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("{"):
            return "trec_eval"
        try:
            record: Any = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return "results"  # an object spread over lines (its reader names what is wrong)
        return "per_query" if isinstance(record, Mapping) and "query_id" in record else "results"
    raise InputError("empty score file", path=path, hint="give trec_eval -q output or realrecall results")


def _id_order(query_id: str) -> tuple[int, int, str]:
    # Numeric ids in number order (trec_eval's qids), then the rest by text.
    return (0, int(query_id), "") if query_id.isdigit() else (1, 0, query_id)

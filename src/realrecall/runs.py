"""Runs: what a retriever returned for each query, in the order trec_eval ranks it.

A run comes from ranked lists (their order is kept) or from scores. Scored runs are ordered as
trec_eval 10 orders them: score descending compared as float64 (not float32 like trec_eval 9 and
pytrec_eval), ties broken by passage id descending, bytewise (``strcmp`` on UTF-8, which is the same
order as comparing Python strings by code point).

``load_run`` reads TREC run files (exactly as trec_eval 10 does) and JSON Lines runs; the formats are
described in ``realrecall.formats.trec_runs`` and ``realrecall.formats.jsonl``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.bulk import bulk_step, small_pages
from realrecall.errors import InputError
from realrecall.formats import jsonl, sniff_run, trec_fast, trec_runs
from realrecall.formats.trec_fast import columns as run_columns
from realrecall.formats.trec_fast.arrow import (
    compute,
    compute_module,
    flags,
    indices,
    numbers,
    python_strings,
    strings,
    take_rows,
)
from realrecall.formats.trec_fast.columns import RunColumns

__all__ = ["Run", "load_run"]


@dataclass(frozen=True, eq=False)
class Run:
    """Retrieved passage ids per query, with scores when the run has them.

    Build one with ``Run.from_scores`` or ``Run.from_lists`` (or ``load_run``); the constructor is
    internal. Scores are kept per query in a flat float64 array so scoring never loops over them in
    Python.
    """

    name: str
    ordered: bool
    """True when the run came from ranked lists: the given order is the ranking."""
    _dicts: dict[str, dict[str, float]] | None = field(repr=False)
    """Per query, passage id -> score, or -> position in the query's slice of ``_scores`` when
    ``_positional`` (positions are small cached ints: no float object per passage). Plain dicts:
    ``rank_judgments`` looks passages up with ``dict.get`` mapped in C. None for a run read into
    columns (``_columns``) until something asks for ``_docs``."""
    _row_index: Mapping[str, int] | None = field(repr=False)
    """Query id -> row (see ``_row``); None for a run read into columns until something asks."""
    _scores: np.ndarray = field(repr=False)
    """float64 scores of all queries end to end (in ``_docs`` order), then NaN padding as long as the
    longest query, so a window of any query's length can start at any query."""
    _offsets: np.ndarray = field(repr=False)
    _positional: bool = field(default=False, repr=False)
    _columns: RunColumns | None = field(default=None, repr=False)
    """A big TREC file's passage ids as Arrow strings with their fingerprints (see ``_positions``):
    no Python object per result, so reading and scoring stay near the C parser's speed."""
    _prints: np.ndarray | None = field(default=None, repr=False)
    """The columns' fingerprints then zeros as long as the longest query, as ``_scores`` is padded."""

    @classmethod
    def from_scores(cls, scores: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
        """A run from ``{query_id: {passage_id: score}}``; higher scores rank first (trec_eval order)."""
        docs = {_query_id(qid): dict(_scores_of(qid, per_query)) for qid, per_query in scores.items()}
        return cls._build(docs, name=name, ordered=False)

    @classmethod
    def _borrow_scores(cls, scores: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
        """A run over the caller's own dicts, not copied: only for a run that lives inside one call.

        ``score`` given plain dicts uses it, so scoring them never pays for copying every entry.
        """
        docs: dict[str, dict[str, float]]
        if type(scores) is dict and _plain_query_dicts(scores):
            docs = scores  # checked in C-level passes: nothing to copy or convert
        else:
            docs = {
                _query_id(qid): per_query if type(per_query) is dict else dict(_scores_of(qid, per_query))
                for qid, per_query in scores.items()
            }
        return cls._build(docs, name=name, ordered=False)

    @classmethod
    def from_lists(cls, ranked: Mapping[str, Sequence[str]], *, name: str = "run") -> Run:
        """A run from ``{query_id: [passage_id, ...]}``, best first; each list keeps its order."""
        docs: dict[str, dict[str, float]] = {}  # positions, as ints (see ``_docs``)
        for qid, ids in ranked.items():
            if isinstance(ids, str):
                raise InputError(
                    f"ranked list of query {qid!r} is a string, not a list of passage ids",
                    hint="give a list such as ['p1', 'p2']",
                )
            n = len(ids)
            per_query: dict[str, float] = dict(zip(ids, range(n), strict=True))
            if len(per_query) != n:
                raise InputError(
                    f"query {qid!r} lists passage {_first_duplicate(ids)!r} twice",
                    hint="a ranked list names each passage once",
                )
            docs[_query_id(qid)] = per_query
        lengths = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        # Minus the position is a score that reproduces each list's order with no ties.
        flat = (starts - np.arange(int(lengths.sum()), dtype=np.int64)).astype(np.float64)
        return cls._build_positional(docs, flat, name=name, ordered=True)

    @classmethod
    def _build(cls, docs: dict[str, dict[str, float]], *, name: str, ordered: bool) -> Run:
        offsets, longest = _offsets(docs)
        total = int(offsets[-1])
        try:
            # The padding comes in the same pass: no second 80 MB array for 10M scores.
            padded = np.fromiter(
                chain(chain.from_iterable(map(dict.values, docs.values())), repeat(math.nan, longest)),
                dtype=np.float64,
                count=total + longest,
            )
        except (TypeError, ValueError):
            qid, pid, value = _first_bad_score(docs)
            raise InputError(
                f"score of passage {pid!r} in query {qid!r} is not a number: {value!r}",
                hint="scores must be int or float",
            ) from None
        nan = np.isnan(padded[:total])
        if nan.any():
            position = int(np.flatnonzero(nan)[0])
            row = int(np.searchsorted(offsets, position, side="right")) - 1
            qid = list(docs)[row]
            pid = list(docs[qid])[position - int(offsets[row])]
            raise InputError(f"score of passage {pid!r} in query {qid!r} is NaN", hint="give a real number")
        row_of = dict(zip(docs, range(len(docs)), strict=True))
        return cls(
            name=name, ordered=ordered, _dicts=docs, _row_index=row_of, _scores=padded, _offsets=offsets
        )

    @classmethod
    def _build_positional(
        cls, docs: dict[str, dict[str, float]], flat: np.ndarray, *, name: str, ordered: bool
    ) -> Run:
        """A run whose dicts map ids to positions 0..n-1 of their query's scores in ``flat``."""
        offsets, padded = _layout(docs)
        padded[: int(offsets[-1])] = flat
        row_of = dict(zip(docs, range(len(docs)), strict=True))
        return cls(
            name=name,
            ordered=ordered,
            _dicts=docs,
            _row_index=row_of,
            _scores=padded,
            _offsets=offsets,
            _positional=True,
        )

    @classmethod
    @small_pages  # two fresh 80 MB arrays for 10M results (see realrecall.bulk)
    def _from_columns(cls, columns: RunColumns, *, name: str) -> Run:
        """A run over a TREC file read into columns: positional, its dicts built only if asked for."""
        longest = int(np.diff(columns.offsets).max())
        padded = np.concatenate([columns.scores, np.full(longest, np.nan)])
        # The columns' own scores and fingerprints would be second copies (80 MB each for 10M results):
        # views of the padded arrays replace them.
        prints = np.concatenate([columns.fingerprints, np.zeros(longest, dtype=columns.fingerprints.dtype)])
        n = len(columns.scores)
        columns = replace(columns, scores=padded[:n], fingerprints=prints[:n])
        return cls(
            name=name,
            ordered=False,
            _dicts=None,
            _row_index=None,  # scoring finds rows in Arrow (``_rows_of``): no Python string per query
            _scores=padded,
            _offsets=columns.offsets,
            _positional=True,
            _columns=columns,
            _prints=prints,
        )

    @property
    def _docs(self) -> dict[str, dict[str, float]]:
        """Per query, passage id -> score or position (see ``_dicts``), built once from the columns."""
        if self._dicts is None:
            columns = self._required_columns()
            ids = python_strings(columns.passage_ids)
            bounds = columns.offsets.tolist()
            docs: dict[str, dict[str, float]] = {
                qid: dict(zip(ids[begin:end], range(end - begin), strict=True))
                for qid, begin, end in zip(
                    python_strings(columns.query_ids), bounds, bounds[1:], strict=False
                )
            }
            object.__setattr__(self, "_dicts", docs)
            return docs
        return self._dicts

    @property
    def _row(self) -> Mapping[str, int]:
        """Query id -> row of ``_offsets``; for a run read into columns, built the first time it is used."""
        if self._row_index is None:
            ids = python_strings(self._required_columns().query_ids)
            index = dict(zip(ids, range(len(ids)), strict=True))
            object.__setattr__(self, "_row_index", index)
            return index
        return self._row_index

    def _rows_of(self, query_ids: Sequence[str]) -> np.ndarray:
        """int64 row of each query id, -1 for a query the run lacks.

        A run read into columns looks them up in its Arrow column of query ids: a million-query run
        then never makes a Python string and a dict entry per query (about 90 MB of a million).
        """
        if self._row_index is None and self._columns is not None:
            known = self._columns.query_ids
            lookup = compute_module().SetLookupOptions(known)
            rows = compute("index_in", strings(query_ids, known.type), options=lookup)
            return numbers(rows, null=-1).astype(np.int64)
        return np.fromiter(map(self._row.get, query_ids, repeat(-1)), dtype=np.int64, count=len(query_ids))

    def _required_columns(self) -> RunColumns:
        """The columns of a columnar run: a run always has its dicts, its columns or both."""
        if self._columns is None:
            raise RuntimeError(f"run {self.name!r} has neither per-query dicts nor columns")
        return self._columns

    def _segment_ids(self, query_id: str) -> list[str]:
        """Passage ids of a query the run has, in the order of its scores."""
        if self._dicts is None and self._columns is not None:
            row = self._row[query_id]
            begin, end = int(self._offsets[row]), int(self._offsets[row + 1])
            return python_strings(self._columns.passage_ids.slice(begin, end - begin))
        return list(self._docs[query_id])

    def _positions(self, segments: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        """Position of each ``ids[i]`` within query row ``segments[i]`` (float64, NaN when absent).

        Only for a columnar run: fingerprints are compared in blocks of windows (as ``rank_judgments``
        counts ranks), then the ids of the hits are compared as text, which rules out a collision
        (fingerprints are distinct within a query, so a colliding id is simply not retrieved).
        """
        columns = self._required_columns()
        out = np.full(len(ids), np.nan)
        asked = np.flatnonzero(segments >= 0)
        if len(asked) == 0:
            return out
        # Every passage asked for (every judged query in the run): the ids as given, not a copy.
        every = len(asked) == len(ids) and isinstance(ids, list)
        wanted = strings(ids if every else list(map(ids.__getitem__, asked.tolist())))
        prints = run_columns.fingerprints(wanted)
        if self._prints is None:
            raise RuntimeError(f"run {self.name!r} has columns but no fingerprints")
        where = _find_in_segments(self._prints, self._offsets, segments[asked], prints)
        hit = np.flatnonzero(where >= 0)
        # Compared as Arrow strings: no Python string is made per hit.
        found = take_rows(columns.passage_ids, where[hit])
        same = flags(compute("equal", found, compute("take", wanted, indices(hit))))
        hit = hit[same]
        out[asked[hit]] = where[hit] - self._offsets[segments[asked[hit]]]
        return out

    @property
    def query_ids(self) -> tuple[str, ...]:
        """Query ids in the order the run gave them."""
        return tuple(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._row

    def _ids_of(self, query_id: str) -> Sequence[str]:
        """The query's passage ids in the order of its scores (empty if the run lacks the query)."""
        if self._dicts is None:
            return self._segment_ids(query_id) if query_id in self._row else ()
        return tuple(self._dicts.get(query_id, ()))

    def ranked(self, query_id: str) -> Sequence[str]:
        """Passage ids retrieved for ``query_id``, best first (empty if the run lacks the query)."""
        ids = self._ids_of(query_id)
        if not ids:
            return ()
        if self.ordered:
            return tuple(ids)
        # Tuple order (score, id) descending is exactly trec_eval's: score desc, then id desc.
        pairs = sorted(zip(self._query_scores(query_id), ids, strict=True), reverse=True)
        return tuple(pid for _, pid in pairs)

    def ranked_many(self, query_ids: Sequence[str], depth: int) -> list[tuple[str, ...]]:
        """``ranked(q)[:depth]`` for each query (empty for queries the run lacks), in bulk.

        A run read into columns ranks every query at once with a row sort per block of equally long
        queries; a query with tied scores near its top is ranked one by one, ties broken by id.
        """
        if self._columns is None or self.ordered or depth < 1:
            return [tuple(self.ranked(q)[:depth]) if q in self._row else () for q in query_ids]
        rows = self._rows_of(query_ids)
        present = np.flatnonzero(rows >= 0)
        starts = self._offsets[rows[present]]
        lengths = self._offsets[rows[present] + 1] - starts
        keep = np.minimum(lengths, depth)
        chosen = np.full((len(present), depth), -1, dtype=np.int64)
        tied = np.zeros(len(present), dtype=bool)
        buckets = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
        for bucket in present_buckets(buckets):
            members = np.flatnonzero(buckets == bucket)
            width = max(1, int(lengths[members].max()))
            cols = np.arange(width)
            step = max(1, (1 << 22) // width)
            for begin in range(0, len(members), step):
                sel = members[begin : begin + step]
                # NaN past a query's end sorts after every score.
                values = np.where(
                    cols[None, :] < lengths[sel, None],
                    self._scores[starts[sel, None] + cols[None, :]],
                    np.nan,
                )
                order = np.argsort(-values, axis=1, kind="stable")
                ranked = np.take_along_axis(-values, order, axis=1)
                cut = min(depth + 1, width)
                # Equal scores within the top (or just past it) are ordered by id: left to ranked().
                tied[sel] = (ranked[:, 1:cut] == ranked[:, : cut - 1]).any(axis=1)
                take = min(depth, width)
                chosen[sel, :take] = starts[sel, None] + order[:, :take]
        flat = chosen[np.arange(depth)[None, :] < keep[:, None]]
        ids = python_strings(take_rows(self._columns.passage_ids, flat))
        out: list[tuple[str, ...]] = [()] * len(query_ids)
        bounds = np.r_[0, np.cumsum(keep)].tolist()
        for j, (i, begin, end) in enumerate(zip(present.tolist(), bounds, bounds[1:], strict=False)):
            query_id = query_ids[i]
            out[i] = tuple(self.ranked(query_id)[:depth]) if tied[j] else tuple(ids[begin:end])
        return out

    def passage_ids(self, query_id: str) -> Collection[str]:
        """The ids retrieved for ``query_id`` in no particular order (cheap: nothing is ranked)."""
        if self._dicts is None:
            return self._ids_of(query_id)
        return self._dicts.get(query_id, {}).keys()

    def scores(self, query_id: str) -> Mapping[str, float]:
        """``{passage_id: score}`` of one query (in list runs: minus the position, 0 for the first)."""
        return dict(zip(self._ids_of(query_id), self._query_scores(query_id), strict=True))

    def _query_scores(self, query_id: str) -> list[float]:
        """The query's scores as float64 values, in the order of its dict."""
        row = self._row.get(query_id)
        if row is None:
            return []
        scores: list[float] = self._scores[self._offsets[row] : self._offsets[row + 1]].tolist()
        return scores

    def top(self, k: int) -> Run:
        """The run cut to its first ``k`` passages per query (trec_eval ``-M k``)."""
        if k < 1:
            raise InputError(f"cannot cut a run at {k}", hint="give a depth of 1 or more")
        if self.ordered:
            return Run.from_lists({q: list(self._ids_of(q))[:k] for q in self._row}, name=self.name)
        cut = {}
        for qid in self._row:
            scores = self.scores(qid)
            cut[qid] = {pid: scores[pid] for pid in self.ranked(qid)[:k]}
        return Run.from_scores(cut, name=self.name)

    def to_lists(self) -> dict[str, list[str]]:
        """``{query_id: [passage_id, ...]}`` best first."""
        return {qid: list(self.ranked(qid)) for qid in self._row}


def _find_in_segments(
    prints: np.ndarray, offsets: np.ndarray, segments: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """Row of ``targets[i]`` among the rows of query ``segments[i]`` in ``prints``, -1 when absent.

    ``prints`` is padded past its last row by at least the longest query (a window may start anywhere).
    """
    from numpy.lib.stride_tricks import sliding_window_view

    starts = offsets[segments]
    lengths = offsets[segments + 1] - starts
    out = np.full(len(segments), -1, dtype=np.int64)
    buckets = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    for bucket in present_buckets(buckets):
        members = np.flatnonzero(buckets == bucket)
        width = max(1, int(lengths[members].max()))
        windows = sliding_window_view(prints, width)
        step = max(1, (1 << 22) // width)
        for begin in range(0, len(members), step):
            sel = members[begin : begin + step]
            same = windows[starts[sel]] == targets[sel, None]
            if (lengths[sel] != width).any():
                # Cells past a query's end hold the next query's: masked out (a run cut at one depth
                # has none, and skips the mask).
                same &= np.arange(width)[None, :] < lengths[sel, None]
            first = same.argmax(axis=1)
            found = same[np.arange(len(sel)), first]
            out[sel[found]] = starts[sel[found]] + first[found]
    return out


def present_buckets(buckets: np.ndarray) -> list[int]:
    """The distinct values of ``buckets`` (small integers >= 0), ascending: from a count, not a set of a
    Python int per row (3.5 ms for 300,000 judged passages) nor np.unique, which without
    return_index imports numpy.ma (~50 ms of a CLI run)."""
    present: list[int] = np.flatnonzero(np.bincount(buckets)).tolist()
    return present


def _layout(docs: Mapping[str, Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Query offsets into the flat score array, and that array (NaN-filled, with its padding)."""
    offsets, longest = _offsets(docs)
    return offsets, np.full(int(offsets[-1]) + longest, np.nan, dtype=np.float64)


def _offsets(docs: Mapping[str, Mapping[str, Any]]) -> tuple[np.ndarray, int]:
    """Where each query's scores start in the flat array (and where the last ends), and the longest."""
    lengths = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, int(lengths.max()) if len(lengths) else 0


def _plain_query_dicts(scores: dict[Any, Any]) -> bool:
    """Every query id a non-blank str and every value a plain dict, checked without a Python loop."""
    return (
        set(map(type, scores)) <= {str}
        and set(map(type, scores.values())) <= {dict}
        and "" not in scores
        and not any(map(str.isspace, scores))
    )


def _query_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"query id {value!r} must be a non-empty string")
    return value


def _scores_of(query_id: str, value: Any) -> Mapping[str, float]:
    if not isinstance(value, Mapping):
        raise InputError(
            f"scores of query {query_id!r} are a {type(value).__name__}, not a dict",
            hint="give every query {passage_id: score}, or every query a ranked list",
        )
    return value


def _first_duplicate(ids: Iterable[str]) -> str:
    seen: set[str] = set()
    for pid in ids:
        if pid in seen:
            return pid
        seen.add(pid)
    raise AssertionError("no duplicate found")


def _first_bad_score(docs: Mapping[str, Mapping[str, Any]]) -> tuple[str, str, Any]:
    for qid, per_query in docs.items():
        for pid, value in per_query.items():
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                return qid, pid, value
    raise AssertionError("no bad score found")


@bulk_step
def load_run(path: str | Path, *, name: str | None = None, exact: bool = False) -> Run:
    """Read a run file: JSON Lines if named ``*.jsonl`` or its first line starts with ``{``, else a TREC run.

    Raises InputError naming the file, the line and the fix for malformed lines, non-numeric scores,
    duplicate ``(query_id, passage_id)`` pairs (trec_eval stops on them too), and empty files. See
    ``realrecall.formats.trec_runs`` and ``realrecall.formats.jsonl`` for exactly how each is read.
    A TREC run goes through a fast path first (``realrecall.formats.trec_fast``), which reads the
    same run or declines the file; ``exact=True`` reads it line by line alone (slower; the same run).
    """
    p = Path(path)
    run_name = name or p.stem
    kind = sniff_run(p)
    if kind == "jsonl" or p.suffix.lower() in (".jsonl", ".json"):
        ranked, scores = jsonl.read_run(p)
        return Run.from_lists(ranked, name=run_name) if ranked else Run.from_scores(scores, name=run_name)
    fast = None if exact else trec_fast.read_run(p)
    if isinstance(fast, RunColumns):
        return Run._from_columns(fast, name=run_name)
    if fast is not None:
        return Run._build_positional(*fast, name=run_name, ordered=False)
    return Run._build(trec_runs.read_run(p), name=run_name, ordered=False)

"""Runs: what a retriever returned for each query, in the order trec_eval ranks it.

A run comes from ranked lists (their order is kept) or from scores. Scored runs are ordered as
trec_eval 10 orders them: score descending compared as float64 (not float32 like trec_eval 9 and
pytrec_eval), ties broken by passage id descending, bytewise (``strcmp`` on UTF-8, which is the same
order as comparing Python strings by code point).

``load_run`` reads TREC run files (exactly as trec_eval 10 does) and JSON Lines runs; the formats are
described in ``realrecall.formats.trec_runs`` and ``realrecall.formats.jsonl``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.errors import InputError
from realrecall.formats import jsonl, sniff_run, trec_runs

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
    _docs: dict[str, dict[str, float]] = field(repr=False)
    """Per query, passage id -> score, or -> position in the query's slice of ``_scores`` when
    ``_positional`` (positions are small cached ints: no float object per passage). Plain dicts:
    ``rank_judgments`` looks passages up with ``dict.get`` mapped in C."""
    _row: Mapping[str, int] = field(repr=False)
    _scores: np.ndarray = field(repr=False)
    """float64 scores of all queries end to end (in ``_docs`` order), then NaN padding as long as the
    longest query, so a window of any query's length can start at any query."""
    _offsets: np.ndarray = field(repr=False)
    _positional: bool = field(default=False, repr=False)

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
        offsets, padded = _layout(docs)
        total = int(offsets[-1])
        try:
            padded[:total] = np.fromiter(
                chain.from_iterable(map(dict.values, docs.values())), dtype=np.float64, count=total
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
        return cls(name=name, ordered=ordered, _docs=docs, _row=row_of, _scores=padded, _offsets=offsets)

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
            _docs=docs,
            _row=row_of,
            _scores=padded,
            _offsets=offsets,
            _positional=True,
        )

    @property
    def query_ids(self) -> tuple[str, ...]:
        """Query ids in the order the run gave them."""
        return tuple(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._docs

    def ranked(self, query_id: str) -> Sequence[str]:
        """Passage ids retrieved for ``query_id``, best first (empty if the run lacks the query)."""
        per_query = self._docs.get(query_id)
        if per_query is None:
            return ()
        if self.ordered:
            return tuple(per_query)
        # Tuple order (score, id) descending is exactly trec_eval's: score desc, then id desc.
        pairs = sorted(zip(self._query_scores(query_id), per_query, strict=True), reverse=True)
        return tuple(pid for _, pid in pairs)

    def passage_ids(self, query_id: str) -> Collection[str]:
        """The ids retrieved for ``query_id`` in no particular order (cheap: nothing is ranked)."""
        return self._docs.get(query_id, {}).keys()

    def scores(self, query_id: str) -> Mapping[str, float]:
        """``{passage_id: score}`` of one query (in list runs: minus the position, 0 for the first)."""
        per_query = self._docs.get(query_id, {})
        return dict(zip(per_query, self._query_scores(query_id), strict=True))

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
            return Run.from_lists({q: list(self._docs[q])[:k] for q in self._docs}, name=self.name)
        cut = {}
        for qid in self._docs:
            scores = self.scores(qid)
            cut[qid] = {pid: scores[pid] for pid in self.ranked(qid)[:k]}
        return Run.from_scores(cut, name=self.name)

    def to_lists(self) -> dict[str, list[str]]:
        """``{query_id: [passage_id, ...]}`` best first."""
        return {qid: list(self.ranked(qid)) for qid in self._docs}


def _layout(docs: Mapping[str, Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Query offsets into the flat score array, and that array (NaN-filled, with its padding)."""
    lengths = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    longest = int(lengths.max()) if len(lengths) else 0
    return offsets, np.full(int(offsets[-1]) + longest, np.nan, dtype=np.float64)


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


def load_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a run file: JSON Lines if named ``*.jsonl`` or its first line starts with ``{``, else a TREC run.

    Raises InputError naming the file, the line and the fix for malformed lines, non-numeric scores,
    duplicate ``(query_id, passage_id)`` pairs (trec_eval stops on them too), and empty files. See
    ``realrecall.formats.trec_runs`` and ``realrecall.formats.jsonl`` for exactly how each is read.
    """
    p = Path(path)
    run_name = name or p.stem
    kind = sniff_run(p)
    if kind == "jsonl" or p.suffix.lower() in (".jsonl", ".json"):
        ranked, scores = jsonl.read_run(p)
        return Run.from_lists(ranked, name=run_name) if ranked else Run.from_scores(scores, name=run_name)
    fast = trec_runs.read_run_fast(p)
    if fast is not None:
        return Run._build_positional(*fast, name=run_name, ordered=False)
    # The fast reader declines anything unusual; this one reads it, or names the line that is wrong.
    return Run._build(trec_runs.read_run(p), name=run_name, ordered=False)

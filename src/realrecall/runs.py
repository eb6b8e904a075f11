"""Runs: what a retriever returned for each query, in the order trec_eval ranks it.

A run comes from ranked lists (their order is kept) or from scores. Scored runs are ordered as
trec_eval 10 orders them: score descending compared as float64 (not float32 like trec_eval 9 and
pytrec_eval), ties broken by passage id descending, bytewise (``strcmp`` on UTF-8, which is the same
order as comparing Python strings by code point).

Files, chosen by content (see ``load_run``):
- TREC run: ``query_id Q0 passage_id rank score [tag] [anything...]`` per line, read as trec_eval 10
  reads it: ``#`` comment lines, the rank column ignored, fields after the tag ignored, ``#`` allowed
  inside ids, duplicate ``(query_id, passage_id)`` pairs rejected.
- JSON Lines: ``{"query_id", "ranked": ["id", ...]}``, ``{"query_id", "ranked": [{"id", "score"}, ...]}``
  or ``{"query_id", "scores": {"id": score}}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.errors import InputError

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
    """True when the run came from ranked lists: the given order is the ranking, scores are positions."""
    _docs: Mapping[str, Mapping[str, float]] = field(repr=False)
    _row: Mapping[str, int] = field(repr=False)
    _flat_scores: np.ndarray = field(repr=False)
    _offsets: np.ndarray = field(repr=False)

    @classmethod
    def from_scores(cls, scores: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
        """A run from ``{query_id: {passage_id: score}}``; higher scores rank first (trec_eval order)."""
        docs = {_query_id(qid): dict(per_query) for qid, per_query in scores.items()}
        return cls._build(docs, name=name, ordered=False)

    @classmethod
    def from_lists(cls, ranked: Mapping[str, Sequence[str]], *, name: str = "run") -> Run:
        """A run from ``{query_id: [passage_id, ...]}``, best first; each list keeps its order."""
        docs: dict[str, dict[str, float]] = {}
        for qid, ids in ranked.items():
            if isinstance(ids, str):
                raise InputError(
                    f"ranked list of query {qid!r} is a string, not a list of passage ids",
                    hint="give a list such as ['p1', 'p2']",
                )
            n = len(ids)
            # Descending integer scores reproduce the list order with no ties.
            per_query = dict(zip(ids, range(n, 0, -1), strict=True))
            if len(per_query) != n:
                raise InputError(
                    f"query {qid!r} lists passage {_first_duplicate(ids)!r} twice",
                    hint="a ranked list names each passage once",
                )
            docs[_query_id(qid)] = per_query
        return cls._build(docs, name=name, ordered=True)

    @classmethod
    def _build(cls, docs: dict[str, dict[str, float]], *, name: str, ordered: bool) -> Run:
        lengths = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
        offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        try:
            flat = np.fromiter(
                chain.from_iterable(map(dict.values, docs.values())), dtype=np.float64, count=int(offsets[-1])
            )
        except (TypeError, ValueError):
            qid, pid, value = _first_bad_score(docs)
            raise InputError(
                f"score of passage {pid!r} in query {qid!r} is not a number: {value!r}",
                hint="scores must be int or float",
            ) from None
        if np.isnan(flat).any():
            position = int(np.flatnonzero(np.isnan(flat))[0])
            row = int(np.searchsorted(offsets, position, side="right")) - 1
            qid = list(docs)[row]
            pid = list(docs[qid])[position - int(offsets[row])]
            raise InputError(f"score of passage {pid!r} in query {qid!r} is NaN", hint="give a real number")
        row_of = {qid: i for i, qid in enumerate(docs)}
        return cls(name=name, ordered=ordered, _docs=docs, _row=row_of, _flat_scores=flat, _offsets=offsets)

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
        pairs = sorted(((float(s), pid) for pid, s in per_query.items()), reverse=True)
        return tuple(pid for _, pid in pairs)

    def scores(self, query_id: str) -> Mapping[str, float]:
        """``{passage_id: score}`` of one query (in list runs: the rank counted from the end)."""
        return dict(self._docs.get(query_id, {}))

    def top(self, k: int) -> Run:
        """The run cut to its first ``k`` passages per query (trec_eval ``-M k``)."""
        if k < 1:
            raise InputError(f"cannot cut a run at {k}", hint="give a depth of 1 or more")
        if self.ordered:
            return Run.from_lists({q: list(self._docs[q])[:k] for q in self._docs}, name=self.name)
        cut = {}
        for qid, per_query in self._docs.items():
            cut[qid] = {pid: per_query[pid] for pid in self.ranked(qid)[:k]}
        return Run.from_scores(cut, name=self.name)

    def to_lists(self) -> dict[str, list[str]]:
        """``{query_id: [passage_id, ...]}`` best first."""
        return {qid: list(self.ranked(qid)) for qid in self._docs}

    # Internal accessors for the scoring kernel.
    def _segment(self, query_id: str) -> int | None:
        return self._row.get(query_id)


def _query_id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"query id {value!r} must be a non-empty string")
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


# --- reading run files -------------------------------------------------------------------------


def load_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a run file: TREC run format, or JSON Lines when the first content line starts with ``{``.

    Raises InputError naming the file, the line and the fix for malformed lines, non-numeric scores,
    duplicate ``(query_id, passage_id)`` pairs (trec_eval stops on them too), and empty files.
    """
    p = Path(path)
    lines = _read_lines(p)
    run_name = name or p.stem
    first = next(((n, line) for n, line in lines if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        raise InputError(
            "empty run: no result line found",
            path=p,
            hint="a TREC run line reads 'query_id Q0 passage_id rank score tag'",
        )
    if first[1].lstrip().startswith("{"):
        return _load_jsonl(p, lines, run_name)
    return Run.from_scores(_parse_trec(p, lines), name=run_name)


def _read_lines(path: Path) -> list[tuple[int, str]]:
    if not path.exists():
        raise InputError("file not found", path=path, hint="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", path=path, hint="give the path of a run file")
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError("not valid UTF-8", path=path, line=line, hint="save the file as UTF-8") from exc
    # Only "\n" ends a line (as in trec_eval); a trailing "\r" is whitespace to split().
    return list(enumerate(text.split("\n"), start=1))


def _parse_trec(path: Path, lines: Sequence[tuple[int, str]]) -> dict[str, dict[str, float]]:
    runs: dict[str, dict[str, float]] = {}
    for number, line in lines:
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = line.split()
        if len(fields) < 6:
            raise InputError(
                f"expected 6 fields (query_id Q0 passage_id rank score tag), got {len(fields)}",
                path=path,
                line=number,
                hint="a TREC run line reads like '301 Q0 FBIS3-10082 1 12.5 myrun'",
            )
        qid, pid, raw = fields[0], fields[2], fields[4]
        score = _parse_score(raw, path, number)
        per_query = runs.setdefault(qid, {})
        if pid in per_query:
            first = _first_line(lines, qid, pid)
            raise InputError(
                f"passage {pid!r} appears twice for query {qid!r} (first on line {first})",
                path=path,
                line=number,
                hint="trec_eval rejects duplicate results: keep one line per (query, passage)",
            )
        per_query[pid] = score
    return runs


def _first_line(lines: Sequence[tuple[int, str]], qid: str, pid: str) -> int:
    # Only on the error path: a second pass is cheaper than remembering the line of every result.
    for number, line in lines:
        fields = line.split()
        if len(fields) >= 3 and fields[0] == qid and fields[2] == pid and not line.lstrip().startswith("#"):
            return number
    raise AssertionError("duplicate without a first occurrence")


def _parse_score(raw: str, path: Path, number: int) -> float:
    try:
        score = float(raw)
    except ValueError:
        raise InputError(
            f"score {raw!r} is not a number",
            path=path,
            line=number,
            hint="the 5th field is the score, e.g. 12.5 or -2.5E+1",
        ) from None
    if math.isnan(score):
        raise InputError("score is NaN", path=path, line=number, hint="give a real number")
    return score


def _load_jsonl(path: Path, lines: Iterable[tuple[int, str]], name: str) -> Run:
    import json

    scores: dict[str, dict[str, float]] = {}
    ranked: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"malformed JSON ({exc.msg} at column {exc.colno})",
                path=path,
                line=number,
                hint="each line must hold one complete JSON object",
            ) from exc
        if not isinstance(record, dict):
            raise InputError(
                f"expected a JSON object, got {type(record).__name__}",
                path=path,
                line=number,
                hint='write one {"query_id", "ranked"} object per line',
            )
        qid = record.get("query_id")
        if not isinstance(qid, str) or not qid:
            raise InputError('record has no string "query_id"', path=path, line=number, hint="add it")
        if qid in first_line:
            raise InputError(
                f"query {qid!r} appears twice (first on line {first_line[qid]})",
                path=path,
                line=number,
                hint="give one line per query",
            )
        first_line[qid] = number
        kind, value = _jsonl_entry(record, path, number)
        if kind == "ranked":
            ranked[qid] = value
        else:
            scores[qid] = value
    if ranked and scores:
        raise InputError(
            "the run mixes plain ranked lists and scored results",
            path=path,
            hint='give scores for every query, or plain "ranked" lists for every query',
        )
    if ranked:
        return Run.from_lists(ranked, name=name)
    return Run.from_scores(scores, name=name)


def _jsonl_entry(record: Mapping[str, Any], path: Path, number: int) -> tuple[str, Any]:
    if "scores" in record:
        raw = record["scores"]
        if not isinstance(raw, dict):
            raise InputError('"scores" must be an object {"id": score}', path=path, line=number)
        return "scores", {
            _jsonl_id(pid, path, number): _jsonl_score(s, pid, path, number) for pid, s in raw.items()
        }
    if "ranked" not in record:
        raise InputError(
            'record has no "ranked" or "scores"',
            path=path,
            line=number,
            hint='add "ranked": ["id", ...] (best first) or "scores": {"id": score}',
        )
    raw = record["ranked"]
    if not isinstance(raw, list):
        raise InputError('"ranked" must be a list', path=path, line=number)
    if raw and all(isinstance(item, dict) for item in raw):
        per_query: dict[str, float] = {}
        for item in raw:
            pid = _jsonl_id(item.get("id"), path, number)
            if "score" not in item:
                raise InputError(
                    f'ranked entry {pid!r} has no "score"',
                    path=path,
                    line=number,
                    hint='give every entry a "score", or list plain ids',
                )
            if pid in per_query:
                raise InputError(f"passage {pid!r} appears twice", path=path, line=number)
            per_query[pid] = _jsonl_score(item["score"], pid, path, number)
        return "scores", per_query
    ids = [_jsonl_id(pid, path, number) for pid in raw]
    if len(set(ids)) != len(ids):
        raise InputError(
            f"passage {_first_duplicate(ids)!r} appears twice",
            path=path,
            line=number,
            hint="a ranked list names each passage once",
        )
    return "ranked", ids


def _jsonl_id(value: Any, path: Path, number: int) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(
            f"passage id {value!r} must be a non-empty string",
            path=path,
            line=number,
            hint='write ids as JSON strings, e.g. "p12"',
        )
    return value


def _jsonl_score(value: Any, pid: str, path: Path, number: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"score of {pid!r} is not a number: {value!r}", path=path, line=number)
    if isinstance(value, float) and math.isnan(value):
        raise InputError(f"score of {pid!r} is NaN", path=path, line=number, hint="give a real number")
    return float(value)

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
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, islice, pairwise
from operator import ne
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.errors import InputError
from realrecall.files import iter_jsonl

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
    _docs: Mapping[str, Mapping[str, float]] = field(repr=False)
    """Per query, passage id -> score, or -> position in the query's slice of ``_scores`` when
    ``_positional`` (positions are small cached ints: no float object per passage)."""
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
        docs: dict[str, dict[str, int]] = {}
        for qid, ids in ranked.items():
            if isinstance(ids, str):
                raise InputError(
                    f"ranked list of query {qid!r} is a string, not a list of passage ids",
                    hint="give a list such as ['p1', 'p2']",
                )
            n = len(ids)
            per_query = dict(zip(ids, range(n), strict=True))
            if len(per_query) != n:
                raise InputError(
                    f"query {qid!r} lists passage {_first_duplicate(ids)!r} twice",
                    hint="a ranked list names each passage once",
                )
            docs[_query_id(qid)] = per_query
        lengths = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        # Minus the position is a score that reproduces each list's order with no ties.
        flat = -(np.arange(int(lengths.sum()), dtype=np.float64) - starts)
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
        cls, docs: dict[str, dict[str, int]], flat: np.ndarray, *, name: str, ordered: bool
    ) -> Run:
        """A run whose dicts map ids to positions 0..n-1 of their query's scores in ``flat``."""
        offsets, padded = _layout(docs)
        padded[: int(offsets[-1])] = flat
        row_of = dict(zip(docs, range(len(docs)), strict=True))
        return cls(
            name=name,
            ordered=ordered,
            _docs=docs,  # type: ignore[arg-type]
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

    def scores(self, query_id: str) -> Mapping[str, float]:
        """``{passage_id: score}`` of one query (in list runs: minus the position, 0 for the first)."""
        per_query = self._docs.get(query_id, {})
        return dict(zip(per_query, self._query_scores(query_id), strict=True))

    def _query_scores(self, query_id: str) -> list[float]:
        """The query's scores as float64 values, in the order of its dict."""
        row = self._row.get(query_id)
        if row is None:
            return []
        return self._scores[self._offsets[row] : self._offsets[row + 1]].tolist()

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
    if not isinstance(value, str) or not value:
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


# --- reading run files -------------------------------------------------------------------------


def load_run(path: str | Path, *, name: str | None = None) -> Run:
    """Read a run file: JSON Lines if named ``*.jsonl`` or its first line starts with ``{``, else a TREC run.

    Raises InputError naming the file, the line and the fix for malformed lines, non-numeric scores,
    duplicate ``(query_id, passage_id)`` pairs (trec_eval stops on them too), and empty files.
    """
    p = Path(path)
    _check_is_file(p)
    run_name = name or p.stem
    kind = _sniff(p)
    if kind == "empty":
        raise InputError(
            "empty run: no result line found",
            path=p,
            hint="a TREC run line reads 'query_id Q0 passage_id rank score tag'",
        )
    if kind == "jsonl" or p.suffix.lower() in (".jsonl", ".json"):
        return _load_jsonl(p, run_name)
    fast = _parse_trec_fast(p)
    if fast is not None:
        return Run._build_positional(*fast, name=run_name, ordered=False)
    # The fast reader declines anything unusual; this one reads it, or names the line that is wrong.
    return Run._build(_parse_trec(p, _read_lines(p)), name=run_name, ordered=False)


def _check_is_file(path: Path) -> None:
    if not path.exists():
        raise InputError("file not found", path=path, hint="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", path=path, hint="give the path of a run file")


def _sniff(path: Path) -> str:
    """``"jsonl"``, ``"trec"`` or ``"empty"``, from the first line that is not blank or a comment."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            content = line[3:] if number == 0 and line.startswith(_BOM) else line
            content = content.strip()
            if content and not content.startswith(b"#"):
                return "jsonl" if content.startswith(b"{") else "trec"
    return "empty"


_BOM = b"\xef\xbb\xbf"
# Small chunks keep the freshly made strings in the CPU cache: 4 MB chunks read 3x slower.
_CHUNK_BYTES = 1 << 15


def _parse_trec_fast(path: Path) -> tuple[dict[str, dict[str, int]], np.ndarray] | None:
    """Read a plain TREC run in chunks with C-level passes; None for anything that needs a closer look.

    Returns per query ``{passage id: position}`` and the flat float64 scores, in file order. Each line
    end becomes a NUL token, so one ``str.split`` yields 7 tokens a line and a line with a field more
    or less shows up as a misplaced NUL. No list or float object is kept per line. Declines (returns
    None) comments, extra fields, blank lines, bad scores, duplicates and queries split across the file.
    """
    docs: dict[str, dict[str, int]] = {}
    chunks: list[np.ndarray] = []
    last = ""
    with path.open("rb") as handle:
        first = True
        while chunk := handle.readlines(_CHUNK_BYTES):
            data = b"".join(chunk)
            if first and data.startswith(_BOM):
                data = data[3:]
            first = False
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if "\0" in text or "#" in text or _has_non_c_space(text):
                return None
            if not text.endswith("\n"):
                text += "\n"
            tokens = text.replace("\n", " \0 ").split()
            lines = len(tokens) // 7
            if len(tokens) != 7 * lines or tokens[6::7].count("\0") != lines:
                return None
            qids, pids, raw = tokens[0::7], tokens[2::7], tokens[4::7]
            if "_" in text and any("_" in value for value in raw):  # float() takes "1_0", atof does not
                return None
            try:
                scores = np.fromiter(map(float, raw), dtype=np.float64, count=lines)
            except ValueError:
                return None
            if np.isnan(scores).any():
                return None
            chunks.append(scores)
            starts = [0, *compress(range(1, lines), map(ne, islice(qids, 1, None), qids)), lines]
            for begin, end in pairwise(starts):
                qid = qids[begin]
                per_query = docs.get(qid)
                if per_query is None:
                    per_query = docs[qid] = {}
                elif qid != last:
                    return None  # the query came back after others: the exact reader joins it
                before = len(per_query)
                per_query.update(zip(pids[begin:end], range(before, before + end - begin), strict=True))
                if len(per_query) != before + end - begin:
                    return None
                last = qid
    return docs, np.concatenate(chunks) if chunks else np.zeros(0)


# Characters Python's str.split() treats as whitespace but C's isspace() does not (trec_eval splits on
# isspace): a file holding any of them goes to the exact line-by-line reader.
_NON_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_SPACE = re.compile("[ \t\n\v\f\r]+")


def _has_non_c_space(text: str) -> bool:
    if text.isascii():
        return any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _NON_C_SPACE.search(text) is not None


def _has_non_c_space(text: str) -> bool:
    if text.isascii():
        return any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _NON_C_SPACE.search(text) is not None


def _read_lines(path: Path) -> list[tuple[int, str]]:
    data = path.read_bytes()
    if data.startswith(_BOM):
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
        fields = _c_split(line)
        if not fields or fields[0].startswith("#"):
            continue
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


def _c_split(line: str) -> list[str]:
    """Fields of a line split on C whitespace only, as trec_eval splits them."""
    stripped = line.strip(" \t\n\v\f\r")
    return _C_SPACE.split(stripped) if stripped else []


def _first_line(lines: Sequence[tuple[int, str]], qid: str, pid: str) -> int:
    # Only on the error path: a second pass is cheaper than remembering the line of every result.
    for number, line in lines:
        fields = _c_split(line)
        if len(fields) >= 3 and fields[0] == qid and fields[2] == pid:
            return number
    raise AssertionError("duplicate without a first occurrence")


def _parse_score(raw: str, path: Path, number: int) -> float:
    try:
        score = float(raw)
    except ValueError:
        score = math.nan
    if "_" in raw or (math.isnan(score) and raw.lower().lstrip("+-") != "nan"):
        raise InputError(
            f"score {raw!r} is not a number",
            path=path,
            line=number,
            hint="the 5th field is the score, e.g. 12.5 or -2.5E+1",
        )
    if math.isnan(score):
        raise InputError("score is NaN", path=path, line=number, hint="give a real number")
    return score


def _load_jsonl(path: Path, name: str) -> Run:
    scores: dict[str, dict[str, float]] = {}
    ranked: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what='{"query_id", "ranked"}'):
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

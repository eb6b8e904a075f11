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
    """True when the run came from ranked lists: the given order is the ranking, scores are positions."""
    _docs: Mapping[str, Mapping[str, float]] = field(repr=False)
    _row: Mapping[str, int] = field(repr=False)
    _scores: np.ndarray = field(repr=False)
    """float64 scores of all queries end to end (in ``_docs`` order), then NaN padding as long as the
    longest query, so a window of any query's length can start at any query."""
    _offsets: np.ndarray = field(repr=False)

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
        total = int(offsets[-1])
        longest = int(lengths.max()) if len(lengths) else 0
        padded = np.full(total + longest, np.nan, dtype=np.float64)
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
    docs = _parse_trec_fast(p)
    if docs is None:
        # The fast reader declines anything unusual; this one names the line that is wrong.
        docs = _parse_trec(p, _read_lines(p))
    return Run._build(docs, name=run_name, ordered=False)


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
_CHUNK_BYTES = 1 << 22


def _parse_trec_fast(path: Path) -> dict[str, dict[str, float]] | None:
    """Read a plain TREC run (6 fields a line) in chunks with C-level passes; None for anything else.

    Each line end becomes a NUL token, so one ``str.split`` yields 7 tokens a line and a line with a
    field more or less shows up as a misplaced NUL. No list is made per line, which keeps the garbage
    collector out of the way.
    """
    runs: dict[str, dict[str, float]] = {}
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
            if not _add_block(runs, tokens[0::7], tokens[2::7], tokens[4::7], check_underscores="_" in text):
                return None
    return runs


# Characters Python's str.split() treats as whitespace but C's isspace() does not (trec_eval splits on
# isspace): a file holding any of them goes to the exact line-by-line reader.
_NON_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_SPACE = re.compile("[ \t\n\v\f\r]+")


def _has_non_c_space(text: str) -> bool:
    if text.isascii():
        return any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _NON_C_SPACE.search(text) is not None


def _add_block(
    runs: dict[str, dict[str, float]],
    qids: list[str],
    pids: list[str],
    raw: list[str],
    *,
    check_underscores: bool,
) -> bool:
    """Add parsed lines to ``runs``; False when a score or a duplicate needs the exact reader's message."""
    if check_underscores and any("_" in value for value in raw):  # float() takes "1_0", atof does not
        return False
    try:
        scores = list(map(float, raw))
    except ValueError:
        return False
    if any(map(math.isnan, scores)):
        return False
    starts = [0, *compress(range(1, len(qids)), map(ne, islice(qids, 1, None), qids)), len(qids)]
    for begin, end in pairwise(starts):
        block = dict(zip(pids[begin:end], scores[begin:end], strict=True))
        existing = runs.get(qids[begin])
        if existing is None:
            runs[qids[begin]] = block
            if len(block) != end - begin:
                return False
        else:
            before = len(existing)
            existing.update(block)
            if len(existing) != before + end - begin:
                return False
    return True


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

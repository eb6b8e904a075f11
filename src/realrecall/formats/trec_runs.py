"""TREC run files as trec_eval 10 reads them: a fast path for plain files and an exact line reader.

``query_id Q0 passage_id rank score tag [anything...]`` per line, as trec_eval 10's
``get_trec_results.c`` reads it:
- lines whose first field starts with ``#`` are comments; ``#`` inside an id is part of the id;
- fields are split on C whitespace (space, tab, CR, LF, VT, FF) only, so CRLF files read the same;
- at least six fields (shorter lines are malformed); the rank column and fields after the tag are
  ignored;
- scores parse as float64 (``-1e-3``, ``-2.5E+1``); NaN, words and ``1_0`` are errors;
- a ``(query_id, passage_id)`` pair given twice is an error (trec_eval stops on it too).
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Sequence
from itertools import compress, islice, pairwise
from operator import ne
from pathlib import Path

import numpy as np

from realrecall.errors import InputError

__all__ = ["read_run", "read_run_fast"]

_BOM = codecs.BOM_UTF8
# Small chunks keep the freshly made strings in the CPU cache: 4 MB chunks read 3x slower.
_CHUNK_BYTES = 1 << 15


def read_run_fast(path: Path) -> tuple[dict[str, dict[str, float]], np.ndarray] | None:
    """Read a plain TREC run in chunks with C-level passes; None for anything that needs a closer look.

    Returns per query ``{passage id: position}`` and the flat float64 scores, in file order. Each line
    end becomes a NUL token, so one ``str.split`` yields 7 tokens a line and a line with a field more
    or less shows up as a misplaced NUL. No list or float object is kept per line. Declines (returns
    None) comments, extra fields, blank lines, bad scores, duplicates and queries split across the file.
    """
    docs: dict[str, dict[str, float]] = {}  # int positions, typed as the run's scores dicts
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


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """Read a TREC run line by line: slower than ``read_run_fast``, but names the line that is wrong."""
    lines = _read_lines(path)
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

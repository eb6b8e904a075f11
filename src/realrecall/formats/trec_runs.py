"""TREC run files as trec_eval 10 reads them: a fast path for plain files and an exact line reader.

``query_id Q0 passage_id rank score tag [anything...]`` per line, as trec_eval 10's
``get_trec_results.c`` reads it:
- lines whose first field starts with ``#`` are comments; ``#`` inside an id is part of the id;
- fields are split on C whitespace (space, tab, CR, LF, VT, FF) only, so CRLF files read the same;
- at least six fields (shorter lines are malformed); the rank column and fields after the tag are
  ignored;
- scores parse as float64 (``-1e-3``, ``-2.5E+1``); NaN, words and ``1_0`` are errors;
- a ``(query_id, passage_id)`` pair given twice is an error (trec_eval stops on it too).

``realrecall.runs.load_run`` reads a file with a fast path (``realrecall.formats.trec_fast``: Arrow
columns for a big file, chunks split by C-level ``str.split`` for a small one), which returns the same
run or declines the file, and then, for a declined file or with ``exact=True``, with ``read_run``
here: line by line, exact, naming the line that is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from realrecall.errors import InputError
from realrecall.formats.token_chunks import c_split
from realrecall.formats.trec_fast.arrow import BOM

__all__ = ["read_run"]


def _read_lines(path: Path) -> list[tuple[int, str]]:
    data = path.read_bytes()
    if data.startswith(BOM):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError("not valid UTF-8", path=path, line=line, hint="save the file as UTF-8") from exc
    # Only "\n" ends a line (as in trec_eval); a trailing "\r" is whitespace to split().
    return list(enumerate(text.split("\n"), start=1))


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """The exact reader: a TREC run line by line, as trec_eval 10 reads it, naming the line that is wrong."""
    lines = _read_lines(path)
    runs: dict[str, dict[str, float]] = {}
    for number, line in lines:
        fields = c_split(line)
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


def _first_line(lines: Sequence[tuple[int, str]], qid: str, pid: str) -> int:
    # Only on the error path: a second pass is cheaper than remembering the line of every result.
    for number, line in lines:
        fields = c_split(line)
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

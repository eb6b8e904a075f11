"""The chunk readers: a TREC file split a chunk of lines at a time by C-level ``str.split``, or declined.

Quicker than the columns for a small file (nothing to import) and taking what the C parsers decline
(mixed separators, long comment headers), but not what the exact readers must see: lines of
different lengths, bad scores or grades, a judgment or result given twice (``token_chunks`` says which
chunks it cannot take). Each returns what the exact reader would, or None.
"""

from __future__ import annotations

from itertools import compress, islice, pairwise
from operator import ne
from pathlib import Path
from typing import TYPE_CHECKING

from realrecall.formats.token_chunks import token_chunks
from realrecall.grades import MAX_GRADE

if TYPE_CHECKING:
    import numpy as np

__all__ = ["parse_grades", "read_qrels_chunks", "read_run_chunks"]


def read_run_chunks(path: Path) -> tuple[dict[str, dict[str, float]], np.ndarray] | None:
    """Read a plain TREC run in chunks with C-level passes; None for anything that needs a closer look.

    Returns per query ``{passage id: position}`` and the flat float64 scores, in file order. Each line
    end becomes a NUL token, so one ``str.split`` yields each line's fields and a NUL, and a line with
    a field more or less than the others shows up as a misplaced NUL. No list or float object is kept
    per line. Comment and blank lines are skipped, and fields after the tag ignored (``token_chunks``);
    declines (returns None) lines of different lengths, bad scores, duplicates and queries split
    across the file.
    """
    import numpy as np  # here, not at the top: reading qrels needs no numpy

    docs: dict[str, dict[str, float]] = {}  # int positions, typed as the run's scores dicts
    chunks: list[np.ndarray] = []
    last = ""
    with path.open("rb") as handle:
        for chunk in token_chunks(handle, 6):
            if chunk is None:
                return None
            text, tokens, width = chunk
            lines = len(tokens) // width
            qids, pids, raw = tokens[0::width], tokens[2::width], tokens[4::width]
            if "_" in text and "_" in "".join(raw):  # float() takes "1_0", atof does not
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


def read_qrels_chunks(path: Path) -> dict[str, dict[str, int]] | None:
    """``{query_id: {passage_id: grade}}`` of a plain qrels file, or None for anything to look at closer.

    Each line end becomes a NUL token, so one ``str.split`` of a chunk yields 5 tokens a line, and a
    line with a field more or less shows up as a misplaced NUL. A query split across the file is
    joined, as the exact reader joins it.
    """
    judged: dict[str, dict[str, int]] = {}
    rows = 0
    try:
        handle = path.open("rb")
    except OSError:
        return None  # missing, a folder, unreadable: the exact reader says which
    with handle:
        for chunk in token_chunks(handle, 4):
            if chunk is None:
                return None
            _, tokens, width = chunk
            lines = len(tokens) // width
            qids, pids, raw = tokens[0::width], tokens[2::width], tokens[3::width]
            grades = parse_grades(raw)
            if grades is None:
                return None
            rows += lines
            _judge(judged, qids, pids, grades)
    # A judgment given twice (harmless or conflicting) leaves fewer entries than lines: the exact
    # reader tells which.
    if not judged or sum(map(len, judged.values())) != rows:
        return None
    return judged


def _judge(judged: dict[str, dict[str, int]], qids: list[str], pids: list[str], grades: list[int]) -> None:
    # A plain loop: qrels hold a few lines per query, where slicing per query costs more than it saves.
    last, per_query = None, None
    for qid, pid, grade in zip(qids, pids, grades, strict=True):
        if qid != last or per_query is None:
            per_query = judged.get(qid)
            if per_query is None:
                per_query = judged[qid] = {}
            last = qid
        per_query[pid] = grade


def parse_grades(raw: list[str]) -> list[int] | None:
    """The grades as text_grade reads them (ASCII ``[+-]digits``, within MAX_GRADE), or None."""
    joined = "".join(raw)
    # int() also takes "1_0" and non-ASCII digits, which trec_eval's atol does not.
    if not joined.isascii() or "_" in joined:
        return None
    # A qrels file holds a handful of distinct grades: each is parsed once, then looked up (2.4x
    # quicker than int() on every line).
    try:
        value = {text: int(text) for text in set(raw)}
    except ValueError:
        return None
    if value and max(map(abs, value.values())) > MAX_GRADE:
        return None
    return list(map(value.__getitem__, raw))

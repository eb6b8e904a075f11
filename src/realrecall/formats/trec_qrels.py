"""TREC qrels: ``query_id iteration passage_id grade`` per line, as trec_eval 10 reads them.

``#`` comment lines are allowed; TREC qrels carry no query text. The same judgment given twice is
harmless; two different grades for one passage of one query are refused (see ``Judgments``).

Three readers, tried in turn by ``read_judgments``. ``read_qrels_columns`` (big files) reads columns
with pyarrow's CSV reader where it reads the file exactly as trec_eval does (``trec_columns``), and
makes the dicts in C-level passes. ``read_qrels_fast`` splits chunks of lines with one C-level
``str.split`` each (the same split the exact reader does per line, so the fields are the same). Both
skip comment and blank lines and ignore fields after the grade, as the exact reader does, and decline
(return None) any file they cannot take exactly: a line short of fields, lines of different lengths,
a grade that is not ASCII ``[+-]digits`` within range, a judgment given twice, bytes that are not
UTF-8. The exact reader then reads line by line and names the line that is wrong.
"""

from __future__ import annotations

from itertools import islice, repeat
from pathlib import Path
from typing import TYPE_CHECKING

from realrecall.errors import InputError
from realrecall.files import read_text_lines
from realrecall.formats.token_chunks import c_split, token_chunks
from realrecall.grades import MAX_GRADE, text_grade

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Judgments", "read_judgments", "read_qrels_columns", "read_qrels_fast"]

# Below this size the chunked reader is as quick and spares importing pyarrow.
COLUMNS_MIN_BYTES = 8 << 20


class Judgments(dict[str, dict[str, int]]):
    """``{query_id: {passage_id: grade}}`` read line by line from a qrels file.

    The same judgment given twice is harmless (some public qrels repeat lines); two different grades
    for one passage of one query leave the figure to whichever line came last, so they are refused.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._line: dict[tuple[str, str], int] = {}

    def judge(self, query_id: str, passage_id: str, grade: int, line: int) -> None:
        per_query = self.setdefault(query_id, {})
        previous = per_query.get(passage_id)
        if previous is not None and previous != grade:
            raise InputError(
                f"passage {passage_id!r} of query {query_id!r} is graded {grade} here and {previous} "
                f"on line {self._line[query_id, passage_id]}",
                path=self.path,
                line=line,
                hint="keep one grade per (query, passage)",
            )
        if previous is None:
            self._line[query_id, passage_id] = line
        per_query[passage_id] = grade


def read_judgments(path: Path) -> dict[str, dict[str, int]]:
    """``{query_id: {passage_id: grade}}`` of a TREC qrels file, queries in the order they first appear."""
    judged = None
    if path.is_file() and path.stat().st_size >= COLUMNS_MIN_BYTES:
        judged = read_qrels_columns(path)
    if judged is None:
        judged = read_qrels_fast(path)
    return _read_qrels_exact(path) if judged is None else judged


def read_qrels_columns(path: Path) -> dict[str, dict[str, int]] | None:
    """``{query_id: {passage_id: grade}}`` read by pyarrow's CSV reader, or None for anything to look at
    closer (a file it cannot read as trec_eval does, a bad grade, a judgment given twice, a query
    split across the file).

    The dicts are made with no Python code per query: ``dict(islice(pairs, n))`` mapped over the
    queries' row counts, which the query id column gives in one C-level comparison.
    """
    try:
        import pyarrow as pa
    except ImportError:
        return None
    import numpy as np  # here, not at the top: gold sets load without numpy

    from realrecall.bulk import give_back_memory
    from realrecall.formats.trec_columns import query_starts, read_table, scan, take_rows

    layout = scan(path)
    if layout is None or layout.separator is None:
        return None
    # Grades as text, each distinct one read by ``_grades`` (pyarrow's integers take "0x1").
    text, codes = pa.string(), pa.dictionary(pa.int32(), pa.string())
    table = read_table(path, layout, fields=4, columns={0: text, 2: text, 3: codes})
    if table is None:
        return None
    grades = _coded_grades(table.column("3"))
    if grades is None:
        return None
    qids = table.column("0")
    starts = query_starts(qids)
    query_ids: list[str] = take_rows(qids, starts).to_pylist()
    rows = len(qids)
    counts = np.diff(np.r_[starts, rows]).tolist()
    pairs = zip(table.column("2").to_pylist(), grades, strict=True)
    del table, qids, grades
    judged = dict(zip(query_ids, map(dict, map(islice, repeat(pairs), counts)), strict=True))
    del pairs
    if len(judged) != len(query_ids):
        return None  # a query split across the file (its id a key twice): the chunked reader joins it
    # The columns' pages go back now, not after the run is read (190 MB of 1M queries' qrels).
    give_back_memory()
    # A judgment given twice (harmless or conflicting) leaves fewer entries than lines: the exact
    # reader tells which.
    if sum(map(len, judged.values())) != rows:
        return None
    return judged


def _coded_grades(column: pa.ChunkedArray) -> list[int] | None:
    """The grades of a dictionary-coded column, each distinct text read once by ``_grades``."""
    import numpy as np

    values: list[np.ndarray] = []
    for chunk in column.chunks:
        read = _grades(chunk.dictionary.to_pylist())
        if read is None:
            return None
        values.append(np.asarray(read, dtype=np.int64)[chunk.indices.to_numpy(zero_copy_only=False)])
    grades: list[int] = np.concatenate(values).tolist() if values else []
    return grades


def read_qrels_fast(path: Path) -> dict[str, dict[str, int]] | None:
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
            grades = _grades(raw)
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


def _grades(raw: list[str]) -> list[int] | None:
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


def _read_qrels_exact(path: Path) -> Judgments:
    """Line by line: slower than ``read_qrels_fast``, but names the line that is wrong."""
    judgments = Judgments(path)
    for number, line in read_text_lines(path):
        fields = c_split(line)  # C whitespace only, as trec_eval: U+00A0 and the like stay in an id
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 4:
            raise InputError(
                f"expected 4 fields (query_id iteration passage_id grade), got {len(fields)}",
                path=path,
                line=number,
                hint="a TREC qrels line reads like '301 0 FBIS3-10082 1'; JSON Lines gold sets end in .jsonl",
            )
        judgments.judge(fields[0], fields[2], text_grade(fields[3], fields[2], path, number), number)
    if not judgments:
        raise InputError(
            "empty qrels: no judgment found", path=path, hint="add lines 'query_id 0 passage_id grade'"
        )
    return judgments

"""The column readers: a big TREC file read by a C parser into Arrow columns, or declined.

Runs go through pyarrow's CSV reader where ``arrow`` says it reads the file exactly as trec_eval does
(fields parted by one separator byte, none empty), else through pandas' C parser (runs of spaces and
tabs, comment lines skipped by their numbers), imported only then. Qrels go through pyarrow's reader
alone. Either reader returns what the exact reader would (``trec_runs.read_run``,
``trec_qrels.read_qrels``), in the layout the caller keeps, or None: a file it cannot read exactly
(short lines, bad scores or grades, duplicates, bytes the parsers read differently), which a
quicker-to-decline reader or the exact one then reads.
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from realrecall.bulk import give_back_memory, small_pages
from realrecall.formats.token_chunks import C_SPACE_BUT_LF
from realrecall.formats.trec_fast.arrow import (
    BOM,
    Layout,
    compute,
    indices,
    numbers,
    python_strings,
    query_starts,
    read_table,
    scan,
    take_rows,
)
from realrecall.formats.trec_fast.chunks import parse_grades

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["RunColumns", "comment_lines", "fingerprints", "read_qrels_columns", "read_run_columns"]

# Comment lines handed to the C parser to skip, at most; a file with more goes to the chunked reader.
_MAX_COMMENT_LINES = 1 << 20
# "#" after whitespace looked at one by one (the start of a comment line's first field, or of another
# field: an id may start with "#"); a file with more goes to the chunked reader.
_MAX_LOOKBACKS = 1 << 16
# Bytes of the file compared at a time while looking for comment lines (a bounded temporary array).
_SCAN_BYTES = 1 << 24
_MIX = 0x9E3779B97F4A7C15


@dataclass(frozen=True, eq=False)
class RunColumns:
    """A TREC run as columns, grouped by query in first-appearance order (what ``Run`` keeps).

    Rows of query ``i`` are ``offsets[i]:offsets[i + 1]``. ``fingerprints`` are 64-bit hashes of the
    passage ids, distinct within every query (checked on reading): equal ids have equal fingerprints,
    so a lookup by fingerprint finds a passage, and comparing the text then rules out a collision.
    """

    query_ids: pa.Array
    """Arrow strings, one per query in first-appearance order (distinct)."""
    offsets: np.ndarray
    passage_ids: pa.ChunkedArray
    scores: np.ndarray
    fingerprints: np.ndarray


@small_pages
def read_run_columns(path: Path) -> RunColumns | None:
    """Read a TREC run with a C parser into Arrow columns; None for anything it might misread.

    pyarrow's CSV reader, on one thread, takes a file whose fields are parted by one separator byte
    with no field left empty (``arrow``). Other files go to pandas' C parser, which takes runs
    of spaces and tabs and skips comment lines by their numbers. Both end lines at LF, CRLF or CR, as
    trec_eval splits on C whitespace and ends lines at LF: the differences are declined up front by
    ``arrow.scan`` (VT, FF, NUL, a CR not followed by LF), and so is a file that is not UTF-8
    (the exact reader names its line). Short lines show up as an empty tag or another line length,
    bad scores as a parse error, duplicates as equal fingerprints within a query. Another reader then
    reads a declined file, or names the line that is wrong.
    """
    try:
        import pyarrow as pa  # noqa: F401  (pandas, 0.25 s more to import, only if its parser is needed)
    except ImportError:
        return None
    layout = scan(path)
    if layout is None:
        return None
    parsed = _parse_arrow(path, layout) if layout.separator else None
    if parsed is None:
        comments = _comment_lines_of(path) if layout.hashes else []
        if comments is None:
            return None
        parsed = _parse(path, spaces_only=True, skip=comments) if layout.spaces_only else None
        if parsed is None:
            parsed = _parse(path, spaces_only=False, skip=comments)
    if parsed is None:
        return None
    qids, pids, scores = parsed
    del parsed  # it would keep the parsed query column alive through every step below
    # The parser's buffers, then the query column, go back before the next step allocates: given
    # back only at the end, they stacked 250 MB on the peak of reading a 460 MB file.
    give_back_memory()
    grouped = _group_by_query(qids, pids, scores)
    del qids
    if grouped is None:
        return None
    give_back_memory()
    query_ids, offsets, pids, scores = grouped
    prints = fingerprints(pids)
    if not _distinct_within(prints, offsets):
        return None
    give_back_memory()
    return RunColumns(query_ids, offsets, pids, scores, prints)


def _parse_arrow(path: Path, layout: Layout) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray] | None:
    """Query ids, passage ids and scores as pyarrow's CSV reader reads them (``arrow``); None
    when it cannot. The tag is not read: the layout has no empty field, so a line long enough has one."""
    import pyarrow as pa

    table = read_table(path, layout, fields=6, columns={0: pa.string(), 2: pa.string(), 4: pa.float64()})
    if table is None:
        return None
    qids, pids = table.column("0"), table.column("2")
    # numpy joins the chunks on malloc's heap; ``ChunkedArray.to_numpy`` would join them in pyarrow's
    # default pool, which keeps the pages once the array is freed (and import pandas).
    scores = numbers(table.column("4"))
    del table
    if np.isnan(scores).any():
        return None
    return qids, pids, scores


def _parse(
    path: Path, *, spaces_only: bool, skip: Sequence[int] = ()
) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray] | None:
    """Query ids, passage ids and scores as the C parser reads them; None when it cannot.

    ``skip``: numbers (from 0) of the lines to leave out, trec_eval's comment lines.

    A file with no tab is read with one space as the separator, skipping the spaces after it: twice
    as quick as the regex separator (0.75 against 1.5 s on 460 MB), and the same fields. Spaces it
    would read differently (a line of spaces) make an empty field, and the file is read again with the
    regex separator; trailing ones make an empty field after the tag, ignored as every field after it
    is.
    """
    import pandas as pd
    import pyarrow as pa

    text = pd.ArrowDtype(pa.string())
    dtypes: dict[int, Any] = {0: text, 2: text, 4: "float64", 5: text}
    separator: dict[str, Any] = {"sep": " ", "skipinitialspace": True} if spaces_only else {"sep": r"\s+"}
    try:
        frame = pd.read_csv(
            path,
            **separator,
            header=None,
            names=range(6),
            usecols=[0, 2, 4, 5],
            dtype=dtypes,
            na_filter=False,
            quoting=3,  # csv.QUOTE_NONE: a quote is part of an id, as in trec_eval
            skiprows=list(skip) or None,  # counts every line, blank ones too, as the scan does
            # Fields after the tag are dropped, as trec_eval ignores them; without this a first line
            # with more fields than names would make its first field an index.
            index_col=False,
            engine="c",
            encoding="utf-8",
        )
    except (ValueError, IndexError):  # parse errors, bad UTF-8, an empty file: the exact reader's job
        return None
    qids, pids, tags = (frame[c].array.__arrow_array__() for c in (0, 2, 5))
    scores = frame[4].to_numpy(dtype=np.float64)
    del frame
    if len(scores) == 0 or np.isnan(scores).any() or any(map(_any_empty, (qids, pids, tags))):
        return None
    return qids, pids, scores


def _comment_lines_of(path: Path) -> list[int] | None:
    """``comment_lines`` of the file at ``path`` (for pandas, which skips them by number)."""
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return comment_lines(data)


def comment_lines(data: mmap.mmap | bytes) -> list[int] | None:
    """Numbers (from 0) of the lines whose first field starts with ``#``, which trec_eval skips; None
    when there are more than ``_MAX_COMMENT_LINES``, or too many ``#`` after whitespace to look at.

    The file is compared a block at a time: each ``#`` of a block holding one, and the line ends
    before a comment (counted only when one is found). A ``#`` right after a line end starts a
    comment; one after a field's byte is inside an id; one after whitespace is looked at back to its
    line's start.
    """
    view = np.frombuffer(data, dtype=np.uint8)
    start = len(BOM) if bytes(view[: len(BOM)]) == BOM else 0  # the reader skips a BOM
    found: list[int] = []
    lookbacks = 0
    lines_before, counted_to = 0, 0  # line ends in view[:counted_to]
    begin = data.find(b"#")
    while begin >= 0:
        begin -= begin % _SCAN_BYTES  # the block holding the next "#" (memchr to it)
        end = min(begin + _SCAN_BYTES, len(view))
        marks = np.flatnonzero(view[begin:end] == 35) + begin
        before = view[np.maximum(marks - 1, 0)]
        first = (before == 10) | (marks == start)
        spaced = np.isin(before, _SPACE_BUT_LF) & (marks > start)
        lookbacks += int(np.count_nonzero(spaced))
        if lookbacks > _MAX_LOOKBACKS:
            return None
        for mark in marks[spaced].tolist():
            line_start = max(data.rfind(b"\n", 0, mark) + 1, start)
            first[np.searchsorted(marks, mark)] = not bytes(view[line_start:mark]).strip(_SPACE_BYTES)
        comments = marks[first]
        if len(comments):  # not only "#" inside ids (segment ids hold one on every line)
            lines_before += _line_ends(view, counted_to, begin)
            ends = np.flatnonzero(view[begin:end] == 10) + begin
            found.extend((lines_before + np.searchsorted(ends, comments)).tolist())
            if len(found) > _MAX_COMMENT_LINES:
                return None
            lines_before, counted_to = lines_before + len(ends), end
        begin = data.find(b"#", end)
    return found


def _line_ends(view: np.ndarray, begin: int, end: int) -> int:
    """How many LF bytes ``view[begin:end]`` holds, counted a block at a time (a bounded temporary)."""
    return sum(
        int(np.count_nonzero(view[at : min(at + _SCAN_BYTES, end)] == 10))
        for at in range(begin, end, _SCAN_BYTES)
    )


# Whitespace within a line, as bytes and as byte values.
_SPACE_BYTES = C_SPACE_BUT_LF.encode()
_SPACE_BUT_LF = np.frombuffer(_SPACE_BYTES, dtype=np.uint8)


def _lengths(chunk: pa.Array) -> np.ndarray:
    """Byte lengths of a string array's values, read from its offsets buffer."""
    wide = str(chunk.type) == "large_string"
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32)
    return np.diff(offsets[chunk.offset : chunk.offset + len(chunk) + 1]).astype(np.int64)


def _any_empty(column: pa.ChunkedArray) -> bool:
    # A line with five fields leaves the tag empty (trec_eval wants six).
    return column.null_count > 0 or any(bool((_lengths(c) == 0).any()) for c in column.chunks if len(c))


def _any_blank(ids: pa.Array) -> bool:
    """Whether an id is empty or all whitespace, as Python strips it (the exact reader's notion).

    Ids of printable ASCII bytes other than the space (most files) are none: that is read off the bytes.
    Any other byte (whitespace, control, UTF-8) and the ids are checked as Python strings, 0.03 s of
    100,000 (in C: a generator took 0.08 s a million).
    """
    if all(map(_printable_ascii, filter(len, ids.chunks if hasattr(ids, "chunks") else [ids]))):
        return False
    return "" in map(str.strip, python_strings(ids))


def _printable_ascii(chunk: pa.Array) -> bool:
    """Every value of a string array non-empty and of bytes ``!`` to ``~`` alone."""
    wide = str(chunk.type) == "large_string"
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32)
    bounds = offsets[chunk.offset : chunk.offset + len(chunk) + 1]
    if (np.diff(bounds) <= 0).any():
        return False
    data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[int(bounds[0]) : int(bounds[-1])]
    return not bool(((data < 0x21) | (data > 0x7E)).any())


def _distinct(ids: pa.Array) -> bool:
    """Whether no id comes twice: told by their fingerprints when those are all different (equal ids
    have equal fingerprints), else by a set of them as Python strings (a collision, or an id twice)."""
    prints = np.sort(fingerprints(ids))
    if not (prints[1:] == prints[:-1]).any():
        return True
    names = python_strings(ids)
    return len(set(names)) == len(names)


def _group_by_query(
    qids: pa.ChunkedArray, pids: pa.ChunkedArray, scores: np.ndarray
) -> tuple[pa.Array, np.ndarray, pa.ChunkedArray, np.ndarray] | None:
    """Rows grouped by query in first-appearance order; a query split across the file is joined."""

    n = len(qids)
    starts = query_starts(qids)
    heads = take_rows(qids, starts)
    if _any_blank(heads):
        return None
    if _distinct(heads):
        return heads, np.r_[starts, n].astype(np.int64), pids, scores
    # A query came back after others: trec_eval reads them as one, so sort rows by first appearance.
    encoded = compute("dictionary_encode", qids.combine_chunks())
    codes = numbers(encoded.indices)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(encoded.dictionary))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return encoded.dictionary, offsets, compute("take", pids, indices(order)), scores[order]


def fingerprints(ids: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """64-bit hashes of UTF-8 ids from their 8-byte words (vectorised): equal ids hash alike."""
    chunks = ids.chunks if hasattr(ids, "chunks") else [ids]
    parts = [_fingerprint_chunk(chunk) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


# Low-order byte masks of the first word of an id shorter than 8 bytes (little-endian words).
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _fingerprint_chunk(chunk: Any) -> np.ndarray:
    lengths = _lengths(chunk)
    wide = str(chunk.type) == "large_string"
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32)
    begin, end = int(offsets[chunk.offset]), int(offsets[chunk.offset + len(chunk)])
    data = np.zeros(end - begin + 8, dtype=np.uint8)
    data[: end - begin] = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[begin:end]
    # words[i] is the 8 bytes from byte i on (an unaligned view: no copy).
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    starts = offsets[chunk.offset : chunk.offset + len(chunk)].astype(np.int64) - begin
    ends = starts + lengths
    with np.errstate(over="ignore"):
        h: np.ndarray = _mix(words[starts] & _MASKS[np.minimum(lengths, 8)])
        h ^= lengths.astype(np.uint64) * np.uint64(_MIX)
        # Every further 8-byte word, the last one ending with the id (it may overlap the one before).
        step = 1
        longer = np.flatnonzero(lengths > 8)
        while len(longer):
            if len(longer) == len(h):  # every id has one more word: whole arrays, not gathered by index
                h ^= words[np.minimum(starts + 8 * step, ends - 8)]
                h = _mix(h)
                h += np.uint64(step)
            else:
                at = np.minimum(starts[longer] + 8 * step, ends[longer] - 8)
                h[longer] = _mix(h[longer] ^ words[at]) + np.uint64(step)
            step += 1
            longer = longer[lengths[longer] > 8 * step]
    return h


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place (``x`` is always a fresh array here): every input bit reaches
    every output bit."""
    shifted = x >> np.uint64(30)
    x ^= shifted
    x *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(x, np.uint64(27), out=shifted)
    x ^= shifted
    x *= np.uint64(0x94D049BB133111EB)
    np.right_shift(x, np.uint64(31), out=shifted)
    x ^= shifted
    return x


def _distinct_within(values: np.ndarray, offsets: np.ndarray) -> bool:
    """True when no two values of one query's rows are equal (one sort of values mixed with the query).

    Equal values of different queries could only meet by a 64-bit collision, which declines a file
    the exact reader then reads: never a wrong answer.
    """
    if len(values) < 2:
        return True
    lengths = np.diff(offsets)
    if (lengths == lengths[0]).all():
        # Queries of one length (a run cut at a depth): sort each query's row of a matrix.
        rows = np.sort(values.reshape(-1, int(lengths[0])), axis=1)
        return not bool((rows[:, 1:] == rows[:, :-1]).any())
    query = np.repeat(np.arange(len(offsets) - 1, dtype=np.uint64), np.diff(offsets))
    with np.errstate(over="ignore"):
        keys = values + _mix(query + np.uint64(_MIX))
    keys.sort()
    return not bool((keys[1:] == keys[:-1]).any())


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
    layout = scan(path)
    if layout is None or layout.separator is None:
        return None
    # Grades as text, each distinct one read by ``parse_grades`` (pyarrow's integers take "0x1").
    text, codes = pa.string(), pa.dictionary(pa.int32(), pa.string())
    table = read_table(path, layout, fields=4, columns={0: text, 2: text, 3: codes})
    if table is None:
        return None
    grades = _coded_grades(table.column("3"))
    if grades is None:
        return None
    qids = table.column("0")
    starts = query_starts(qids)
    query_ids = python_strings(take_rows(qids, starts))
    rows = len(qids)
    counts = np.diff(np.r_[starts, rows]).tolist()
    pairs = zip(python_strings(table.column("2")), grades, strict=True)
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
    """The grades of a dictionary-coded column, each distinct text read once by ``parse_grades``."""
    values: list[np.ndarray] = []
    for chunk in column.chunks:
        read = parse_grades(python_strings(chunk.dictionary))
        if read is None:
            return None
        values.append(np.asarray(read, dtype=np.int64)[numbers(chunk.indices)])
    grades: list[int] = np.concatenate(values).tolist() if values else []
    return grades

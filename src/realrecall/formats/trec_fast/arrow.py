"""TREC files (runs, qrels) read into Arrow columns by pyarrow's CSV reader, where it reads them exactly
as trec_eval 10 does.

trec_eval splits a line's fields on C whitespace and ends lines at LF only; pyarrow's reader parts
fields on one byte and ends lines at LF, CRLF or CR. The two agree on a file whose fields are parted
by one separator byte (a space, or a tab in a file with no space) with no field left empty, and
which holds none of the bytes they read differently (VT, FF, NUL, a CR not followed by LF).
``scan`` finds that out at memchr speed, and also whether the file is UTF-8 (the exact readers
decode it all) and may hold comment lines. ``read_table`` then reads the columns asked for, or
declines (None) a file another reader must see.
"""

from __future__ import annotations

import codecs
import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from realrecall.formats.token_chunks import c_split

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "Layout",
    "compute",
    "flags",
    "indices",
    "numbers",
    "python_strings",
    "query_starts",
    "read_table",
    "scan",
    "strings",
    "take_rows",
]

BOM = codecs.BOM_UTF8
# Bytes the C parsers read differently from trec_eval (C whitespace they keep in a field, NUL): a
# file holding one goes to another reader. A lone "\r" is checked apart (CRLF files are fine).
_DECLINED_BYTES = (b"\v", b"\f", b"\0")
# Bytes looked at a time for empty fields: a block's two buffers stay in the CPU cache.
_PAIR_BYTES = 1 << 20


@dataclass(frozen=True)
class Layout:
    """What the byte scan of a TREC file found, for choosing its parser."""

    spaces_only: bool
    """No tab: pandas can part fields on a space (quicker than its whitespace pattern)."""
    separator: str | None
    """The one byte parting every two fields (a space, or a tab in a file with no space), and
    starting or ending no line: no field is empty. None when fields are parted by runs of whitespace
    or by both, or a line starts or ends with whitespace."""
    hashes: bool
    """The file holds a ``#``: it may hold comment lines."""


def scan(path: Path) -> Layout | None:
    """The separators of a TREC file and whether it holds a ``#``; None when it is empty, holds a byte
    the C parsers would read differently from trec_eval (memchr speed) or is not UTF-8."""
    with path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if any(data.find(byte) >= 0 for byte in _DECLINED_BYTES):
                return None
            # trec_eval ends lines only at LF: a CR elsewhere is whitespace to it, a line end to pandas.
            if data.find(b"\r") >= 0 and _lone_carriage_returns(data):
                return None
            if not _utf8(data):
                return None
            tabs = data.find(b"\t") >= 0
            separator = " " if not tabs else "\t" if data.find(b" ") < 0 else None
            if separator is not None and _empty_fields(data, ord(separator)):
                separator = None
            return Layout(spaces_only=not tabs, separator=separator, hashes=data.find(b"#") >= 0)


def read_table(
    path: Path, layout: Layout, *, fields: int, columns: dict[int, pa.DataType]
) -> pa.Table | None:
    """``columns`` (field number -> type) of a file as pyarrow's CSV reader reads it; None when it
    cannot take the file exactly as trec_eval reads it (``layout.separator`` is None, a line of
    another length, a value of another type), or the file holds no line.

    ``columns`` holds field 0 (the query id, which tells comment lines); ``fields``: how many a line
    needs (6 for a run, 4 for qrels). Each line should have as many as the first that is not a
    comment: a line with another number is skipped when trec_eval skips it (blank, a comment) and
    declines the file otherwise. A comment line with as many fields is read, then dropped by its
    first field; one whose fields do not convert declines the file.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if layout.separator is None:
        return None
    width = _first_width(path, layout.separator)
    if width is None or width < fields:
        return None
    names = [str(i) for i in range(width)]
    types = {str(number): kind for number, kind in columns.items()}
    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pa_csv.ParseOptions(
                delimiter=layout.separator,
                quote_char=False,  # a quote is part of an id, as in trec_eval
                double_quote=False,
                escape_char=False,
                invalid_row_handler=_skipped_by_trec_eval,
            ),
            convert_options=pa_csv.ConvertOptions(
                include_columns=list(types),
                column_types=types,
                null_values=[],  # "NA", "null", "" are ids (or bad values), never missing values
                strings_can_be_null=False,
                check_utf8=False,  # ``scan`` checked the whole file at once
            ),
            # The C library's malloc, not pyarrow's default pool (mimalloc): that one took fresh
            # pages from the system as the reader went, slow to touch on this project's virtual
            # machines (1.4-1.7 s in the kernel for a 300 MB run, against 0.5-0.6 s). jemalloc was as
            # quick but kept 90 MB of freed pages that ``give_back_memory`` trims from malloc's heap.
            memory_pool=pa.system_memory_pool(),
        )
    except pa.ArrowInvalid:  # a value of another type, a line of another length: another reader's
        return None
    if layout.hashes:
        starts = compute_module().MatchSubstringOptions("#")
        kept = compute("invert", compute("starts_with", table.column("0"), options=starts))
        if not compute("all", kept).as_py():
            table = compute("filter", table, kept)
    return table if table.num_rows else None


def compute(name: str, *args: Any, options: Any = None) -> Any:
    """pyarrow's compute function ``name`` on ``args``, called by name.

    ``pyarrow.compute`` holds the same functions, each wrapped with its docs as the module is imported:
    30-40 ms of CPU, a third of importing pyarrow, paid by every big file read. Its ``call_function``
    is ``pyarrow._compute``'s, which imports in 5 ms. Arrow's own methods that compute (``take``,
    ``filter``, ``equals`` aside) import the module too, so the readers call them here instead.
    """
    return compute_module().call_function(name, list(args), options)


def compute_module() -> Any:
    """``pyarrow._compute``, or the public ``pyarrow.compute`` (which re-exports the same
    ``call_function`` and option classes) should a pyarrow release move the private module."""
    try:
        import pyarrow._compute as module
    except ImportError:
        import pyarrow.compute as module
    return module


def query_starts(query_ids: pa.ChunkedArray) -> np.ndarray:
    """Numbers of the rows where a query id differs from the row before (row 0 first): in a file
    written a query at a time, where each query's rows start."""
    n = len(query_ids)
    changed = flags(compute("not_equal", query_ids.slice(1), query_ids.slice(0, n - 1)))
    starts: np.ndarray = np.r_[0, np.flatnonzero(changed) + 1].astype(np.int64)
    return starts


def take_rows(column: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``column.take(rows)`` chunk by chunk: ``ChunkedArray.take`` first joins every chunk into one
    array, a copy of the whole column (100 MB for 10M passage ids) to pick a few rows."""
    import pyarrow as pa

    lengths = np.fromiter((len(chunk) for chunk in column.chunks), dtype=np.int64, count=column.num_chunks)
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    order = np.argsort(rows, kind="stable")
    ordered = np.asarray(rows, dtype=np.int64)[order]
    cuts = np.searchsorted(ordered, bounds).tolist()
    parts = [
        compute("take", chunk, indices(ordered[begin:end] - bounds[i]))
        for i, (chunk, begin, end) in enumerate(zip(column.chunks, cuts, cuts[1:], strict=False))
        if end > begin
    ]
    if not parts:
        return pa.nulls(0, column.type)  # an empty array; pa.array([]) would import pandas
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return compute("take", pa.concat_arrays(parts), indices(inverse))


def _skipped_by_trec_eval(row: Any) -> str:
    """The CSV reader's word for a line of another length: skip it if trec_eval does, else stop."""
    fields = c_split(row.text)
    return "skip" if not fields or fields[0].startswith("#") else "error"


def _first_width(path: Path, separator: str) -> int | None:
    """Fields of the first line that is not blank or a comment, split on ``separator``."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            if number == 0:
                line = line.removeprefix(BOM)
            fields = line.split()  # bytes split on C whitespace, as trec_eval does
            if fields and not fields[0].startswith(b"#"):
                return len(line.rstrip(b"\r\n").split(separator.encode()))
    return None


def _lone_carriage_returns(data: mmap.mmap) -> int:
    # The arrays borrow the map's buffer; they are gone when this returns, so the map can close.
    view = np.frombuffer(data, dtype=np.uint8)
    cr = view == 13
    return int(np.count_nonzero(cr)) - int(np.count_nonzero(cr[:-1] & (view[1:] == 10)))


def _utf8(data: mmap.mmap) -> bool:
    """Whether the whole file is UTF-8, checked by Arrow in place (SIMD: 0.02 s for 460 MB)."""
    import pyarrow as pa

    bounds = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, bounds, pa.py_buffer(data)])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    finally:
        del whole  # it holds the map's buffer, which must be released before the map closes
    return True


def _empty_fields(data: mmap.mmap, separator: int) -> bool:
    """Whether ``separator`` comes twice in a row, or starts or ends a line anywhere: the only ways
    to an empty field when one byte parts fields.

    A block at a time, into two reused buffers kept in the CPU cache: a clean file has no two
    whitespace (or control) bytes in a row, and only a block holding a pair (CRLF, a blank line) is
    looked at closely. 0.06 s for 460 MB, where whole-block temporaries took 0.45 s.
    """
    view = np.frombuffer(data, dtype=np.uint8)
    start = len(BOM) if bytes(view[: len(BOM)]) == BOM else 0
    if len(view) > start and separator in (view[start], view[-1]):
        return True
    spaced = np.empty(_PAIR_BYTES + 1, dtype=bool)
    pairs = np.empty(_PAIR_BYTES, dtype=bool)
    for begin in range(start, len(view) - 1, _PAIR_BYTES):
        block = view[begin : begin + _PAIR_BYTES + 1]  # one byte more: the pair across blocks
        n = len(block)
        np.less_equal(block, 32, out=spaced[:n])
        np.logical_and(spaced[1:n], spaced[: n - 1], out=pairs[: n - 1])
        if pairs[: n - 1].any() and _empty_field_in(block, separator):
            return True
    return False


def _empty_field_in(block: np.ndarray, separator: int) -> bool:
    at = block == separator
    ends = (block == 10) | (block == 13)
    return bool(((at[1:] & (at[:-1] | ends[:-1])) | (at[:-1] & ends[1:])).any())


# pyarrow imports pandas (0.25 s of CPU) the first time ``pa.array``, ``to_numpy``, ``to_pylist`` or a
# scalar argument checks whether it was given a pandas object. The column readers and a run read into
# columns move values in and out of Arrow with the helpers below instead: numpy views of the buffers
# and Arrow arrays made from buffers, which check nothing of the kind.
_NUMPY_TYPES = {
    "int8": "i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
    "uint8": "u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
    "float": "<f4", "double": "<f8",
}  # fmt: skip


def numbers(array: pa.Array | pa.ChunkedArray, *, null: float | int | None = None) -> np.ndarray:
    """A numeric Arrow array's values as a numpy array (a copy; ``null`` where the array has none)."""
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    dtype = np.dtype(_NUMPY_TYPES[str(array.type)])
    parts = []
    for chunk in filter(len, chunks):
        values = np.frombuffer(
            chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize
        )
        if chunk.null_count:
            if null is None:
                raise RuntimeError(f"{array.type} column with nulls read without a value for them")
            values = np.where(_bits(chunk.buffers()[0], chunk.offset, len(chunk)), values, null)
        parts.append(values)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def flags(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow array without nulls as a numpy bool array."""
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    parts = [_bits(chunk.buffers()[1], chunk.offset, len(chunk)) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    """``length`` bits of an Arrow bitmap from bit ``offset`` (least significant bit first)."""
    first, last = offset // 8, (offset + length + 7) // 8
    packed = np.frombuffer(buffer, dtype=np.uint8, count=last - first, offset=first)
    start = offset - 8 * first
    return np.unpackbits(packed, bitorder="little")[start : start + length].astype(bool)


def indices(values: np.ndarray) -> pa.Array:
    """int64 row numbers as an Arrow array (for ``take``)."""
    import pyarrow as pa

    rows = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])


def strings(values: Sequence[str], kind: pa.DataType | None = None) -> pa.Array:
    """Python strings as an Arrow string array (``kind``: ``pa.string()``, the default, or
    ``pa.large_string()``, which 2 GiB of text needs); a lone surrogate is kept as its bytes, which
    equal no valid id."""
    import pyarrow as pa

    kind = kind or pa.string()
    joined = "".join(values)
    if joined.isascii():
        data = joined.encode("ascii")
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    else:
        encoded = [value.encode("utf-8", "surrogatepass") for value in values]
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    wide = kind == pa.large_string() or len(data) >= 1 << 31  # 32-bit offsets hold 2 GiB of text
    kind = pa.large_string() if wide else kind
    offsets = np.zeros(len(values) + 1, dtype=np.int64 if wide else np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def python_strings(array: pa.Array | pa.ChunkedArray) -> list[str]:
    """An Arrow string array without nulls as Python strings."""
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    out: list[str] = []
    for chunk in chunks:
        out.extend(_chunk_strings(chunk))
    return out


def _chunk_strings(chunk: pa.Array) -> list[str]:
    n = len(chunk)
    if n == 0:
        return []
    wide = str(chunk.type) == "large_string"
    offsets = np.frombuffer(
        chunk.buffers()[1],
        dtype=np.int64 if wide else np.int32,
        count=n + 1,
        offset=chunk.offset * (8 if wide else 4),
    )
    begin, end = int(offsets[0]), int(offsets[-1])
    if end == begin:
        return [""] * n
    raw = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=end - begin, offset=begin).tobytes()
    text = raw.decode("utf-8")
    starts = (offsets[:-1] - begin).tolist()
    ends = (offsets[1:] - begin).tolist()
    if len(text) == len(raw):  # ASCII: a character per byte, so the byte offsets cut the text
        return list(map(text.__getitem__, map(slice, starts, ends)))
    return [raw[a:b].decode("utf-8") for a, b in zip(starts, ends, strict=True)]

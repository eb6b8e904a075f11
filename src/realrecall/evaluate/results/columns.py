"""The column codec of results.json: a gold set's per-query values as columns, and their JSON text.

A million queries' columns are made and written a block at a time, never all Python objects at once.
A column of few distinct values (a metric, a rank, a shared fields record) is a :class:`CodedColumn`:
each distinct value is encoded once and its text repeated. The text is what ``json.dumps`` would
write, in C: the io module writes the file with :func:`results_chunks` and reads it back with
``json.loads``, so the codec needs no reader of its own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, islice, repeat
from json.encoder import encode_basestring
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any

from realrecall.evaluate.results.types import PerQueryColumns, QueryRecords, QueryResult, record_fields

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MAX_CODED_VALUES",
    "CodedColumn",
    "columns_of",
    "listed",
    "listed_blocks",
    "results_chunks",
]


# The distinct values a coded column may hold: their texts are all made before the first row is
# written (a million take about 60 MB). A column with more is written a block at a time.
MAX_CODED_VALUES = 1 << 20


@dataclass(frozen=True, eq=False)
class CodedColumn:
    """A column as its distinct values and, per row, the index of its value (dictionary encoding).

    results.json encodes each distinct value once and repeats its text: a metric column of a million
    queries holds a few dozen distinct values (recall, MRR) or tens of thousands (nDCG), and turning
    every float into text was a third of the time to write the file.
    """

    distinct: Sequence[Any]
    codes: np.ndarray
    """Integers, one per row: ``distinct[codes[i]]`` is row i's value."""

    def __iter__(self) -> Iterator[Any]:
        return map(self.distinct.__getitem__, listed(self.codes))

    @classmethod
    def of_numbers(cls, values: np.ndarray, *, zero_is_null: bool = False) -> CodedColumn | None:
        """``values`` (floats or integers) coded by value, 0 written as null when ``zero_is_null``;
        None when one is negative or -0.0 (sorted by value, -0.0 and 0.0 are one, but their texts
        differ), or when they hold more than ``MAX_CODED_VALUES`` distinct values."""
        import numpy as np

        if np.signbit(values).any():
            return None
        distinct, codes = _distinct_values(values)
        if len(distinct) > MAX_CODED_VALUES:
            return None
        listed: list[Any] = distinct.tolist()
        if zero_is_null and listed and listed[0] == 0:
            listed[0] = None
        # The smallest integers that hold the codes: every column is coded before the first is written.
        narrow = np.min_scalar_type(max(len(listed) - 1, 0))
        return cls(listed, codes.reshape(-1).astype(narrow))


def _distinct_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``: the sorted distinct values (NaNs, all "NaN", one
    value, last) and each value's index among them, with -0.0 read as 0.0.

    Both ways count -0.0 and 0.0 as one value but may keep either sign for it (numpy the one its
    sort puts first, pandas the first seen), so a float column's zeros are made positive first: the
    file is then the same whichever way a column goes.

    A long column goes through pandas' ``factorize``, which hashes where ``np.unique`` sorts: a
    million metric values in 0.01-0.04 s against 0.1-0.13 s, for every column of results.json.
    Shorter ones keep numpy (``_sorted_distinct``): a small evaluation need not import pandas for it.
    """
    if values.dtype.kind == "f":
        values = values + 0.0  # -0.0 + 0.0 is 0.0 in IEEE arithmetic; NaN stays NaN
        binary = _zeros_and_ones(values)
        if binary is not None:
            return binary
    if len(values) < _HASHED_FROM:
        return _sorted_distinct(values)
    import pandas as pd

    codes, distinct = pd.factorize(values, sort=True, use_na_sentinel=False)
    return distinct, codes


_HASHED_FROM = 1 << 18


def _sorted_distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` from a sort of the values and a binary search of each
    among the distinct ones, where np.unique sorts their positions (100,000 nDCG values: 12 ms, not 14-19;
    a plain np.unique imports numpy.ma). NaNs, which sort last, are one value, as in np.unique."""
    import numpy as np

    ordered = np.sort(values)
    first = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    if ordered.dtype.kind == "f" and len(ordered) and np.isnan(ordered[-1]):
        nan = np.isnan(ordered)
        first[1:] &= ~(nan[1:] & nan[:-1])  # a NaN after a NaN is the same value
    distinct = ordered[first]
    return distinct, np.searchsorted(distinct, values)


def _zeros_and_ones(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``np.unique(values, return_inverse=True)`` of a float column holding only 0.0 and 1.0 (recall@k
    and complete@k, most columns of results.json), from two comparisons: sorting a mostly-zero
    column of 100,000 took 14 ms. None for any other column."""
    import numpy as np

    ones = values == 1.0
    n_ones = int(np.count_nonzero(ones))
    if n_ones + int(np.count_nonzero(values == 0.0)) != len(values):
        return None
    present = [value for value, count in ((0.0, len(values) - n_ones), (1.0, n_ones)) if count]
    codes = ones.astype(np.intp) if len(present) == 2 else np.zeros(len(values), dtype=np.intp)
    return np.array(present, dtype=values.dtype), codes


def listed_blocks(values: np.ndarray) -> Iterator[list[Any]]:
    """``values.tolist()`` ``_VALUES_PER_CHUNK`` rows at a time: a million queries' floats as Python
    objects, for five metrics, would take 200 MB at once while results.json is written."""
    return (values[at : at + _VALUES_PER_CHUNK].tolist() for at in range(0, len(values), _VALUES_PER_CHUNK))


def listed(values: np.ndarray) -> Iterator[Any]:
    """``listed_blocks`` one value at a time, handed out in C by ``chain`` (a generator yielding each
    one cost 0.3 s a million)."""
    return chain.from_iterable(listed_blocks(values))


def columns_of(queries: Sequence[QueryResult]) -> PerQueryColumns:
    """The columns of ``queries``: streamed from a :class:`QueryRecords`, else read off each result."""
    if isinstance(queries, QueryRecords):
        return queries.columns()
    metric_names = dict.fromkeys(chain.from_iterable(query.metrics for query in queries))
    core: dict[str, Iterable[Any]] = {
        "query_id": (query.query_id for query in queries),
        "query": (query.query for query in queries),
        "gold": (list(query.gold) for query in queries),
        "origin": (query.origin for query in queries),
        "type": (query.type for query in queries),
        "language": (query.language for query in queries),
        "fields": (record_fields(query.fields) for query in queries),
        "first_relevant_rank": (query.first_relevant_rank for query in queries),
    }
    # map, not a generator expression: each column must keep its own metric name.
    metrics = {
        name: map(methodcaller("get", name), map(attrgetter("metrics"), queries)) for name in metric_names
    }
    return PerQueryColumns(core, metrics)


# Values encoded per piece written: big enough to keep the write calls few, small enough to stay cheap.
_VALUES_PER_CHUNK = 1 << 14


def results_chunks(outline: Mapping[str, Any], tables: Sequence[PerQueryColumns]) -> Iterator[str]:
    """results.json's text in pieces: the outline indented, each per-query column on one line.

    ``outline``: the document with each gold set's ``per_query`` left out; ``tables[i]``: the columns
    of gold set i, written as its last key. ``json.dumps(indent=2)`` runs Python's own encoder over
    every value; the columns (nearly all of a big file) go through the C encoder instead, a block of
    values at a time. Any JSON reader reads the file as an indented one.
    """
    token = f"realrecall-per-query-{uuid.uuid4().hex}"
    document = dict(outline)
    if isinstance(outline.get("gold_sets"), list):
        document["gold_sets"] = [
            {**raw, "per_query": f"{token}-{number}"} if number < len(tables) else raw
            for number, raw in enumerate(outline["gold_sets"])
        ]
    text = json.dumps(document, indent=2, ensure_ascii=False)
    for number, table in enumerate(tables):
        placeholder = f'"{token}-{number}"'
        at = text.index(placeholder)
        indent = text[text.rindex("\n", 0, at) + 1 :].index('"')
        yield text[:at]
        text = text[at + len(placeholder) :]
        yield from _table_chunks(table, indent)
    yield text + "\n"


def _table_chunks(table: PerQueryColumns, indent: int) -> Iterator[str]:
    """``{"query_id": [...], ..., "metrics": {"recall@10": [...]}}``, indented, one column a line."""
    key = json.JSONEncoder(ensure_ascii=False).encode
    pad, inner = "\n" + " " * (indent + 2), "\n" + " " * (indent + 4)
    yield "{"
    for name, values in table.core.items():
        yield f"{pad}{key(name)}: "
        yield from _array_chunks(values)
        yield ","
    yield f'{pad}"metrics": {{'
    for number, (name, values) in enumerate(table.metrics.items()):
        yield f"{',' if number else ''}{inner}{key(name)}: "
        yield from _array_chunks(values)
    yield (pad if table.metrics else "") + "}\n" + " " * indent + "}"


def _array_chunks(values: Iterable[Any]) -> Iterator[str]:
    """One JSON array, on one line, encoded a block of values at a time by the C encoder (a coded
    column's distinct values once each, their texts then repeated)."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    blocks: Iterator[str]
    if isinstance(values, CodedColumn):
        blocks = _coded_blocks(_value_texts(values.distinct, encode), values.codes)
    else:
        rows = iter(values)
        blocks = map(
            partial(_block_text, encode=encode), iter(lambda: list(islice(rows, _VALUES_PER_CHUNK)), [])
        )
    first = True
    for block in blocks:
        yield ("[" if first else ",") + block
        first = False
    yield "[]" if first else "]"


def _coded_blocks(texts: list[str], codes: np.ndarray) -> Iterator[str]:
    """Each block of a coded column's rows as their texts joined by commas.

    ASCII texts of one length (``0.0`` and ``1.0``: recall@k and complete@k, most columns of a file;
    a shared empty record) are gathered by numpy as bytes, a row of the value table per row of the
    column: no Python step per row (a column of 100,000 queries in 1.2 ms, not 3.3). Texts of several
    lengths are joined from Python strings, quicker than cutting a padded table's rows.
    """
    import numpy as np

    width = len(texts[0]) if texts else 0
    listed = ",".join(texts) + ","
    if not texts or len(listed) != len(texts) * (width + 1) or not listed.isascii():
        yield from (",".join(map(texts.__getitem__, block)) for block in listed_blocks(codes))
        return
    table = np.frombuffer(listed.encode("ascii"), dtype=np.uint8).reshape(len(texts), width + 1)
    for at in range(0, len(codes), _VALUES_PER_CHUNK):
        yield table[codes[at : at + _VALUES_PER_CHUNK]].tobytes()[:-1].decode("ascii")  # no last comma


def _block_text(block: list[Any], *, encode: Callable[[Any], str]) -> str:
    """``encode(block)[1:-1]``: a block of a column's values as JSON, without its brackets.

    The columns most rows of a file fill are text (query ids), lists of text (the gold ids) or nulls
    (origin, type, language of qrels queries). Those are joined as text in C, with no encoder pass
    over each value, when no text needs escaping: one pass of the encoder's own string function over
    the joined text tells. Anything else goes through the encoder. Either way the text is the
    encoder's, byte for byte (tests compare them).
    """
    kinds = set(map(type, block))
    quoted = None
    try:
        if kinds == _TEXT:
            quoted = _quoted('","'.join(block), len(block))
        elif kinds == _NULL:
            return ",".join(repeat("null", len(block)))
        elif kinds <= _LISTS and all(block):  # no list empty: '","'.join would write [] as [""]
            listed = _quoted('"],["'.join(map('","'.join, block)), sum(map(len, block)))
            quoted = None if listed is None else f"[{listed}]"
    except TypeError:  # a list holding something else than text
        quoted = None
    return encode(block)[1:-1] if quoted is None else quoted


def _quoted(joined: str, items: int) -> str | None:
    """``joined`` (``items`` strings joined by separators of two quotes each) in quotes, or None when a
    string needs escaping: a quote, a backslash or a control character of its own. Escaping only
    lengthens a text, and the joined text's quotes are the separators' when their count is right."""
    separators = 2 * (items - 1)
    if joined.count('"') != separators or len(encode_basestring(joined)) != len(joined) + 2 + separators:
        return None
    return f'"{joined}"'


_TEXT, _NULL, _LISTS = frozenset({str}), frozenset({type(None)}), frozenset({list, tuple})


def _value_texts(values: Sequence[Any], encode: Callable[[Any], str]) -> list[str]:
    """Each value's JSON text. Numbers (and nulls) are encoded in one call and split at the commas,
    which no number's text holds: one call per value was a Python call each, 0.1-0.2 s for the tens of
    thousands of distinct nDCG values of 100k queries."""
    if set(map(type, values)) <= _NUMBERS:
        listed = encode(list(values))[1:-1]
        return listed.split(",") if listed else []
    return [encode(value) for value in values]


_NUMBERS = frozenset({float, int, type(None)})  # not bool: a subclass of int whose text differs

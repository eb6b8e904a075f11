"""Breaking a gold set down by any of its fields: one average hides everything interesting.

Which fields are sliced when none are named (``calibrate`` and ``compare`` without ``--by``): the ones
``evaluate`` was asked to slice by, if any; else every field of the queries with plain values, except

- the bookkeeping realrecall writes itself (``BOOKKEEPING_FIELDS``: where an imported query came from,
  the language detector's probability, the type rule that fired, a sampled chunk's inclusion
  probability): a slice of them says how realrecall worked, not how the retriever did;
- a field that splits neither the real nor the synthetic queries (one value, or none, across each):
  its slices are the sets themselves (the file an older import named in ``source``, a field only one
  set carries, or one value for all);
- a field with many values for its queries (``too_many_values``): more than ``MAX_SLICE_VALUES``, or
  more than ``FEW_VALUES`` and at least one value for every two queries holding the field. Its slices
  hold one or two queries each (an id, a free-text note, a probability), too small to read.

``--by FIELD`` slices any field, these included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from realrecall.gold import GoldQuery

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BOOKKEEPING_FIELDS",
    "FEW_VALUES",
    "MAX_SLICE_VALUES",
    "group_by_field",
    "group_codes",
    "not_a_default_slice",
    "slice_sort_key",
    "too_many_values",
]

BOOKKEEPING_FIELDS = frozenset(
    {
        "imported_from",  # gold import: the table a query came from
        "imported_rows",  # gold import: its rows there
        "source_rows",  # gold import, in earlier versions: the rows (beside "source", the table)
        "language_detected",  # gold import: the detector's probability for the language it chose
        "type_rule",  # the type rule that labelled a query (type_rules.toml)
        "inclusion_probability",  # generate --sample: the chance the question's chunk was drawn
        "provenance",  # generate: how a synthetic question was made
        "evidence",  # the text that answers a query (formats: evidence)
        "gold_history",  # gold add: who judged which passage when
    }
)
"""Fields realrecall writes on a query for its own bookkeeping: never a slice unless asked for."""

MAX_SLICE_VALUES = 50
"""A field with more values than this is never a default slice."""

FEW_VALUES = 5
"""Up to this many values a field is a default slice however few queries hold it."""


def not_a_default_slice(name: str, values: Sequence[Any], origins: Sequence[str | None]) -> str | None:
    """Why the field ``name`` is not sliced by default, or None when it is.

    ``values``: the field's value on each query (None where a query lacks it); ``origins``: each
    query's origin. The reason is a note for a report when it may surprise (many values), and ``""``
    when it goes without saying.
    """
    if name in BOOKKEEPING_FIELDS:
        return ""
    per_origin: dict[str | None, set[Any]] = {}
    for value, origin in zip(values, origins, strict=True):
        per_origin.setdefault(origin, set()).add(value)
    if all(len(seen) < 2 for seen in per_origin.values()):
        return ""
    present = [value for value in values if value is not None]
    distinct = len(set(present))
    if too_many_values(distinct, len(present)):
        return (
            f"field {name!r} has {distinct} values over {len(present)} queries: not sliced "
            f"(give --by {name} to slice it anyway)"
        )
    return None


def too_many_values(distinct: int, queries: int) -> bool:
    """Whether ``distinct`` values over ``queries`` queries are too many to read as slices."""
    return distinct > MAX_SLICE_VALUES or (distinct > FEW_VALUES and 2 * distinct >= queries)


def group_by_field(queries: Iterable[GoldQuery], field: str) -> dict[Any, list[str]]:
    """Query ids grouped by the value of ``field`` (``None`` groups queries that lack it).

    Unhashable values (lists, objects in metadata) are grouped by their text so that any field can
    be used without a crash.
    """
    groups: dict[Any, list[str]] = {}
    for query in queries:
        value = query.field(field)
        if isinstance(value, list | dict | set):
            value = str(value)
        groups.setdefault(value, []).append(query.query_id)
    return groups


def group_codes(values: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """The groups ``group_by_field`` makes of a field's values, as codes: the distinct values (first
    seen first, unhashable ones as their text) and each value's group among them (intp).

    Two passes in C over the values (a dict of the distinct ones, then a lookup each), not a Python
    call per query: slicing 100,000 queries by a field took 0.3 s that way.
    """
    import numpy as np  # not at import: calibrate's and compare's help need no numpy

    unhashable = [kind for kind in set(map(type, values)) if issubclass(kind, list | dict | set)]
    if unhashable:
        values = [str(value) if isinstance(value, list | dict | set) else value for value in values]
    distinct = dict.fromkeys(values)
    code_of = dict(zip(distinct, range(len(distinct)), strict=True))
    codes = np.fromiter(map(code_of.__getitem__, values), dtype=np.intp, count=len(values))
    return list(distinct), codes


def slice_sort_key(item: tuple[Any, Sequence[str] | int]) -> tuple[int, int, str]:
    """Largest slices first, then by value, with the missing-value slice last (``item``: the value and
    its members, or how many they are)."""
    value, members = item
    size = members if isinstance(members, int) else len(members)
    return (value is None, -size, str(value))

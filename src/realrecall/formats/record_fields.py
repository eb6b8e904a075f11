"""A record's other fields, read-only, with their names shared by every record of the same shape.

A dict holding three fields takes 184 bytes; a gold set of a million queries, each with a few fields
beyond the known ones (``form``, ``source``, a ticket id), spends 184 MB on those dicts alone. Here
the names and their order live in one shared table per shape, and a record keeps only its values
(112 bytes for three). Reading behaves as a dict's does: equal to a dict with the same items, the
same order, ``{**fields}`` and ``dict(fields)`` give a plain dict.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from typing import Any

from realrecall.errors import InputError

__all__ = ["NO_FIELDS", "RecordFields"]


class RecordFields(Mapping[str, Any]):
    """Read-only fields: ``positions`` (name -> index, shared, never written to) and the values."""

    __slots__ = ("_positions", "_values")

    _positions: Mapping[str, int]
    _values: tuple[Any, ...]

    def __init__(self, positions: Mapping[str, int], values: tuple[Any, ...]) -> None:
        if len(positions) != len(values):
            raise InputError(
                f"{len(positions)} field names for {len(values)} values",
                hint="give one value for each name, in the names' order",
            )
        self._positions = positions
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[self._positions[name]]

    def get(self, name: str, default: Any = None) -> Any:
        position = self._positions.get(name)
        return default if position is None else self._values[position]

    def __contains__(self, name: object) -> bool:
        return name in self._positions

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._values)

    # The views iterate the two tuples side by side: Mapping's own look each name up again.
    def items(self) -> ItemsView[str, Any]:
        return _Items(self)

    def values(self) -> ValuesView[Any]:
        return _Values(self)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __hash__(self) -> int:
        # Read-only, so hashable as a frozenset of its items is (an unhashable value raises, as in a
        # tuple); equal mappings in another order hash alike. It lets NO_FIELDS be a field default.
        return hash(frozenset(self.items()))


class _Items(ItemsView[str, Any]):
    __slots__ = ()
    _mapping: RecordFields

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return zip(self._mapping._positions, self._mapping._values, strict=True)


class _Values(ValuesView[Any]):
    __slots__ = ()
    _mapping: RecordFields

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping._values)


NO_FIELDS = RecordFields({}, ())
"""No other field: one shared empty mapping (a million qrels queries each made an empty dict, 64 MB)."""

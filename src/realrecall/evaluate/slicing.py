"""Breaking a gold set down by any of its fields: one average hides everything interesting."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from realrecall.gold import GoldQuery

__all__ = ["group_by_field", "slice_sort_key"]


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


def slice_sort_key(item: tuple[Any, Sequence[str]]) -> tuple[int, int, str]:
    """Largest slices first, then by value, with the missing-value slice last."""
    value, members = item
    return (value is None, -len(members), str(value))

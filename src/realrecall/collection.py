"""An ordered collection whose items have unique string ids: the shape of ``Corpus`` and ``GoldSet``.

Both keep their items in file order (the order reports and ranked lists follow) and look items up by
id; the index and its duplicate check are written once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from realrecall.errors import InputError

__all__ = ["IdIndexed"]

T = TypeVar("T")


class IdIndexed(Generic[T]):
    """``len``, iteration in order, ``id in``, ``[id]`` and ``get(id)`` over items with unique ids.

    A frozen dataclass subclass calls :meth:`_index_items` from ``__post_init__``; the index is not a
    dataclass field, so it stays out of ``==`` and ``repr``.
    """

    _ordered: tuple[T, ...]
    _by_id: Mapping[str, T]  # the items themselves: an int position each took 32 MB a million

    def _index_items(
        self,
        items: tuple[T, ...],
        id_of: Callable[[T], str],
        *,
        what: str,
        path: str | None,
        hint: str,
    ) -> None:
        """Index ``items`` by ``id_of``; a repeated id is an InputError naming it (``what``: "chunk id")."""
        # Built in C (a corpus may hold millions of chunks); the loop runs only to name a duplicate.
        by_id = dict(zip(map(id_of, items), items, strict=True))
        if len(by_id) != len(items):
            seen: set[str] = set()
            for item in items:
                if (item_id := id_of(item)) in seen:
                    raise InputError(f"duplicate {what} {item_id!r}", path=path, hint=hint)
                seen.add(item_id)
        # Frozen dataclasses refuse plain assignment; these two are set once, here.
        object.__setattr__(self, "_ordered", items)
        object.__setattr__(self, "_by_id", by_id)

    def __len__(self) -> int:
        return len(self._ordered)

    def __iter__(self) -> Iterator[T]:
        return iter(self._ordered)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._by_id

    def __getitem__(self, item_id: str) -> T:
        return self._by_id[item_id]

    def get(self, item_id: str) -> T | None:
        """The item with this id, or None."""
        return self._by_id.get(item_id)

    @property
    def ids(self) -> tuple[str, ...]:
        """Every id, in order."""
        return tuple(self._by_id)

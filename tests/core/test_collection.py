"""Corpus and GoldSet are one id-indexed collection (realrecall.collection.IdIndexed)."""

from __future__ import annotations

import pytest

from realrecall.collection import IdIndexed
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.gold import GoldQuery, GoldSet


def chunks(*ids: str) -> tuple[Chunk, ...]:
    return tuple(Chunk(i, f"text of {i}") for i in ids)


def queries(*ids: str) -> tuple[GoldQuery, ...]:
    return tuple(GoldQuery(i, f"question {i}", {"p1": 1}) for i in ids)


@pytest.mark.parametrize(
    ("collection", "items", "ids"),
    [(Corpus, chunks("b", "a", "c"), ("b", "a", "c")), (GoldSet, queries("q2", "q1"), ("q2", "q1"))],
)
def test_both_collections_look_items_up_by_id_in_file_order(collection, items, ids):
    built = collection(items, path="f.jsonl")
    assert isinstance(built, IdIndexed)
    assert len(built) == len(items)
    assert tuple(built) == items
    assert built.ids == ids
    assert ids[0] in built
    assert "missing" not in built
    assert built[ids[-1]] is items[-1]
    assert built.get(ids[-1]) is items[-1]
    assert built.get("missing") is None
    with pytest.raises(KeyError):
        built["missing"]


@pytest.mark.parametrize(
    ("collection", "items", "expected"),
    [
        (Corpus, chunks("a", "b", "a"), "f.jsonl: duplicate chunk id 'a'; make ids unique"),
        (GoldSet, queries("q1", "q1"), "f.jsonl: duplicate query_id 'q1'; make query ids unique"),
    ],
)
def test_a_repeated_id_is_one_line_naming_it(collection, items, expected):
    with pytest.raises(InputError) as info:
        collection(items, path="f.jsonl")
    assert str(info.value) == expected


def test_the_index_is_not_part_of_equality_or_repr():
    assert Corpus(chunks("a")) == Corpus(chunks("a"))
    assert "_positions" not in repr(GoldSet(queries("q1")))

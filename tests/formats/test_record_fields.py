"""RecordFields reads as the dict it stands for: same items, same order, same equality."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.formats.record_fields import NO_FIELDS, RecordFields
from realrecall.gold import GoldQuery

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=5,
)


def _fields(items: dict[str, Any]) -> RecordFields:
    return RecordFields({name: index for index, name in enumerate(items)}, tuple(items.values()))


@given(st.dictionaries(st.text(max_size=6), _values, max_size=6), st.text(max_size=6))
def test_reads_as_the_dict_of_the_same_items(items: dict[str, Any], other: str) -> None:
    fields = _fields(items)

    assert fields == items
    assert items == fields
    assert not fields != items  # noqa: SIM202 (the != operator itself is what is checked)
    assert list(fields) == list(items)
    assert list(fields.keys()) == list(items.keys())
    assert list(fields.items()) == list(items.items())
    assert list(fields.values()) == list(items.values())
    assert len(fields) == len(items) == len(fields.items()) == len(fields.values())
    assert dict(fields) == {**fields} == items
    assert repr(fields) == repr(items)
    assert json.dumps(dict(fields)) == json.dumps(items)
    for name, value in items.items():
        assert name in fields
        assert fields[name] == value
        assert fields.get(name, "absent") == value
        assert (name, value) in fields.items()
    if other not in items:
        assert other not in fields
        assert fields.get(other) is None
        assert fields.get(other, 7) == 7
        with pytest.raises(KeyError):
            fields[other]
        assert fields != {**items, other: 1}


def test_order_does_not_decide_equality_as_for_dicts() -> None:
    assert _fields({"a": 1, "b": 2}) == _fields({"b": 2, "a": 1}) == {"b": 2, "a": 1}
    assert _fields({"a": 1}) != _fields({"a": 2})
    assert _fields({"a": 1}) != [("a", 1)]
    assert _fields({}) == {}


def test_pickles_and_copies_keep_the_items_and_the_shared_table() -> None:
    table = {"form": 0, "source": 1}
    records = [RecordFields(table, ("question", "tickets")), RecordFields(table, ("keywords", "logs"))]

    for copied in (pickle.loads(pickle.dumps(records)), copy.deepcopy(records)):
        assert copied == records
        assert all(isinstance(fields, RecordFields) for fields in copied)
        # One table for both, as in the gold set they came from, not one each.
        assert copied[0]._positions is copied[1]._positions
    assert copy.copy(records[0]) == records[0]


def test_is_read_only_and_refuses_a_mismatch() -> None:
    fields = _fields({"a": 1})
    with pytest.raises(TypeError):
        fields["a"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        fields.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="2 field names for 1 values"):
        RecordFields({"a": 0, "b": 1}, (1,))


def test_hashes_by_its_items_so_the_empty_one_is_a_shared_default() -> None:
    assert hash(_fields({"a": 1, "b": "x"})) == hash(_fields({"b": "x", "a": 1}))
    assert {_fields({"a": 1}), _fields({"a": 1})} == {_fields({"a": 1})}
    with pytest.raises(TypeError):
        hash(_fields({"a": [1]}))  # an unhashable value, as in a tuple
    first = GoldQuery("q1", "question", {"p": 1})
    assert first.metadata == {}
    assert first.metadata is NO_FIELDS
    assert GoldQuery("q2", "question", {"p": 1}).metadata is first.metadata

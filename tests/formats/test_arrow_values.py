"""Values in and out of Arrow without pyarrow's own converters, which import pandas (0.25 s of CPU).

``to_pylist``, ``to_numpy`` and ``pa.array`` are the oracles: the helpers must give what they give,
on sliced, chunked, empty and non-ASCII arrays and arrays with nulls.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

from realrecall.formats.trec_fast.arrow import (  # noqa: E402  (after the skip when pyarrow is absent)
    compute,
    compute_module,
    flags,
    indices,
    numbers,
    python_strings,
    strings,
)

# What the readers take from pyarrow's private ``_compute`` (5 ms to import, against 30-40 ms for the
# public module): a pyarrow release where these stop being the public module's own objects fails here.
PRIVATE_NAMES = ("call_function", "MatchSubstringOptions", "SetLookupOptions")


@pytest.mark.parametrize("name", PRIVATE_NAMES)
def test_the_private_compute_names_are_the_public_ones(name: str) -> None:
    import pyarrow._compute as private

    assert getattr(private, name) is getattr(pc, name)


def test_compute_falls_back_to_the_public_module_when_the_private_one_is_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow._compute", None)  # import now raises
    assert compute_module() is pc
    assert compute("add", pa.array([1, 2]), pa.array([10, 20])).to_pylist() == [11, 22]
    assert compute(
        "starts_with", pa.array(["#a", "b"]), options=compute_module().MatchSubstringOptions("#")
    ).to_pylist() == [True, False]


texts = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6), max_size=40)


@st.composite
def chunked(draw: st.DrawFn, values: st.SearchStrategy) -> tuple[list, object]:
    """Values as a ChunkedArray of a few chunks, some of them slices of a bigger array."""
    items = draw(values)
    cuts = sorted(draw(st.lists(st.integers(0, len(items)), max_size=3)))
    parts = [items[a:b] for a, b in zip([0, *cuts], [*cuts, len(items)], strict=True)]
    chunks = []
    for part in parts:
        pad = draw(st.integers(0, 2))
        whole = pa.array(["x"] * pad + part + ["y"] * pad) if part and isinstance(part[0], str) else None
        chunks.append(whole.slice(pad, len(part)) if whole is not None else pa.array(part, type=pa.string()))
    return items, pa.chunked_array(chunks, type=pa.string())


@given(chunked(texts))
@settings(max_examples=200, deadline=None)
def test_python_strings_are_what_to_pylist_gives(case: tuple[list, object]) -> None:
    items, array = case
    assert python_strings(array) == array.to_pylist() == items


@given(texts, st.booleans())
@settings(max_examples=200, deadline=None)
def test_strings_make_the_array_pa_array_makes(items: list[str], wide: bool) -> None:
    kind = pa.large_string() if wide else pa.string()
    made = strings(items, kind)
    made.validate(full=True)
    assert made.type == kind
    assert made.equals(pa.array(items, type=kind))


def test_a_lone_surrogate_is_kept_as_bytes_that_equal_no_valid_id() -> None:
    made = strings(["a", "\ud800"])
    assert flags(
        pc.equal(made, pa.array(["a", "\ud800".encode("utf-8", "surrogatepass").decode("latin-1")]))
    ).tolist() == [
        True,
        False,
    ]


@given(st.lists(st.integers(-(2**40), 2**40), max_size=50), st.integers(0, 3), st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_numbers_and_indices_round_trip_through_arrow(items: list[int], head: int, tail: int) -> None:
    whole = indices(np.array([7] * head + items + [9] * tail, dtype=np.int64))
    part = whole.slice(head, len(items))
    assert numbers(part).tolist() == part.to_numpy().tolist() == items
    for kind in (pa.int32(), pa.uint8(), pa.float64(), pa.float32()):
        small = [abs(x) % 200 for x in items]
        array = pa.array([1] * head + small, type=kind).slice(head)
        assert numbers(array).tolist() == array.to_numpy().tolist()


@given(st.lists(st.one_of(st.none(), st.integers(0, 100)), max_size=40), st.integers(0, 9))
@settings(max_examples=200, deadline=None)
def test_nulls_take_the_value_given_for_them(items: list[int | None], head: int) -> None:
    array = pa.array([0] * head + items, type=pa.int32()).slice(head)
    assert numbers(array, null=-1).tolist() == [-1 if x is None else x for x in items]


@given(st.lists(st.booleans(), max_size=70), st.integers(0, 13))
@settings(max_examples=200, deadline=None)
def test_flags_are_what_to_numpy_gives(items: list[bool], head: int) -> None:
    array = pa.chunked_array(
        [pa.array([True] * head + items, pa.bool_()).slice(head), pa.array(items[:3], pa.bool_())]
    )
    assert flags(array).tolist() == array.to_numpy().tolist() == items + items[:3]

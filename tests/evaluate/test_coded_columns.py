"""Coded columns (issue 13): results.json writes each distinct value of a metric or rank column once
and repeats its text; the file must be the same, byte for byte, as the values written one by one."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from realrecall.evaluate import evaluate, write_results
from realrecall.evaluate.results import CodedColumn, PerQueryColumns
from realrecall.evaluate.results import columns as results
from realrecall.evaluate.results.columns import results_chunks
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run

# Few distinct values, as metric columns hold, with the awkward ones among them.
floats = st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.20432302652469572, 1e-300, 5e-324, math.inf, math.nan])
some_floats = hnp.arrays(np.float64, st.integers(0, 60), elements=floats)
any_floats = hnp.arrays(np.float64, st.integers(0, 60), elements=st.floats(allow_nan=True, width=64))


def _text(column: Iterable[Any]) -> str:
    """results.json's text for one metric column (the rest of the document is the same either way)."""
    table = PerQueryColumns({}, {"ndcg@10": column})
    return "".join(results_chunks({"gold_sets": [{}]}, [table]))


@given(some_floats)
def test_a_coded_metric_column_writes_the_text_of_its_values(values: np.ndarray) -> None:
    coded = CodedColumn.of_numbers(values)
    assert coded is not None
    assert _text(coded) == _text(values.tolist())
    assert json.dumps(list(coded), allow_nan=True) == json.dumps(values.tolist(), allow_nan=True)


@given(any_floats)
def test_any_float_column_writes_as_listed_coded_or_declined(values: np.ndarray) -> None:
    coded = CodedColumn.of_numbers(values)
    if coded is None:  # a negative value or -0.0
        assert np.signbit(values).any()
        return
    assert _text(coded) == _text(values.tolist())


def test_negative_values_and_negative_zero_are_declined() -> None:
    # Sorted by value, -0.0 and 0.0 are one value, but JSON writes them apart.
    assert CodedColumn.of_numbers(np.array([0.0, -0.0, 1.0])) is None
    assert CodedColumn.of_numbers(np.array([0.5, -0.25])) is None
    assert CodedColumn.of_numbers(np.array([0.0, 0.0])) is not None


def test_ranks_write_zero_as_null() -> None:
    ranks = np.array([0, 3, 1, 0, 10, 3], dtype=np.int64)
    coded = CodedColumn.of_numbers(ranks, zero_is_null=True)
    assert coded is not None
    assert list(coded) == [None, 3, 1, None, 10, 3]
    assert _text(coded) == _text([None, 3, 1, None, 10, 3])
    coded_without_zero = CodedColumn.of_numbers(np.array([2, 1]), zero_is_null=True)
    assert coded_without_zero is not None
    assert list(coded_without_zero) == [2, 1]


def test_codes_are_the_narrowest_integers_that_hold_them() -> None:
    # Every column of a gold set is coded before the first is written: a million queries' codes
    # take 1-2 MB a column, not 8.
    few = CodedColumn.of_numbers(np.tile([0.0, 0.5, 1.0], 1000))
    many = CodedColumn.of_numbers(np.arange(300, dtype=np.float64) / 300)
    assert few is not None
    assert few.codes.dtype == np.uint8
    assert many is not None
    assert many.codes.dtype == np.uint16
    assert list(many) == (np.arange(300) / 300).tolist()


def test_an_empty_column_is_an_empty_array() -> None:
    coded = CodedColumn.of_numbers(np.zeros(0))
    assert coded is not None
    assert list(coded) == []
    assert _text(coded) == _text([])


def test_a_column_of_shared_records_writes_each_rows_record() -> None:
    shared = [{"form": "keywords"}, {"form": "question", "note": "é \u2028"}]
    coded = CodedColumn(shared, np.array([1, 0, 0, 1], dtype=np.uint8))
    assert _text(coded) == _text([shared[1], shared[0], shared[0], shared[1]])


def test_a_column_of_too_many_distinct_values_is_written_a_block_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each distinct value's text is made before the first row is written: past a bound, the column
    # is listed as before, and the file is the same.
    gold = GoldSet(tuple(GoldQuery(f"q{i}", "", {f"p{i}": 1, f"p{i + 1}": 2}) for i in range(40)))
    run = Run.from_scores({f"q{i}": {f"p{j}": float((i * j) % 7) for j in range(45)} for i in range(40)})
    result = evaluate(gold, run=run, k=(10,))
    write_results(result, tmp_path / "coded.json")
    assert CodedColumn.of_numbers(np.arange(5.0)) is not None
    monkeypatch.setattr(results, "MAX_CODED_VALUES", 3)
    assert CodedColumn.of_numbers(np.arange(5.0)) is None
    assert CodedColumn.of_numbers(np.array([1.0, 0.5, 1.0])) is not None
    write_results(result, tmp_path / "listed.json")
    coded, listed = (json.loads((tmp_path / name).read_text()) for name in ("coded.json", "listed.json"))
    coded.pop("created")
    listed.pop("created")
    assert coded == listed
    assert len(set(coded["gold_sets"][0]["per_query"]["metrics"]["ndcg@10"])) > 3


int_columns = hnp.arrays(np.int64, st.integers(0, 60), elements=st.integers(0, 1 << 40))


@given(hnp.arrays(np.float64, st.integers(0, 60), elements=st.sampled_from([0.0, 1.0, -0.0, 0.5])))
def test_a_column_of_zeros_and_ones_gets_the_codes_np_unique_gives(values: np.ndarray) -> None:
    # recall@k and complete@k columns are coded from two comparisons, not a sort: the same answer.
    distinct, codes = np.unique(values + 0.0, return_inverse=True)
    coded_distinct, coded_codes = results._distinct_values(values)
    assert coded_distinct.dtype == distinct.dtype
    assert coded_distinct.tobytes() == distinct.tobytes()
    assert coded_codes.tolist() == codes.reshape(-1).tolist()


@settings(deadline=None)  # the first example imports pandas
@given(st.one_of(some_floats, any_floats, int_columns))
@example(np.array([0.0, -0.0, -1.0, -1.0]))  # the sign of a zero once depended on the way taken
@example(np.array([-0.0, 0.0, -1.0]))
@example(np.array([np.nan, -np.nan, 1.0]))  # NaNs of either sign are one value, last
def test_long_columns_are_coded_as_numpy_codes_short_ones(values: np.ndarray) -> None:
    # Past _HASHED_FROM values pandas' factorize codes a column: the same distinct values, in the
    # same order (NaN one value, last), and the same code for every row as np.unique gives.
    # Either way, -0.0 is read as 0.0 (np.unique and factorize may keep either sign for the pair).
    distinct, codes = np.unique(values + 0 if values.dtype.kind == "f" else values, return_inverse=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(results, "_HASHED_FROM", 0)
        hashed_distinct, hashed_codes = results._distinct_values(values)
    assert hashed_distinct.dtype == distinct.dtype
    if distinct.dtype.kind == "f":
        # A NaN's sign bit is whichever the column held first (it is written "NaN" either way); every
        # other value, the sign of zero included, is the same bit for bit.
        assert np.array_equal(np.isnan(hashed_distinct), np.isnan(distinct))
        numbers = ~np.isnan(distinct)
        assert hashed_distinct[numbers].tobytes() == distinct[numbers].tobytes()
    else:
        assert hashed_distinct.tobytes() == distinct.tobytes()
    assert hashed_codes.tolist() == codes.reshape(-1).tolist()


@given(
    st.lists(
        st.one_of(st.none(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True)),
        max_size=30,
    )
)
def test_a_coded_columns_numbers_are_written_as_the_encoder_writes_each(values: list[Any]) -> None:
    # Encoded in one call and split at the commas: the same texts as one call per value.
    from realrecall.evaluate.results.columns import _value_texts

    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    assert _value_texts(values, encode) == [encode(value) for value in values]
    mixed = [*values, {"form": "a,b"}, "x,y", True]  # not all numbers: one call each
    assert _value_texts(mixed, encode) == [encode(value) for value in mixed]


# Ids as files hold them: plain ones mostly, with the characters JSON escapes among them.
ids = st.one_of(
    st.sampled_from(
        ["d1", "q 2", "", "é", "\u2028", 'a"b', "a\\b", "tab\there", "nul\x00", "\x1f", "\ud800"]
    ),
    st.text(max_size=6),
)
blocks = st.one_of(
    st.lists(ids, min_size=1, max_size=12),
    st.lists(st.lists(ids, max_size=4), min_size=1, max_size=12),
    st.lists(st.tuples(ids, ids), min_size=1, max_size=12),
    st.lists(st.none(), min_size=1, max_size=12),
    st.lists(st.one_of(st.none(), ids, st.integers(), st.lists(ids, max_size=3)), min_size=1, max_size=12),
    st.lists(st.lists(st.one_of(ids, st.integers(), st.none()), max_size=3), min_size=1, max_size=12),
)


@given(blocks)
@example(["q1", "q2"])
@example([["d1", "d2"], ["d3"]])
@example([["d1"], []])  # an empty list among others is written [], not [""]
@example([{"a": 1}])  # a dict is not joined as its keys
@example([None, None])
def test_a_block_of_text_lists_or_nulls_is_written_as_the_encoder_writes_it(block: list[Any]) -> None:
    # Query ids, gold ids and null columns are joined as text when nothing needs escaping: the same
    # text as the C encoder's, byte for byte, and the encoder's own when something does.
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    assert results._block_text(block, encode=encode) == encode(block)[1:-1]


@given(st.one_of(some_floats, any_floats, int_columns))
@example(np.array([np.nan, 1.0, np.nan, -np.nan, 0.5]))
@example(np.array([], dtype=np.float64))
def test_short_columns_get_the_distinct_values_and_codes_np_unique_gives(values: np.ndarray) -> None:
    # Below _HASHED_FROM values a sort and a binary search code a column: np.unique's answer.
    values = values + 0 if values.dtype.kind == "f" else values
    distinct, codes = np.unique(values, return_inverse=True)
    found, found_codes = results._sorted_distinct(values)
    assert found.dtype == distinct.dtype
    assert np.array_equal(np.isnan(found), np.isnan(distinct)) if found.dtype.kind == "f" else True
    kept = ~np.isnan(distinct) if distinct.dtype.kind == "f" else slice(None)
    assert found[kept].tobytes() == distinct[kept].tobytes()
    assert found_codes.tolist() == codes.reshape(-1).tolist()

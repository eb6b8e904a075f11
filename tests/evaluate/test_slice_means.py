"""Slices are grouped and averaged in columns; each must equal the exact path query by query:
``slicing.group_by_field`` for its members and ``QueryScores.mean`` over their ids for its figures."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.evaluate import evaluate
from realrecall.evaluate.scoring import score_queries
from realrecall.evaluate.slicing import group_by_field, group_codes, slice_sort_key
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run

# Values a record's field may hold: equal ones of other types (1, 1.0, True), None, unhashable ones
# (grouped by their text) and text that equals an unhashable value's text.
FIELD_VALUES = st.sampled_from(
    [None, 1, 1.0, True, 0, False, "1", "a", "b", "[1, 2]", [1, 2], ["a"], {"k": 1}, 2.5, "None"]
)
PASSAGES = [f"p{i}" for i in range(8)]
SCORES = [0.0, 0.25, 0.5, 1.0, 1.0 / 3.0, 0.1]


@st.composite
def gold_and_run(draw: st.DrawFn) -> tuple[GoldSet, Run]:
    count = draw(st.integers(min_value=1, max_value=40))
    # Ids whose code-point order is not the gold set's order, so trec_eval's order matters.
    ids = draw(st.permutations([f"q{i}" for i in range(count)]))
    queries = []
    for query_id in ids:
        gold = draw(st.dictionaries(st.sampled_from(PASSAGES), st.integers(0, 3), min_size=1, max_size=4))
        metadata = {"field": draw(FIELD_VALUES)}
        if draw(st.booleans()) and draw(st.booleans()):
            metadata["gold_count"] = draw(st.sampled_from([None, 1, "two"]))  # its own, else counted
        queries.append(GoldQuery(query_id, "text", gold, "real", metadata=metadata))
    run = {
        query_id: draw(st.dictionaries(st.sampled_from(PASSAGES), st.sampled_from(SCORES), max_size=6))
        for query_id in ids
        if draw(st.booleans())
    }
    return GoldSet(tuple(queries)), Run.from_scores(run)


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


@given(gold_and_run())
@settings(max_examples=100, deadline=None)
def test_each_slice_holds_the_queries_and_the_means_of_the_exact_path_to_the_bit(data) -> None:
    gold, run = data
    metrics = ["recall@1", "recall@5", "complete@5", "mrr@5", "ndcg@3"]
    result = evaluate([gold], run=run, metrics=metrics, by=["field"])
    scores = score_queries(gold, run, metrics)
    fields = (
        ["field", "gold_count"]
        if any(s.field == "gold_count" for s in result.gold_sets[0].slices)
        else ["field"]
    )
    for field in fields:
        sliced = [s for s in result.gold_sets[0].slices if s.field == field]
        exact = sorted(group_by_field(gold, field).items(), key=slice_sort_key)
        assert [(s.value, s.n) for s in sliced] == [(value, len(members)) for value, members in exact]
        for got, (_, members) in zip(sliced, exact, strict=True):
            for metric in metrics:
                assert _bits(got.metrics[metric]) == _bits(scores.mean(metric, members))
    for metric in metrics:
        assert _bits(result.gold_sets[0].overall.metrics[metric]) == _bits(scores.mean(metric))


@pytest.mark.parametrize("seed", range(3))
def test_big_slices_are_added_in_order_as_the_exact_path_adds_them(seed: int) -> None:
    # Groups of hundreds of queries, whose sums are taken in one numpy pass rather than one by one.
    rng = np.random.default_rng(seed)
    count = 2000
    queries = tuple(
        GoldQuery(f"q{i}", "", {f"p{j}": int(rng.integers(0, 4)) for j in rng.choice(20, 3)},
                  metadata={"field": int(rng.integers(0, 3))})
        for i in rng.permutation(count)
    )  # fmt: skip
    run = {f"q{i}": {f"p{j}": float(rng.random()) for j in rng.choice(20, 8)} for i in range(count)}
    gold, metrics = GoldSet(queries), ["recall@3", "mrr@5", "ndcg@5", "ndcg@10"]
    scores = score_queries(gold, run, metrics)
    values, groups = group_codes([query.field("field") for query in gold])
    means = scores.group_means(metrics, groups, len(values))
    exact = group_by_field(gold, "field")
    assert list(exact) == values
    assert min(map(len, exact.values())) >= 64
    for of_group, members in zip(means, exact.values(), strict=True):
        for metric in metrics:
            assert _bits(of_group[metric]) == _bits(scores.mean(metric, members))
    (overall,) = scores.group_means(metrics, np.zeros(count, dtype=np.intp), 1)
    assert all(_bits(overall[metric]) == _bits(scores.mean(metric)) for metric in metrics)


@given(st.lists(FIELD_VALUES, min_size=1, max_size=30))
def test_group_codes_name_the_groups_group_by_field_makes(values) -> None:
    queries = tuple(
        GoldQuery(f"q{i}", "", {"p": 1}, metadata={"field": value}) for i, value in enumerate(values)
    )
    exact = group_by_field(queries, "field")
    distinct, codes = group_codes(values)
    assert distinct == list(exact)
    grouped = {value: [f"q{i}" for i in np.flatnonzero(codes == code)] for code, value in enumerate(distinct)}
    assert grouped == exact


def test_a_group_with_no_query_is_refused() -> None:
    gold = GoldSet((GoldQuery("q1", "", {"p": 1}), GoldQuery("q2", "", {"p": 1})))
    scores = score_queries(gold, {"q1": {"p": 1.0}}, ["recall@1"])
    assert scores.group_means(["recall@1"], np.array([0, 0]), 1) == [{"recall@1": 0.5}]
    with pytest.raises(InputError, match="no query to average"):
        scores.group_means(["recall@1"], np.array([0, 0]), 2)


def test_a_nan_field_value_is_its_own_slice_as_the_exact_path_makes_it() -> None:
    nan = math.nan
    gold = GoldSet(
        tuple(GoldQuery(f"q{i}", "", {"p": 1}, metadata={"field": nan if i < 2 else 1.0}) for i in range(3))
    )
    result = evaluate([gold], run=Run.from_scores({"q0": {"p": 1.0}}), metrics=["recall@1"], by=["field"])
    sliced = [(s.n, s.metrics["recall@1"]) for s in result.gold_sets[0].slices if s.field == "field"]
    assert sliced == [(2, 0.5), (1, 0.0)]

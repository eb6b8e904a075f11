"""complete@k: every gold passage of a query in the top k, reported beside recall@k on sets whose
questions need several passages, with a slice by how many they need (issue 33)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from realrecall.calibrate import calibrate
from realrecall.errors import InputError
from realrecall.evaluate import evaluate
from realrecall.evaluate.metrics import parse_metric
from realrecall.evaluate.results import write_results
from realrecall.evaluate.scoring import score_queries
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run

# Two single-passage questions, both found; two two-passage questions, each with one passage found in
# the top 2 and, for p1, the other at rank 3.
PAIRS = GoldSet(
    (
        GoldQuery("s1", "reset password", {"a": 1}, "synthetic"),
        GoldQuery("s2", "export data", {"b": 1}, "synthetic"),
        GoldQuery("p1", "compare plans", {"c": 1, "d": 1}, "synthetic"),
        GoldQuery("p2", "sync and backup", {"e": 1, "f": 1}, "synthetic"),
    ),
    name="pairs",
)
RUN = Run.from_lists(
    {"s1": ["a", "x"], "s2": ["b"], "p1": ["c", "x", "d"], "p2": ["y", "e", "z"]}, name="run"
)


def test_complete_at_k_asks_for_every_gold_passage_where_recall_asks_for_one() -> None:
    scores = score_queries(PAIRS.qrels(), RUN, ["recall@2", "complete@2", "complete@3"])
    recall = dict(zip(scores.query_ids, scores.values["recall@2"].tolist(), strict=True))
    complete2 = dict(zip(scores.query_ids, scores.values["complete@2"].tolist(), strict=True))
    complete3 = dict(zip(scores.query_ids, scores.values["complete@3"].tolist(), strict=True))
    assert recall == {"s1": 1.0, "s2": 1.0, "p1": 1.0, "p2": 1.0}
    assert complete2 == {"s1": 1.0, "s2": 1.0, "p1": 0.0, "p2": 0.0}
    assert complete3 == {"s1": 1.0, "s2": 1.0, "p1": 1.0, "p2": 0.0}


def test_a_query_with_no_relevant_passage_is_never_complete() -> None:
    scores = score_queries({"q": {"a": 0}}, Run.from_lists({"q": ["a"]}), ["complete@5"])
    assert scores.values["complete@5"].tolist() == [0.0]


def test_complete_is_a_binary_metric_that_needs_a_cutoff() -> None:
    assert parse_metric("complete@10").binary
    with pytest.raises(InputError, match="needs a cut-off"):
        parse_metric("complete")
    with pytest.raises(InputError, match="takes no token budget"):
        parse_metric("complete@2000tok")


def test_a_set_of_multi_passage_questions_gets_complete_beside_recall_and_a_gold_count_slice() -> None:
    result = evaluate([PAIRS], run=RUN, k=(1, 2))

    assert list(result.metrics[:4]) == ["recall@1", "complete@1", "recall@2", "complete@2"]
    (gold_set,) = result.gold_sets
    assert gold_set.overall.metrics["recall@2"] == 1.0  # any-hit recall looks perfect...
    assert gold_set.overall.metrics["complete@2"] == 0.5  # ...while half the questions lack a passage
    slices = {(s.field, s.value): s for s in gold_set.slices}
    assert {key: s.n for key, s in slices.items()} == {("gold_count", 1): 2, ("gold_count", 2): 2}
    assert slices[("gold_count", 2)].metrics["recall@2"] == 1.0
    assert slices[("gold_count", 2)].metrics["complete@2"] == 0.0
    assert result.gold_sets[0].queries  # per-query figures carry the new metric too
    assert all("complete@2" in query.metrics for query in gold_set.queries)


def test_a_set_of_single_passage_questions_is_reported_as_before() -> None:
    singles = GoldSet(tuple(q for q in PAIRS if len(q.gold) == 1), name="singles")
    result = evaluate([singles], run=RUN, k=(1, 2))
    assert not [name for name in result.metrics if name.startswith("complete")]
    assert not result.gold_sets[0].slices


def test_metrics_named_explicitly_are_kept_as_named() -> None:
    result = evaluate([PAIRS], run=RUN, metrics=["recall@2"])
    assert list(result.metrics) == ["recall@2"]
    # The slice by gold count still shows how the multi-passage questions fare.
    assert {s.value for s in result.gold_sets[0].slices if s.field == "gold_count"} == {1, 2}


def test_a_gold_count_field_of_the_set_itself_is_the_one_sliced() -> None:
    own = GoldSet(
        tuple(
            GoldQuery(q.query_id, q.query, q.gold, q.origin, metadata={"gold_count": "own"}) for q in PAIRS
        ),
        name="own",
    )
    result = evaluate([own], run=RUN, k=(2,))
    assert {s.value for s in result.gold_sets[0].slices if s.field == "gold_count"} == {"own"}


@pytest.mark.parametrize("through_file", [False, True])
def test_calibrate_slices_by_the_gold_count_evaluate_sliced_by(tmp_path, through_file) -> None:
    # The slice evaluate adds was shown by calibrate as one "gold_count=(missing)" row of every query:
    # the count is not a field of the record, so the per-query results never held it (issue 28).
    real = GoldSet(tuple(replace(q, origin="real") for q in PAIRS), name="real")
    result: Any = evaluate([PAIRS, real], run=RUN, k=(1, 2))
    if through_file:
        write_results(result, tmp_path / "results.json")
        result = tmp_path / "results.json"

    report = calibrate(result, metric="recall@2", n_resamples=100)

    counts = {(g.value, g.n_real, g.n_synthetic) for g in report.slices() if g.field == "gold_count"}
    assert counts == {(1, 2, 2), (2, 2, 2)}

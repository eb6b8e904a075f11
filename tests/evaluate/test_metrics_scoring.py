"""score() and score_queries(): inputs accepted, trec_eval conventions, and what is reported."""

from __future__ import annotations

import numpy as np
import pytest

from realrecall.errors import InputError
from realrecall.evaluate.scoring import QueryScores, score, score_queries
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run

GOLD = {"q1": {"a": 1}, "q2": {"b": 2, "c": 1}, "q3": {"x": 0}, "q10": {"d": 1}}
RUN = {"q1": {"a": 0.2, "z": 0.9}, "q2": {"c": 0.5, "b": 0.4}, "q3": {"x": 1.0}, "elsewhere": {"a": 1.0}}


def test_queries_come_in_trec_eval_order_and_missing_ones_score_zero() -> None:
    result = score_queries(GOLD, RUN, ["mrr", "recall@1"])

    assert result.query_ids == ("q1", "q10", "q2", "q3")  # strcmp order: "q10" < "q2"
    assert result.missing_run == ("q10",)
    assert result.no_relevant == ("q3",)
    assert result.values["mrr"].tolist() == [0.5, 0.0, 1.0, 0.0]
    assert result.first_relevant_rank.tolist() == [2, 0, 1, 0]


def test_the_mean_is_over_every_gold_query() -> None:
    assert score(GOLD, RUN, ["mrr", "recall@1"]) == {"mrr": 1.5 / 4, "recall@1": 1 / 4}


def test_means_add_in_query_order_not_pairwise() -> None:
    # 1e16 + 1 + 1 + ... sequentially loses every 1; a pairwise sum keeps some of them.
    values = np.array([1e16] + [1.0] * 20)
    result = QueryScores(
        query_ids=tuple(f"q{i:02d}" for i in range(21)),
        values={"mrr": values},
        first_relevant_rank=np.zeros(21, dtype=np.int64),
        missing_run=(),
        no_relevant=(),
    )

    assert result.mean("mrr") == 1e16 / 21
    assert float(np.sum(values)) / 21 != 1e16 / 21


def test_a_gold_set_a_qrels_dict_and_each_kind_of_run_give_the_same_figures() -> None:
    gold_set = GoldSet(tuple(GoldQuery(qid, f"text {qid}", judged) for qid, judged in GOLD.items()))
    lists = {qid: Run.from_scores(RUN).ranked(qid) for qid in RUN}
    expected = score(GOLD, RUN, ["ndcg@2", "mrr"])

    assert score(gold_set, RUN, ["ndcg@2", "mrr"]) == expected
    assert score(GOLD, Run.from_scores(RUN), ["ndcg@2", "mrr"]) == expected
    assert score(GOLD, {qid: list(ids) for qid, ids in lists.items()}, ["ndcg@2", "mrr"]) == expected


def test_relevance_threshold_applies_to_every_metric_but_ndcg() -> None:
    low = score_queries(GOLD, RUN, ["mrr", "ndcg@2"])
    high = score_queries(GOLD, RUN, ["mrr", "ndcg@2"], relevance_threshold=2)

    assert high.values["mrr"].tolist() == [0.0, 0.0, 0.5, 0.0]  # only b (grade 2) counts, at rank 2
    assert high.no_relevant == ("q1", "q10", "q3")
    assert high.values["ndcg@2"].tolist() == low.values["ndcg@2"].tolist()


def test_mean_over_a_subset_and_unknown_ids() -> None:
    result = score_queries(GOLD, RUN, ["mrr"])

    assert result.mean("mrr", ["q2", "q1"]) == 0.75
    with pytest.raises(InputError, match="'nope' is not in the gold set"):
        result.mean("mrr", ["nope"])
    with pytest.raises(InputError, match="no query to average"):
        result.mean("mrr", [])
    with pytest.raises(InputError, match="'ndcg@10' was not computed"):
        result.mean("ndcg@10")


@pytest.mark.parametrize("threshold", [-1, 1.5, True, "1"])
def test_a_bad_threshold_is_rejected(threshold) -> None:
    with pytest.raises(InputError, match="relevance threshold must be a whole number"):
        score(GOLD, RUN, ["mrr"], relevance_threshold=threshold)


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ({}, "the gold set has no query"),
        ({"q": {"a": 1.5}}, "grade of passage 'a' in query 'q' must be an integer"),
        ({"q": {"a": True}}, "must be an integer"),
        ({"q": ["a"]}, "is not a query id mapped to"),
        ({1: {"a": 1}}, "is not a query id mapped to"),
        ([("q", "a")], "gold must be a GoldSet or a dict"),
    ],
)
def test_bad_gold_input_is_named(gold, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score(gold, RUN, ["mrr"])


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ({"q1": {"a": "high"}}, "score of passage 'a' in query 'q1' is not a number"),
        ({"q1": {"a": 1.0}, " ": {"b": 1.0}}, "query id ' ' must be a non-empty string"),
        ({"q1": {"a": 1.0}, 7: {"b": 1.0}}, "query id 7 must be a non-empty string"),
        ({"q1": {"a": float("nan")}}, "score of passage 'a' in query 'q1' is NaN"),
        ({"q1": ["a", "b", "a"]}, "query 'q1' lists passage 'a' twice"),
        ({"q1": "abc"}, "is a string, not a list"),
        ({"q1": {"a": 1.0}, "q2": ["b"]}, "scores of query 'q2' are a list, not a dict"),
        ([["a"]], "a run must be a Run or a dict"),
    ],
)
def test_bad_run_input_is_named(run, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score(GOLD, run, ["mrr"])


def test_ties_are_broken_by_id_descending_bytewise() -> None:
    run = Run.from_scores({"q": {"d10": 1.0, "d9": 1.0, "a#1": 1.0, "Ä1": 1.0, "top": 2.0}})

    assert run.ranked("q") == ("top", "Ä1", "d9", "d10", "a#1")
    ranks = [score_queries({"q": {pid: 1}}, run, ["mrr"]).first_relevant_rank[0] for pid in run.ranked("q")]
    assert ranks == [1, 2, 3, 4, 5]


def test_scores_compare_as_float64_not_float32() -> None:
    run = {"q": {"b": 1.0, "a": 1.000000001}}  # equal as float32, where "b" would win the tie

    assert score({"q": {"a": 1}}, run, ["mrr"]) == {"mrr": 1.0}


def test_long_and_uneven_queries_are_ranked_exactly() -> None:
    # One query far longer than the rest exercises the padded blocks of different widths.
    rng = np.random.default_rng(3)
    run = {
        f"q{i}": {f"p{j}": float(s) for j, s in enumerate(rng.random(n))}
        for i, n in enumerate([1, 3, 70, 5000])
    }
    gold = {qid: {f"p{len(docs) - 1}": 1} for qid, docs in run.items()}
    result = score_queries(gold, run, ["mrr"])

    for i, qid in enumerate(result.query_ids):
        target = f"p{len(run[qid]) - 1}"
        assert result.first_relevant_rank[i] == Run.from_scores(run).ranked(qid).index(target) + 1


def test_scoring_leaves_the_callers_dicts_as_they_were() -> None:
    gold = {qid: dict(judged) for qid, judged in GOLD.items()}
    run = {qid: dict(scored) for qid, scored in RUN.items()}

    score(gold, run, ["mrr", "ndcg@2"])

    assert gold == GOLD
    assert run == RUN
    assert [list(scored) for scored in run.values()] == [list(scored) for scored in RUN.values()]

"""Properties every metric must have, checked on generated gold sets and runs (hypothesis)."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.evaluate.scoring import score, score_queries
from realrecall.runs import Run

# Ids mix ASCII, '#', and non-ASCII so bytewise order matters; scores collide often to force ties.
ids = st.sampled_from(["a", "b", "B", "a#1", "d9", "d10", "Ä1", "é", "z", "zz", "0", "_x"])
scores = st.sampled_from([-2.5, -1e-3, 0.0, 0.5, 1.0, 1.000000001, 3.0, 7.5])
runs = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q10"]), st.dictionaries(ids, scores, max_size=10))
qrels = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q4", "q10"]),
    st.dictionaries(ids, st.integers(min_value=-1, max_value=3), min_size=1, max_size=6),
    min_size=1,
)
ALL = ["recall@1", "recall@3", "passage_recall@3", "mrr", "mrr@2", "ndcg@3", "ndcg", "precision@2"]


@given(qrels, runs)
@settings(max_examples=150, deadline=None)
def test_recall_at_k_never_falls_as_k_grows(gold, run) -> None:
    ks = [1, 2, 3, 5, 10, 50]
    result = score_queries(gold, run, [f"recall@{k}" for k in ks] + [f"passage_recall@{k}" for k in ks])
    for family in ("recall", "passage_recall"):
        for smaller, larger in itertools.pairwise(ks):
            assert (result.values[f"{family}@{smaller}"] <= result.values[f"{family}@{larger}"]).all()


@given(qrels, runs)
@settings(max_examples=150, deadline=None)
def test_a_ranked_list_scores_like_the_scored_run_it_came_from(gold, run) -> None:
    scored = Run.from_scores(run)
    listed = Run.from_lists(scored.to_lists())

    assert score(gold, listed, ALL) == score(gold, scored, ALL)


@given(qrels, runs, st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_the_order_of_queries_and_passages_in_the_inputs_changes_nothing(
    gold, run, rnd: random.Random
) -> None:
    def shuffled(mapping):
        items = list(mapping.items())
        rnd.shuffle(items)
        return {k: shuffled(v) if isinstance(v, dict) else v for k, v in items}

    first = score_queries(gold, run, ALL)
    second = score_queries(shuffled(gold), shuffled(run), ALL)

    assert first.query_ids == second.query_ids
    for name in ALL:
        assert first.values[name].tolist() == second.values[name].tolist()
        assert first.mean(name) == second.mean(name)


@given(qrels, runs)
@settings(max_examples=150, deadline=None)
def test_values_stay_in_range_and_a_cut_off_only_lowers_mrr(gold, run) -> None:
    # (nDCG@k can exceed full nDCG: its ideal is cut at k too.)
    result = score_queries(gold, run, ALL)
    for name in ALL:
        assert ((result.values[name] >= 0) & (result.values[name] <= 1)).all()
    assert (result.values["mrr@2"] <= result.values["mrr"]).all()


@given(qrels, runs)
@settings(max_examples=100, deadline=None)
def test_run_queries_outside_the_gold_set_are_ignored(gold, run) -> None:
    extra = dict(run) | {"not-a-gold-query": {"a": 1.0, "b": 2.0}}

    assert score(gold, extra, ALL) == score(gold, run, ALL)


@given(qrels, runs)
@settings(max_examples=100, deadline=None)
def test_the_mean_over_some_queries_is_the_score_of_those_queries_alone(gold, run) -> None:
    result = score_queries(gold, run, ALL)
    some = result.query_ids[::2]

    alone = score({qid: gold[qid] for qid in some}, run, ALL)

    assert {name: result.mean(name, some) for name in ALL} == alone


@given(qrels, runs)
@settings(max_examples=100, deadline=None)
def test_the_first_relevant_rank_is_what_mrr_inverts(gold, run) -> None:
    result = score_queries(gold, run, ["mrr"])
    for rank, value in zip(result.first_relevant_rank.tolist(), result.values["mrr"].tolist(), strict=True):
        assert value == (1.0 / rank if rank else 0.0)

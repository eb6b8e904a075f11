"""pytrec_eval (trec_eval 9.0.8 inside) as an oracle on random graded data with no float32 ties."""

from __future__ import annotations

import pytest

from realrecall.evaluate.scoring import score_queries
from realrecall.runs import Run

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 3, 5, 10, 20)


def _oracle(qrels, run, level: int) -> dict[str, dict[str, float]]:
    measures = {
        f"success.{','.join(map(str, CUTOFFS))}",
        f"recall.{','.join(map(str, CUTOFFS))}",
        f"P.{','.join(map(str, CUTOFFS))}",
        f"ndcg_cut.{','.join(map(str, CUTOFFS))}",
        "recip_rank",
        "ndcg",
    }
    return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", [1, 2])
def test_per_query_values_equal_pytrec_eval(random_case, seed: int, level: int) -> None:
    qrels, run = random_case(seed)
    names = {"mrr": "recip_rank", "ndcg": "ndcg"}
    for k in CUTOFFS:
        names |= {
            f"recall@{k}": f"success_{k}",
            f"passage_recall@{k}": f"recall_{k}",
            f"precision@{k}": f"P_{k}",
            f"ndcg@{k}": f"ndcg_cut_{k}",
        }
    scores = score_queries(qrels, run, list(names), relevance_threshold=level)
    expected = _oracle(qrels, run, level)

    assert set(expected) == set(scores.query_ids) - set(scores.missing_run)
    for i, qid in enumerate(scores.query_ids):
        for ours, theirs in names.items():
            value = float(scores.values[ours][i])
            if qid in scores.missing_run:
                assert value == 0.0
            else:
                assert value == expected[qid][theirs], f"{ours} of {qid}"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_mrr_at_k_equals_pytrec_eval_recip_rank_on_the_run_cut_at_k(random_case, seed: int, k: int) -> None:
    qrels, run = random_case(seed)
    cut = Run.from_scores(run).top(k)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {qid: cut.scores(qid) for qid in cut.query_ids}
    )

    scores = score_queries(qrels, run, [f"mrr@{k}"])

    for i, qid in enumerate(scores.query_ids):
        assert float(scores.values[f"mrr@{k}"][i]) == expected.get(qid, {"recip_rank": 0.0})["recip_rank"]

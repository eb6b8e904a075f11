"""ir_measures as a second oracle: its own RR@k cut-off code, on random data with no ties."""

from __future__ import annotations

import pytest

from realrecall.evaluate.scoring import score_queries

ir_measures = pytest.importorskip("ir_measures")


def _measures(level: int) -> dict[str, object]:
    rr = ir_measures.RR(rel=level)
    names: dict[str, object] = {"mrr": rr, "mrr@3": rr @ 3, "mrr@10": rr @ 10}
    for k in (1, 5, 10):
        names |= {
            f"recall@{k}": ir_measures.Success(rel=level) @ k,
            f"passage_recall@{k}": ir_measures.R(rel=level) @ k,
            f"precision@{k}": ir_measures.P(rel=level) @ k,
            f"ndcg@{k}": ir_measures.nDCG @ k,
        }
    return names


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_per_query_values_equal_ir_measures(random_case, seed: int, level: int) -> None:
    qrels, run = random_case(seed)
    names = _measures(level)
    results = ir_measures.iter_calc(names.values(), qrels, run)
    expected = {(result.query_id, str(result.measure)): result.value for result in results}

    scores = score_queries(qrels, run, list(names), relevance_threshold=level)

    compared = 0
    for i, qid in enumerate(scores.query_ids):
        for ours, measure in names.items():
            if (qid, str(measure)) in expected:
                assert float(scores.values[ours][i]) == expected[(qid, str(measure))], f"{ours} of {qid}"
                compared += 1
    assert compared >= len(names) * (len(scores.query_ids) - len(scores.missing_run))

"""ir_measures as a second oracle, with its own code for cut-offs (``RR@k``), on random data with no ties.

The measure of each registry metric is the one ``ir_measures.parse_trec_measure`` reads from the
trec_eval name the registry gives it (``Metric.trec_eval_measure``); a run depth (``-M k``) becomes
ir_measures' own cut-off, and the relevance threshold its ``rel`` where the measure takes one.
"""

from __future__ import annotations

import pytest

from realrecall.evaluate.metrics import parse_metric
from realrecall.evaluate.scoring import score_queries

ir_measures = pytest.importorskip("ir_measures")


def _measure(name: str, level: int) -> object:
    trec_name, depth, _ = parse_metric(name).trec_eval_oracle()  # type: ignore[misc]
    (measure,) = ir_measures.parse_trec_measure(trec_name)
    if "rel" in measure.SUPPORTED_PARAMS:
        measure = measure(rel=level)
    return measure if depth is None else measure @ depth


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_every_registry_metric_equals_ir_measures_per_query(
    random_case, registry_names: list[str], seed: int, level: int
) -> None:
    qrels, run = random_case(seed)
    names = {name: _measure(name, level) for name in registry_names}
    results = ir_measures.iter_calc(set(names.values()), qrels, run)
    expected = {(result.query_id, str(result.measure)): result.value for result in results}
    # complete@k is 1 exactly where the measure (R@k) is 1 (``Metric.trec_eval_oracle``).
    is_one = {name for name in names if parse_metric(name).trec_eval_oracle()[2]}  # type: ignore[index]

    scores = score_queries(qrels, run, list(names), relevance_threshold=level)

    compared = 0
    for i, qid in enumerate(scores.query_ids):
        for ours, measure in names.items():
            if (qid, str(measure)) in expected:
                value = expected[(qid, str(measure))]
                value = float(value == 1.0) if ours in is_one else value
                assert float(scores.values[ours][i]) == value, f"{ours} of {qid}"
                compared += 1
    assert compared >= len(names) * (len(scores.query_ids) - len(scores.missing_run))

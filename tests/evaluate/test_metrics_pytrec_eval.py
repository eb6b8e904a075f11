"""pytrec_eval (trec_eval 9.0.8 inside) as an oracle on random graded data with no float32 ties.

Every metric of the registry (``METRICS``) is compared, at several cut-offs and without one where it
may go, with the trec_eval measure the registry says gives it (``Metric.trec_eval_oracle``: the
measure itself, or for ``complete@k`` the indicator that ``recall_k`` is 1): a metric added to the
registry is checked here with no edit of this file.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from realrecall.evaluate.metrics import METRICS, parse_metric
from realrecall.evaluate.scoring import score_queries
from realrecall.runs import Run

pytrec_eval = pytest.importorskip("pytrec_eval")


def test_every_metric_of_the_registry_names_the_trec_eval_measure_it_equals(registry_names: list[str]):
    assert {"recall", "passage_recall", "mrr", "ndcg", "precision", "complete"} <= set(METRICS)
    for name in registry_names:
        assert parse_metric(name).trec_eval_oracle() is not None, name
        is_one = parse_metric(name).trec_eval_oracle()[2]  # type: ignore[index]
        assert (parse_metric(name).trec_eval_measure() is None) == is_one, name


def _request(measure: str) -> str:
    """How pytrec_eval is asked for a measure it reports as ``measure``: ``success_10`` -> ``success.10``."""
    return re.sub(r"_(\d+)$", r".\1", measure)


def _oracle(qrels, run, names: list[str], level: int) -> dict[str, dict[str, float]]:
    """``{metric name: {query id: value}}`` from pytrec_eval, on the run cut where the measure needs it."""
    by_depth: dict[int | None, dict[str, str]] = defaultdict(dict)
    is_one: set[str] = set()
    for name in names:
        measure, depth, indicator = parse_metric(name).trec_eval_oracle()  # type: ignore[misc]
        by_depth[depth][name] = measure
        if indicator:
            is_one.add(name)
    values: dict[str, dict[str, float]] = {}
    for depth, measures in by_depth.items():
        ranked = run
        if depth is not None:
            cut = Run.from_scores(run).top(depth)
            ranked = {qid: cut.scores(qid) for qid in cut.query_ids}
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, {_request(m) for m in measures.values()}, relevance_level=level
        )
        answer = evaluator.evaluate(ranked)
        for name, measure in measures.items():
            values[name] = {
                qid: float(per_query[measure] == 1.0) if name in is_one else per_query[measure]
                for qid, per_query in answer.items()
            }
    return values


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_registry_metric_equals_pytrec_eval_per_query(
    random_case, registry_names: list[str], seed: int, level: int
) -> None:
    qrels, run = random_case(seed)
    names = registry_names
    scores = score_queries(qrels, run, names, relevance_threshold=level)
    expected = _oracle(qrels, run, names, level)

    scored = set(scores.query_ids) - set(scores.missing_run)
    for name in names:
        # trec_eval scores the queries of the qrels that the run holds; the others score 0 here.
        assert set(expected[name]) == scored, name
        for i, qid in enumerate(scores.query_ids):
            assert float(scores.values[name][i]) == expected[name].get(qid, 0.0), f"{name} of {qid}"

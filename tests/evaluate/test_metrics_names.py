"""Metric names: parsed from strings, with errors that list the choices from the registry."""

from __future__ import annotations

import pytest

from realrecall.errors import InputError
from realrecall.evaluate.metrics import METRICS, parse_metric
from realrecall.evaluate.scoring import score


@pytest.mark.parametrize(
    ("name", "kind", "k"),
    [
        ("recall@10", "recall", 10),
        ("passage_recall@100", "passage_recall", 100),
        ("mrr", "mrr", None),
        ("mrr@10", "mrr", 10),
        ("ndcg@3", "ndcg", 3),
        ("ndcg", "ndcg", None),
        ("precision@7", "precision", 7),
    ],
)
def test_names_parse_to_a_kind_and_a_cut_off(name: str, kind: str, k: int | None) -> None:
    metric = parse_metric(name)

    assert (metric.name, metric.kind, metric.k) == (name, kind, k)


def test_an_unknown_metric_names_every_choice_from_the_registry() -> None:
    with pytest.raises(InputError, match=r"unknown metric 'map@10'; choose from") as error:
        parse_metric("map@10")

    for name in METRICS:
        assert name in str(error.value)


@pytest.mark.parametrize("name", ["recall", "passage_recall", "precision"])
def test_metrics_that_need_a_cut_off_say_so(name: str) -> None:
    with pytest.raises(InputError, match=rf"needs a cut-off; write it as {name}@k"):
        parse_metric(name)


@pytest.mark.parametrize("name", ["recall@0", "recall@-1", "recall@ten", "ndcg@", "mrr@1.5", "recall@²"])
def test_a_bad_cut_off_is_rejected(name: str) -> None:
    with pytest.raises(InputError, match="bad cut-off"):
        parse_metric(name)


def test_score_rejects_an_unknown_metric_before_doing_any_work() -> None:
    with pytest.raises(InputError, match="unknown metric 'Recall@10'"):
        score({"q": {"a": 1}}, {"q": ["a"]}, ["Recall@10"])


def test_every_metric_documents_its_formula_and_trec_eval_measure() -> None:
    for kind in METRICS.values():
        doc = kind.compute.__doc__ or ""
        assert "trec_eval" in doc
        assert "=" in doc  # the formula

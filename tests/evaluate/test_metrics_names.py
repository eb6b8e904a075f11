"""Metric names: parsed from strings, with errors that list the choices from the registry."""

from __future__ import annotations

import pytest

from realrecall.errors import InputError
from realrecall.evaluate import default_metrics
from realrecall.evaluate.metrics import METRICS, parse_metric, trec_eval_alias
from realrecall.evaluate.scoring import score
from realrecall.evaluate.settings import EvaluateSettings


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


def test_a_metric_and_its_trec_eval_name_are_each_others_alias_by_the_registry() -> None:
    for name, kind in METRICS.items():
        if kind.trec_eval_is_one:  # only 1 where the measure is 1: the measure is another metric's alias
            assert trec_eval_alias(f"{name}@10") is None
            assert trec_eval_alias(kind.trec_eval.removesuffix("k") + "10") != f"{name}@10"
        elif kind.trec_eval.endswith("_k"):
            trec = kind.trec_eval.removesuffix("k") + "10"
            assert trec_eval_alias(f"{name}@10") == trec
            assert trec_eval_alias(trec) == f"{name}@10"
        else:  # measured on the run cut at depth k (-M k): no -q name of its own
            assert trec_eval_alias(f"{name}@10") is None
        if kind.trec_eval_whole is not None:
            assert trec_eval_alias(name) in (kind.trec_eval_whole, None)  # None: the same name
    assert trec_eval_alias("mrr") == "recip_rank"
    assert trec_eval_alias("recip_rank") == "mrr"
    assert trec_eval_alias("recall@2000tok") is None
    assert trec_eval_alias("map") is None


def test_the_default_cutoffs_give_recall_at_each_mrr_at_the_deepest_and_ndcg_nearest_10() -> None:
    expected = ["recall@1", "recall@5", "recall@10", "recall@50", "mrr@50", "ndcg@10"]
    assert default_metrics(EvaluateSettings().k) == expected  # what the help of k says

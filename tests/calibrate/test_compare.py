"""Paired comparison of two retrievers, checked against ranx's own tests on the same per-query values."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from calibrate.results_builder import per_query, results_document
from realrecall.calibrate import compare
from realrecall.calibrate.report import render_comparison
from realrecall.calibrate.statistics import paired_bootstrap_test, paired_t_test, randomization_test
from realrecall.errors import InputError


def ranx() -> Any:
    """ranx's statistical tests, imported by the tests that use them: ranx (and numba) take about a
    second to import, which every xdist worker would pay just to collect this file."""
    from ranx import statistical_tests

    return statistical_tests


def scores(seed: int, shift: float, n: int = 60) -> np.ndarray:
    base = np.random.default_rng(seed).random(n)
    return np.clip(base + shift + np.random.default_rng(seed + 100).normal(0, 0.15, n), 0, 1)


def test_randomization_test_agrees_with_ranx_fisher() -> None:
    a = scores(1, 0.0)
    b = np.clip(a + np.random.default_rng(5).normal(0.01, 0.1, a.size), 0, 1)  # p about 0.17
    draws = 20_000
    ranx_p, _ = ranx().fisher_randomization_test(a, b, draws, 0.05, 42)
    ours = randomization_test(a, b, n_resamples=draws, rng=np.random.default_rng(0))
    # Two Monte Carlo estimates from independent draws differ by their noise (4 standard errors of the
    # difference), and ours counts the observed labelling too: (b+1)/(B+1) against ranx's b/B moves p by
    # at most 1/(B+1). The old bound (0.01 flat) was tested where both p were about 0, so it said little.
    noise = 4 * np.sqrt(2 * ranx_p * (1 - ranx_p) / draws)
    assert 0.05 < ranx_p < 0.5
    assert ours == pytest.approx(ranx_p, abs=noise + 1 / (draws + 1))


def test_randomization_p_value_is_never_zero_where_ranx_says_zero() -> None:
    a, b = scores(1, 0.0), scores(1, 0.04)  # b is a shifted by 0.04 on every query: no relabelling reaches it
    ranx_p, _ = ranx().fisher_randomization_test(a, b, 999, 0.05, 42)
    assert ranx_p == 0.0
    assert randomization_test(a, b, n_resamples=999, rng=np.random.default_rng(0)) == 1 / 1000
    assert paired_bootstrap_test(a, b, n_resamples=999, rng=np.random.default_rng(0)) == 1 / 1000


@pytest.mark.parametrize("test", [randomization_test, paired_bootstrap_test])
def test_resampled_p_values_are_b_plus_one_over_resamples_plus_one(test: Callable[..., float]) -> None:
    a = scores(4, 0.0)
    b = np.clip(a + np.random.default_rng(6).normal(0.01, 0.1, a.size), 0, 1)
    p = test(a, b, n_resamples=1000, rng=np.random.default_rng(1))
    reaching = p * 1001 - 1
    assert reaching == pytest.approx(round(reaching), abs=1e-9)
    assert 0 <= round(reaching) <= 1000


def test_paired_t_test_equals_ranx_student() -> None:
    a, b = scores(2, 0.0), scores(2, 0.05)
    ranx_p, _ = ranx().paired_student_t_test(a, b, 0.05)
    assert paired_t_test(a, b) == pytest.approx(ranx_p, rel=1e-12)


def test_identical_systems_are_not_significant() -> None:
    a = scores(3, 0.0)
    assert randomization_test(a, a.copy(), n_resamples=1000, rng=np.random.default_rng(0)) == 1.0
    assert paired_t_test(a, a.copy()) == 1.0


def two_systems(shift_lookup: int) -> tuple[dict, dict]:
    """System b finds lookup queries at rank 1 where a finds them at rank ``shift_lookup``; howto equal."""
    a_records, b_records = [], []
    for i in range(40):
        kind = "lookup" if i < 30 else "howto"
        rank_a = shift_lookup if kind == "lookup" and i % 2 == 0 else 1
        a_records.append(per_query(f"q{i}", "real", rank=rank_a, type=kind))
        b_records.append(per_query(f"q{i}", "real", rank=1, type=kind))
    return (
        results_document([("real", a_records)], retriever="bm25"),
        results_document([("real", b_records)], retriever="hybrid"),
    )


def test_compare_finds_a_real_improvement_significant_overall_and_per_slice() -> None:
    a, b = two_systems(shift_lookup=4)
    report = compare(a, b, metric="mrr@10", n_resamples=5000)
    overall = report.rows[0]
    assert overall.n == 40
    assert overall.difference == pytest.approx(15 * 0.75 / 40)
    assert overall.significant
    lookup = next(r for r in report.rows if r.value == "lookup")
    howto = next(r for r in report.rows if r.value == "howto")
    assert lookup.significant
    assert not howto.significant
    assert howto.note == "no paired query differs: these 10 paired queries cannot tell them apart"
    assert report.headline.startswith("hybrid vs bm25 on real queries: mrr@10")
    assert report.unpaired == 0


def test_queries_that_score_the_same_under_both_say_they_cannot_tell_them_apart() -> None:
    # Issue 30: four queries at 1 under both printed "+0.000 to +0.000, p 1.0000", which reads as a
    # measured tie; four queries that every system ranks first can tell no two systems apart.
    a = results_document([("real", [per_query(f"q{i}", "real", rank=1) for i in range(4)])], retriever="bm25")
    b = results_document(
        [("real", [per_query(f"q{i}", "real", rank=1) for i in range(4)])], retriever="hybrid"
    )
    report = compare(a, b, metric="mrr@10")
    row = report.rows[0]
    assert not row.interval.defined
    assert math.isnan(row.p_value)
    assert not row.significant
    assert "no one of the 4 paired queries scores differently: these queries cannot tell them apart" in (
        report.headline
    )
    markdown = render_comparison(report, "markdown")
    assert "+0.000 to +0.000" not in markdown
    assert "| real: all queries | 4 | 1.000 | 1.000 | +0.000 | n/a | n/a | - |" in markdown


def test_compare_with_t_test_and_bootstrap_runs_the_named_test() -> None:
    a, b = two_systems(shift_lookup=4)
    assert compare(a, b, metric="mrr@10", test="t").rows[0].p_value < 0.05
    assert compare(a, b, metric="mrr@10", test="bootstrap", n_resamples=3000).rows[0].p_value < 0.05


def test_compare_of_different_queries_is_an_input_error() -> None:
    a = results_document([("one", [per_query("q1", "real", rank=1)])])
    b = results_document([("one", [per_query("q2", "real", rank=1)])])
    with pytest.raises(InputError, match="no query has recall@10 in both results"):
        compare(a, b)


def mixed(ranks_real: list[int | None], ranks_synthetic: list[int | None], retriever: str) -> dict:
    return results_document(
        [("real", [per_query(f"r{i}", "real", rank=r) for i, r in enumerate(ranks_real)]),
         ("synthetic", [per_query(f"s{i}", "synthetic", rank=r) for i, r in enumerate(ranks_synthetic)])],
        retriever=retriever,
    )  # fmt: skip


def test_compare_never_pools_real_and_synthetic_queries() -> None:
    # b is better on the 30 real queries and worse on the 50 synthetic ones: pooled, the two would
    # blur into one verdict that holds for neither.
    a = mixed([None] * 15 + [1] * 15, [1] * 50, "bm25")
    b = mixed([1] * 30, [None] * 20 + [1] * 30, "hybrid")
    report = compare(a, b, n_resamples=2000, by=[])
    assert [(row.origin, row.field, row.n) for row in report.rows] == [
        ("real", None, 30),
        ("synthetic", None, 50),
    ]
    real, synthetic = report.verdicts
    assert real.difference == pytest.approx(0.5)
    assert synthetic.difference == pytest.approx(-0.4)
    assert real.significant
    assert synthetic.significant
    assert report.headline.startswith("hybrid vs bm25 on real queries: recall@10 1.000 vs 0.500")
    assert " On synthetic queries: recall@10 0.600 vs 1.000" in report.headline
    assert "all queries" not in report.headline


def test_slices_are_within_one_origin() -> None:
    a, b = two_systems(shift_lookup=4)
    report = compare(a, b, metric="mrr@10", by=["type", "origin"], n_resamples=500)
    # origin is not a slice: every row is of one origin already.
    assert [row.label for row in report.rows] == [
        "real: all queries",
        "real: type=howto",
        "real: type=lookup",
    ]


def test_unpaired_queries_are_counted_per_origin_and_reported() -> None:
    a = mixed([1] * 10, [1] * 6, "bm25")
    b = results_document(
        [("real", [per_query(f"r{i}", "real", rank=1) for i in [*range(8), 20]]),
         ("synthetic", [per_query(f"s{i}", "synthetic", rank=1) for i in range(6)])],
        retriever="hybrid",
    )  # fmt: skip
    report = compare(a, b, n_resamples=500, by=[])
    assert report.unpaired == 3
    (real,) = report.unpaired_by_origin
    assert (real.origin, real.only_a, real.only_b) == ("real", 2, 1)
    assert report.unpaired_text == "real queries left out: 2 only in bm25's results, 1 only in hybrid's"
    assert report.unpaired_text in report.warnings
    assert [row.n for row in report.verdicts] == [8, 6]


def test_two_chunkings_of_one_corpus_pair_by_query_id() -> None:
    # The same questions evaluated over two chunkings: other gold set names, other passage ids.
    questions = [f"how do I reset setting {i}" for i in range(12)]
    a = results_document(
        [("real-512", [per_query(f"q{i}", "real", rank=2, query=text, gold=[f"doc{i}#512-0"])
                       for i, text in enumerate(questions)])], retriever="chunks-512",
    )  # fmt: skip
    b = results_document(
        [("real-256", [per_query(f"q{i}", "real", rank=1, query=text, gold=[f"doc{i}#256-3"])
                       for i, text in enumerate(questions)])], retriever="chunks-256",
    )  # fmt: skip
    report = compare(a, b, metric="mrr@10", n_resamples=500, by=[])
    assert report.unpaired == 0
    assert report.verdicts[0].n == 12
    assert report.verdicts[0].difference == pytest.approx(0.5)


def test_a_query_id_with_another_question_text_is_not_paired() -> None:
    a = results_document([("real", [per_query(f"q{i}", "real", rank=1) for i in range(5)])])
    b = results_document(
        [("real", [per_query(f"q{i}", "real", rank=1, query="something else" if i == 4 else None)
                   for i in range(5)])], retriever="hybrid",
    )  # fmt: skip
    report = compare(a, b, n_resamples=500, by=[])
    assert report.verdicts[0].n == 4
    assert report.unpaired_by_origin[0].text_differs == 1
    assert "1 with the same id but another question text" in report.unpaired_text


def test_ids_repeating_across_gold_sets_of_one_origin_pair_by_gold_set_too() -> None:
    def document(rank: int, retriever: str) -> dict:
        return results_document(
            [("forum", [per_query(f"q{i}", "real", rank=rank, query=f"forum {i}") for i in range(4)]),
             ("tickets", [per_query(f"q{i}", "real", rank=None, query=f"ticket {i}") for i in range(4)])],
            retriever=retriever,
        )  # fmt: skip

    report = compare(document(3, "bm25"), document(1, "hybrid"), metric="mrr@10", n_resamples=500, by=[])
    assert report.verdicts[0].n == 8
    assert report.unpaired == 0
    assert report.verdicts[0].difference == pytest.approx((1 - 1 / 3) / 2)
    assert any("paired by gold set name and query id" in w for w in report.warnings)


def test_compare_reports_show_each_origin_and_the_unpaired_queries() -> None:
    import json

    from realrecall.calibrate.report import render_comparison

    a = mixed([1] * 10, [1] * 6, "bm25")
    b = mixed([1] * 8, [None] * 6, "hybrid")
    report = compare(a, b, n_resamples=500, by=[])
    markdown = render_comparison(report, "markdown")
    assert "| real: all queries | 8 |" in markdown
    assert "| synthetic: all queries | 6 |" in markdown
    assert "real queries left out: 2 only in bm25's results" in markdown
    data = json.loads(render_comparison(report, "json"))
    assert [row["origin"] for row in data["rows"]] == ["real", "synthetic"]
    assert data["unpaired_by_origin"] == [{"origin": "real", "only_a": 2, "only_b": 0, "text_differs": 0}]


def test_compare_rejects_an_unknown_test() -> None:
    a, b = two_systems(shift_lookup=4)
    with pytest.raises(InputError, match="test must be one of randomization, t, bootstrap, got 'wilcoxon'"):
        compare(a, b, test="wilcoxon")

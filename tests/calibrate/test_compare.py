"""Paired comparison of two retrievers, checked against ranx's own tests on the same per-query values."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

from calibrate.results_builder import per_query, results_document
from realrecall.calibrate import compare
from realrecall.calibrate.statistics import paired_bootstrap_test, paired_t_test, randomization_test
from realrecall.errors import InputError


def scores(seed: int, shift: float, n: int = 60) -> np.ndarray:
    base = np.random.default_rng(seed).random(n)
    return np.clip(base + shift + np.random.default_rng(seed + 100).normal(0, 0.15, n), 0, 1)


def test_randomization_test_agrees_with_ranx_fisher() -> None:
    a = scores(1, 0.0)
    b = np.clip(a + np.random.default_rng(5).normal(0.01, 0.1, a.size), 0, 1)  # p about 0.17
    draws = 20_000
    ranx_p, _ = fisher_randomization_test(a, b, draws, 0.05, 42)
    ours = randomization_test(a, b, n_resamples=draws, rng=np.random.default_rng(0))
    # Two Monte Carlo estimates from independent draws differ by their noise (4 standard errors of the
    # difference), and ours counts the observed labelling too: (b+1)/(B+1) against ranx's b/B moves p by
    # at most 1/(B+1). The old bound (0.01 flat) was tested where both p were about 0, so it said little.
    noise = 4 * np.sqrt(2 * ranx_p * (1 - ranx_p) / draws)
    assert 0.05 < ranx_p < 0.5
    assert ours == pytest.approx(ranx_p, abs=noise + 1 / (draws + 1))


def test_randomization_p_value_is_never_zero_where_ranx_says_zero() -> None:
    a, b = scores(1, 0.0), scores(1, 0.04)  # b is a shifted by 0.04 on every query: no relabelling reaches it
    ranx_p, _ = fisher_randomization_test(a, b, 999, 0.05, 42)
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
    ranx_p, _ = paired_student_t_test(a, b, 0.05)
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
    assert howto.p_value == 1.0
    assert report.headline.startswith("hybrid vs bm25: mrr@10")


def test_compare_with_t_test_and_bootstrap_runs_the_named_test() -> None:
    a, b = two_systems(shift_lookup=4)
    assert compare(a, b, metric="mrr@10", test="t").rows[0].p_value < 0.05
    assert compare(a, b, metric="mrr@10", test="bootstrap", n_resamples=3000).rows[0].p_value < 0.05


def test_compare_of_different_gold_sets_is_an_input_error() -> None:
    a = results_document([("one", [per_query("q1", "real", rank=1)])])
    b = results_document([("two", [per_query("q1", "real", rank=1)])])
    with pytest.raises(InputError, match="no query has recall@10 in both results"):
        compare(a, b)


def test_compare_rejects_an_unknown_test() -> None:
    a, b = two_systems(shift_lookup=4)
    with pytest.raises(InputError, match="choose from randomization, t, bootstrap"):
        compare(a, b, test="wilcoxon")

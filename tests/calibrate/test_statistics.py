"""Intervals and tests checked against statsmodels and scipy, not against a re-derivation of our own."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from realrecall.calibrate.statistics import (
    bootstrap_interval,
    bootstrap_mean_matrix,
    bootstrap_means,
    bootstrap_weighted_mean_matrix,
    bounded_mean_interval,
    estimate_mean,
    gap_interval,
    mover_interval,
    newcombe_interval,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("count", "nobs", "confidence"),
    [(82, 120, 0.95), (0, 12, 0.95), (12, 12, 0.95), (1, 1, 0.95), (37, 50, 0.9), (450, 1000, 0.99)],
)
def test_wilson_interval_equals_statsmodels_wilson(count: int, nobs: int, confidence: float) -> None:
    low, high = proportion_confint(count, nobs, alpha=1 - confidence, method="wilson")
    interval = wilson_interval(count, nobs, confidence)
    assert interval.low == pytest.approx(low, abs=1e-12)
    assert interval.high == pytest.approx(high, abs=1e-12)


def test_wilson_interval_of_no_queries_is_undefined() -> None:
    assert not wilson_interval(0, 0).defined


@pytest.mark.parametrize("batch", [None, 300])
def test_bootstrap_interval_equals_scipy_percentile_bootstrap(batch: int | None) -> None:
    values = np.random.default_rng(1).random(57)
    reference = stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=2000, batch=batch, rng=np.random.default_rng(7)
    ).confidence_interval
    interval = bootstrap_interval(values, n_resamples=2000, rng=np.random.default_rng(7), batch=batch)
    assert interval.low == pytest.approx(reference.low, abs=1e-12)
    assert interval.high == pytest.approx(reference.high, abs=1e-12)


def test_gap_interval_equals_scipy_two_sample_bootstrap() -> None:
    synthetic = np.random.default_rng(2).random(80)
    real = np.random.default_rng(3).random(33) * 0.7

    def difference(s: np.ndarray, r: np.ndarray, axis: int) -> np.ndarray:
        return s.mean(axis=axis) - r.mean(axis=axis)

    reference = stats.bootstrap(
        (synthetic, real), difference, method="percentile", n_resamples=3000, batch=500,
        rng=np.random.default_rng(11),
    ).confidence_interval  # fmt: skip
    interval = gap_interval(synthetic, real, n_resamples=3000, rng=np.random.default_rng(11), batch=500)
    assert interval.low == pytest.approx(reference.low, abs=1e-12)
    assert interval.high == pytest.approx(reference.high, abs=1e-12)


def test_estimate_uses_wilson_for_zero_one_values_and_bootstrap_otherwise() -> None:
    rng = np.random.default_rng(0)
    proportion = estimate_mean([1, 0, 1, 1], binary=True, rng=rng)
    assert proportion.interval.method == "wilson"
    assert proportion.value == 0.75
    reciprocal_ranks = estimate_mean([1.0, 0.5, 0.0, 1 / 3], binary=False, rng=rng)
    assert reciprocal_ranks.interval.method.startswith("bootstrap")
    assert reciprocal_ranks.interval.low <= reciprocal_ranks.value <= reciprocal_ranks.interval.high


# First-relevant-rank distributions near the ceiling (reciprocal ranks 1, 1/2, 1/3, 1/4, 0) and an
# nDCG-like one (1 for 80% of queries, the rest spread over (0, 1)).
_NEAR_CEILING = {
    "mrr 0.96 at rank 1": ([1.0, 0.5, 0.0], [0.96, 0.02, 0.02]),
    "mrr 0.90 at rank 1": ([1.0, 0.5, 1 / 3, 0.25, 0.0], [0.9, 0.04, 0.02, 0.01, 0.03]),
}


def _draw(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if name == "ndcg":
        return np.where(rng.random(n) < 0.8, 1.0, rng.beta(2.0, 2.0, n))
    values, shares = _NEAR_CEILING[name]
    return rng.choice(values, size=n, p=shares)


def _truth(name: str) -> float:
    if name == "ndcg":
        return 0.8 + 0.2 * 0.5
    values, shares = _NEAR_CEILING[name]
    return float(np.dot(values, shares))


@pytest.mark.slow
@pytest.mark.parametrize("name", [*_NEAR_CEILING, "ndcg"])
@pytest.mark.parametrize("n", [10, 30])
def test_mrr_and_ndcg_intervals_near_the_ceiling_keep_their_coverage(name: str, n: int) -> None:
    # Issue 30: the percentile bootstrap of MRR near the ceiling covered the true mean in 0.55 of
    # samples at n = 10 and 0.84 at n = 30 (ten reciprocal ranks of 1 resample to 1.0 every time).
    rng = np.random.default_rng(20261204)
    truth, trials = _truth(name), 400
    covered = 0
    for _ in range(trials):
        interval = estimate_mean(_draw(name, n, rng), binary=False, n_resamples=300, rng=rng).interval
        covered += interval.low <= truth <= interval.high
    assert covered / trials >= 0.93


@pytest.mark.parametrize("name", [*_NEAR_CEILING, "ndcg"])
def test_the_bounded_mean_interval_is_no_wider_than_the_bootstrap_at_300_queries(name: str) -> None:
    # Its spread comes from the data: with 300 queries it is the bootstrap's width, give or take 10%.
    values = _draw(name, 300, np.random.default_rng(5))
    bounded = bounded_mean_interval(values)
    bootstrap = bootstrap_interval(values, n_resamples=5000, rng=np.random.default_rng(6))
    assert bounded.width == pytest.approx(bootstrap.width, rel=0.1)


def test_the_bounded_mean_interval_of_zero_one_values_is_wilsons() -> None:
    values = [1.0] * 17 + [0.0] * 6
    low, high = proportion_confint(17, 23, alpha=0.05, method="wilson")
    interval = bounded_mean_interval(values)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_empty_and_single_value_estimates_do_not_crash() -> None:
    rng = np.random.default_rng(0)
    empty = estimate_mean([], binary=False, rng=rng)
    assert empty.n == 0
    assert math.isnan(empty.value)
    single = estimate_mean([0.5], binary=False, rng=rng)
    assert single.value == 0.5
    assert not single.interval.defined
    assert not gap_interval([1.0], [], rng=rng).defined


def test_bca_interval_equals_scipy_bca() -> None:
    skewed = np.random.default_rng(4).random(57) ** 3  # reciprocal-rank-like: most mass near zero
    reference = stats.bootstrap(
        (skewed,), np.mean, method="BCa", n_resamples=2000, batch=500, rng=np.random.default_rng(7)
    ).confidence_interval
    interval = bootstrap_interval(
        skewed, n_resamples=2000, rng=np.random.default_rng(7), batch=500, method="bca"
    )
    assert interval.method == "bootstrap-bca"
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), abs=1e-12)


def test_bca_gap_interval_equals_scipy_two_sample_bca() -> None:
    synthetic = np.random.default_rng(5).random(40) ** 2
    real = np.random.default_rng(6).random(25) ** 4

    def difference(s: np.ndarray, r: np.ndarray, axis: int) -> np.ndarray:
        return s.mean(axis=axis) - r.mean(axis=axis)

    reference = stats.bootstrap(
        (synthetic, real), difference, method="BCa", n_resamples=2000, batch=400, rng=np.random.default_rng(9)
    ).confidence_interval
    interval = gap_interval(
        synthetic, real, n_resamples=2000, rng=np.random.default_rng(9), batch=400, method="bca"
    )
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), abs=1e-12)


def test_bca_of_identical_values_is_the_value_itself() -> None:
    interval = bootstrap_interval([0.5] * 10, rng=np.random.default_rng(0), method="bca")
    assert (interval.low, interval.high) == (0.5, 0.5)


def test_shared_resampling_of_several_metrics_gives_each_metric_its_own_bootstrap_means() -> None:
    values = np.random.default_rng(8).random((45, 3))
    shared = bootstrap_mean_matrix(values, 500, np.random.default_rng(5))
    for column in range(3):
        alone = bootstrap_means(values[:, column], 500, np.random.default_rng(5))
        assert shared[:, column] == pytest.approx(alone, abs=1e-12)


@pytest.mark.parametrize("batch", [None, 7])
def test_weighted_bootstrap_means_are_the_weighted_means_of_each_resample_drawn_in_batches(
    batch: int | None,
) -> None:
    # Issue 30: the weighted bootstrap held resamples x questions arrays at once (2.76 GB at 5.7k
    # questions x 20k resamples); drawn batch by batch it gives each resample's Hajek mean all the same.
    rng = np.random.default_rng(3)
    values = rng.random((40, 2))
    weights = 1.0 / rng.choice([0.1, 0.5, 1.0], size=40)
    draws = bootstrap_weighted_mean_matrix(values, weights, 30, np.random.default_rng(9), batch=batch)
    replay = np.random.default_rng(9)
    size = batch or 30
    expected = []
    for start in range(0, 30, size):
        for index in replay.integers(0, 40, (min(size, 30 - start), 40)):
            expected.append([np.average(values[index, j], weights=weights[index]) for j in range(2)])
    assert draws == pytest.approx(np.array(expected), rel=1e-12)


def test_gap_interval_inside_calibrate_equals_scipy_on_the_same_seed() -> None:
    from calibrate.results_builder import per_query, results_document
    from realrecall.calibrate import calibrate

    real_ranks = [1, 2, None, 4, 1, 3, 1, None, 2, 6, 1, 1]
    synthetic_ranks = [1, 1, 2, 1, None, 1, 3, 1, 1, 2, 1, 1, 1, 5, 1]
    document = results_document(
        [("s", [per_query(f"s{i}", "synthetic", rank=r) for i, r in enumerate(synthetic_ranks)]),
         ("r", [per_query(f"r{i}", "real", rank=r) for i, r in enumerate(real_ranks)])]
    )  # fmt: skip
    report = calibrate(document, metric="mrr@10", by=[], seed=3)
    s = np.array([1 / r if r else 0.0 for r in synthetic_ranks])
    r = np.array([1 / q if q else 0.0 for q in real_ranks])
    # mrr@10 is the last metric, but every metric shares the one draw of the all-queries slice.
    reference = stats.bootstrap(
        (s, r), lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis), method="percentile",
        n_resamples=2000, rng=np.random.default_rng(3),
    ).confidence_interval  # fmt: skip
    # Never narrower than the MOVER interval of the two bounded-mean intervals (12 and 15 reciprocal
    # ranks: here it reaches further down than the bootstrap).
    floor = mover_interval(s.mean(), bounded_mean_interval(s), r.mean(), bounded_mean_interval(r))
    gap = report.overall("mrr@10").gap_interval
    expected = (min(reference.low, floor.low), max(reference.high, floor.high))
    assert (gap.low, gap.high) == pytest.approx(expected, abs=1e-12)
    assert floor.low < reference.low


@pytest.mark.parametrize(
    ("count1", "nobs1", "count2", "nobs2", "confidence"),
    [(47, 50, 5, 6, 0.95), (6, 6, 6, 6, 0.95), (0, 6, 0, 6, 0.95), (1, 1, 0, 1, 0.95), (30, 40, 12, 30, 0.9),
     (450, 500, 201, 300, 0.99), (3, 80, 6, 6, 0.95)],
)  # fmt: skip
def test_newcombe_interval_equals_statsmodels_newcomb(
    count1: int, nobs1: int, count2: int, nobs2: int, confidence: float
) -> None:
    low, high = confint_proportions_2indep(
        count1, nobs1, count2, nobs2, method="newcomb", compare="diff", alpha=1 - confidence
    )
    interval = newcombe_interval(count1, nobs1, count2, nobs2, confidence)
    assert interval.method == "newcombe"
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)


def test_newcombe_interval_of_an_empty_set_is_undefined() -> None:
    assert not newcombe_interval(3, 5, 0, 0).defined
    assert not newcombe_interval(0, 0, 3, 5).defined


def test_gap_of_a_binary_metric_inside_calibrate_is_newcombes_interval() -> None:
    from calibrate.results_builder import per_query, ranks_set, results_document
    from realrecall.calibrate import calibrate

    document = results_document(
        [("s", ranks_set("synthetic", 47, 3, prefix="s", type="lookup")),
         ("r", [*ranks_set("real", 5, 1, prefix="r", type="lookup"),
                per_query("h", "real", rank=None, type="howto")])]
    )  # fmt: skip
    report = calibrate(document, metric="recall@10", by=["type"])
    overall = report.overall("recall@10").gap_interval
    expected = confint_proportions_2indep(47, 50, 5, 7, method="newcomb", compare="diff")
    assert overall.method == "newcombe"
    assert (overall.low, overall.high) == pytest.approx(expected, abs=1e-12)
    lookup = next(g for g in report.gaps if g.metric == "recall@10" and g.value == "lookup")
    expected = confint_proportions_2indep(47, 50, 5, 6, method="newcomb", compare="diff")
    assert (lookup.gap_interval.low, lookup.gap_interval.high) == pytest.approx(expected, abs=1e-12)
    # Not a proportion: MRR keeps the bootstrap (never narrower than its bounded-mean floor).
    assert report.overall("mrr@10").gap_interval.method.startswith("bootstrap")


@pytest.mark.parametrize(
    ("p_synthetic", "p_real"),
    [(0.99, 0.9),  # the case: the bootstrap of 6 real queries covered the true gap 44% of the time
     (0.9, 0.9),  # no gap: a 95% interval should exclude zero about 5% of the time, not half
     (0.8, 0.5)],
)  # fmt: skip
def test_newcombe_gap_interval_covers_the_true_gap_with_six_real_queries(
    p_synthetic: float, p_real: float
) -> None:
    # A seeded simulation: 50 synthetic and 6 real queries drawn 2000 times; count how often the 95%
    # interval of the gap holds the true gap. Monte Carlo error: about 0.005 at 95% coverage.
    rng = np.random.default_rng(2026)
    trials, n_synthetic, n_real = 2000, 50, 6
    hits_synthetic = rng.binomial(n_synthetic, p_synthetic, trials)
    hits_real = rng.binomial(n_real, p_real, trials)
    truth = p_synthetic - p_real
    intervals = [
        newcombe_interval(int(s), n_synthetic, int(r), n_real)
        for s, r in zip(hits_synthetic, hits_real, strict=True)
    ]
    coverage = np.mean([i.low <= truth <= i.high for i in intervals])
    assert coverage >= 0.93
    if truth == 0:
        assert np.mean([not i.low <= 0 <= i.high for i in intervals]) <= 0.07
    # The bootstrap it replaces, on the same kind of draws (fewer: each is a resampling), falls short.
    if p_synthetic == 0.99:
        booted = []
        for s, r in zip(hits_synthetic[:300], hits_real[:300], strict=True):
            synthetic = np.r_[np.ones(s), np.zeros(n_synthetic - s)]
            real = np.r_[np.ones(r), np.zeros(n_real - r)]
            interval = gap_interval(synthetic, real, n_resamples=1000, rng=rng)
            booted.append(interval.low <= truth <= interval.high)
        assert np.mean(booted) < 0.7

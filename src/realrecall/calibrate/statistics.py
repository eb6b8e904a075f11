"""The statistics of calibrate and compare: intervals of a mean and of a gap, and paired tests.

Intervals, for a mean over queries and for the gap between two sets of queries:

- Proportions (a metric the registry declares binary, 0 or 1 per query, such as ``recall@k``): the
  Wilson score interval,
  ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``; equals statsmodels
  ``proportion_confint(count, nobs, alpha, method="wilson")``.
- Any other mean (MRR, nDCG, precision): the percentile bootstrap, resampling queries with
  replacement; equals ``scipy.stats.bootstrap((values,), np.mean, method="percentile")`` drawn from the
  same ``numpy.random.Generator`` with the same ``batch``. ``method="bca"`` gives the bias-corrected and
  accelerated interval (Efron and Tibshirani 14.3, jackknife acceleration), equal to scipy's
  ``method="BCa"``; it suits skewed per-query values such as reciprocal ranks. Near the ceiling either
  collapses (ten queries that all rank their passage first resample to 1.0 every time: coverage 0.34
  at n = 10), so what calibrate quotes is never narrower than :func:`bounded_mean_interval`, the Wilson
  score interval of a mean of values in [0, 1] with its spread taken from the data
  (:func:`at_least`).
- The gap (synthetic minus real) of a binary metric, a difference of two independent proportions:
  Newcombe's hybrid score interval (method 10 of Newcombe 1998), ``p1 - p2 - sqrt((p1 - l1)² + (u2 -
  p2)²)`` to ``p1 - p2 + sqrt((u1 - p1)² + (p2 - l2)²)`` with the Wilson limits ``l``, ``u`` of each set;
  equals statsmodels ``confint_proportions_2indep(method="newcomb", compare="diff")``. It holds its
  coverage with a handful of queries, where the bootstrap does not: with 6 real queries the bootstrap
  gap interval covered the true gap in 44% of trials.
- The gap of any other metric: the bootstrap resampling the two sets independently; equals
  ``scipy.stats.bootstrap((synthetic, real), lambda s, r, axis: s.mean(axis) - r.mean(axis))``; what
  calibrate quotes is never narrower than the MOVER interval (Zou and Donner 2008: Newcombe's method
  applied to any two intervals, :func:`mover_interval`) of the two bounded-mean intervals.

Paired tests of two systems on the same queries (``compare``), as ranx offers them:

- :func:`randomization_test` (ranx ``"fisher"``): Fisher's randomization test. Under the null the two
  systems' scores for a query are exchangeable, so each query's difference keeps or flips its sign at
  random; p = (b + 1) / (B + 1), b of the B = ``n_resamples`` relabellings reaching the observed absolute
  mean difference. The +1 counts the observed labelling itself, so p is never 0 (ranx's estimate b / B
  is 0 whenever no relabelling reaches it, claiming more than B draws can show).
- :func:`paired_t_test` (ranx ``"student"``): the two-sided paired t-test, ``scipy.stats.ttest_rel``.
- :func:`paired_bootstrap_test`: resample queries, shift the resampled mean differences to mean zero;
  p = (b + 1) / (B + 1), b of the B resamples at least as far from zero as the observed difference.
- :func:`paired_difference_interval`: the percentile bootstrap interval of the mean paired difference.

Resampling is vectorised in batches of at most about four million drawn indices, so memory stays flat
for large sets.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import ttest_rel

from realrecall.calibrate.settings import BOOTSTRAP_METHODS, check_resampling
from realrecall.errors import InputError
from realrecall.settings import check_choice, convert

__all__ = [
    "BOOTSTRAP_METHODS",
    "PSEUDO_QUERIES",
    "Estimate",
    "Interval",
    "at_least",
    "bootstrap_interval",
    "bootstrap_mean_matrix",
    "bootstrap_means",
    "bootstrap_weighted_mean_matrix",
    "bounded_mean_interval",
    "check_settings",
    "estimate_mean",
    "gap_interval",
    "gap_interval_from_draws",
    "interval_from_draws",
    "kendall_tau_b",
    "mover_interval",
    "newcombe_interval",
    "paired_bootstrap_test",
    "paired_difference_interval",
    "paired_t_test",
    "randomization_test",
    "resampled_p_value",
    "wilson_interval",
    "z_value",
]

_MAX_DRAWN = 4_000_000
# Identical systems give exactly equal means; float sums can still differ in the last bit.
_TIE = 1e-12


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval; ``low``/``high`` are NaN when it cannot be computed."""

    low: float
    high: float
    confidence: float
    method: str

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def defined(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    @classmethod
    def undefined(cls, confidence: float, method: str = "none") -> Interval:
        return cls(math.nan, math.nan, confidence, method)


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` queries with its interval; ``value`` is NaN when ``n`` is 0."""

    value: float
    interval: Interval
    n: int


def z_value(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.95996... for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be between 0 and 1, got {confidence}", hint="e.g. 0.95")
    return float(ndtri(1.0 - (1.0 - confidence) / 2.0))


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n`` (statsmodels ``method="wilson"``).

    Counts may be fractional: effective counts of weighted questions (Kish) go through it too.
    """
    if n <= 0:
        return Interval.undefined(confidence, "wilson")
    z = z_value(confidence)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half), confidence, "wilson")


PSEUDO_QUERIES = 10
"""Queries' worth of the widest spread a mean in [0, 1] allows that :func:`bounded_mean_interval` adds
to the spread it sees: a sample that shows none (ten reciprocal ranks of 1) is not taken at its word."""


def bounded_mean_interval(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    *,
    weights: Sequence[float] | np.ndarray | None = None,
    pseudo: float = PSEUDO_QUERIES,
) -> Interval:
    """Score interval of a mean of per-query values in [0, 1] (MRR, nDCG, precision): Wilson's interval
    at the mean ``m`` over ``n / phi`` queries.

    A value in [0, 1] with mean ``m`` has variance at most ``m (1 - m)`` (a proportion's), so the
    interval solves ``(m - mu)² <= z² phi mu (1 - mu) / n`` (a quasi-binomial score interval) with the
    dispersion ``phi = s² / (m (1 - m))`` of the sample (variance ``s²``, ``ddof=1``), shrunk towards its
    bound 1 as if ``pseudo`` more queries had it: ``phi = (n phi_sample + pseudo) / (n + pseudo)``, never
    above 1. With values 0 and 1 it is Wilson's interval; at 300 queries it is as wide as the bootstrap;
    at 10 queries near the ceiling it keeps 95% coverage where the bootstrap's was 34-64%
    (``tests/calibrate/test_statistics.py`` simulates it). ``weights``: Horvitz-Thompson weights (Hajek's
    mean, Kish's effective count for ``n``). Undefined without a value.
    """
    array = np.asarray(values, dtype=np.float64)
    w = np.ones_like(array) if weights is None else np.asarray(weights, dtype=np.float64)
    if array.size == 0:
        return Interval.undefined(confidence, "score")
    mean = float(np.sum(w * array) / np.sum(w))
    n = float(w.sum() ** 2 / np.sum(w**2))
    bound = mean * (1.0 - mean)
    if array.size > 1 and bound > 0:
        spread = float(np.sum(w * (array - mean) ** 2) / np.sum(w)) * array.size / (array.size - 1)
        observed = spread / bound
    else:  # one value, or every value at 0 or 1: nothing seen of the spread
        observed = 1.0
    dispersion = min(1.0, (n * observed + pseudo) / (n + pseudo))
    interval = wilson_interval(mean * n / dispersion, n / dispersion, confidence)
    return replace(interval, method="score")


def at_least(interval: Interval, floor: Interval) -> Interval:
    """``interval`` widened to hold ``floor`` (their hull): a bootstrap interval never narrower than the
    score interval of a bounded mean. ``floor`` undefined: ``interval`` as it is."""
    if not floor.defined:
        return interval
    if not interval.defined:
        return floor
    if floor.low >= interval.low and floor.high <= interval.high:
        return interval
    return Interval(
        min(interval.low, floor.low),
        max(interval.high, floor.high),
        interval.confidence,
        f"{interval.method}+score",
    )


def mover_interval(
    first: float, first_interval: Interval, second: float, second_interval: Interval
) -> Interval:
    """The interval of ``first - second`` from each estimate's own interval (MOVER, Zou and Donner 2008):
    ``d - sqrt((p1 - l1)² + (u2 - p2)²)`` to ``d + sqrt((u1 - p1)² + (p2 - l2)²)``. With Wilson
    intervals it is Newcombe's hybrid score interval."""
    if not (first_interval.defined and second_interval.defined):
        return Interval.undefined(first_interval.confidence, "mover")
    below = math.hypot(first - first_interval.low, second_interval.high - second)
    above = math.hypot(first_interval.high - first, second - second_interval.low)
    return Interval(first - second - below, first - second + above, first_interval.confidence, "mover")


def newcombe_interval(
    successes_1: float, n_1: float, successes_2: float, n_2: float, confidence: float = 0.95
) -> Interval:
    """Newcombe's hybrid score interval of ``p1 - p2`` for two independent proportions.

    Method 10 of Newcombe (1998), from the Wilson limits of each proportion; statsmodels
    ``confint_proportions_2indep(method="newcomb", compare="diff")``. Within [-1, 1] by construction.
    """
    if n_1 <= 0 or n_2 <= 0:
        return Interval.undefined(confidence, "newcombe")
    p1, p2 = successes_1 / n_1, successes_2 / n_2
    first, second = (
        wilson_interval(successes_1, n_1, confidence),
        wilson_interval(successes_2, n_2, confidence),
    )
    return replace(mover_interval(p1, first, p2, second), method="newcombe")


def bootstrap_means(
    values: Sequence[float] | np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    batch: int | None = None,
) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``values``: shape ``(n_resamples,)``."""
    array = np.asarray(values, dtype=np.float64)
    size = batch or _default_batch(array.size, n_resamples)
    out = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, size):
        stop = min(start + size, n_resamples)
        index = rng.integers(0, array.size, (stop - start, array.size))
        out[start:stop] = array[index].mean(axis=-1)
    return out


def bootstrap_mean_matrix(
    values: np.ndarray, n_resamples: int, rng: np.random.Generator, *, batch: int | None = None
) -> np.ndarray:
    """Means of every column of ``values`` (n queries x m metrics) over the same resamples: ``(B, m)``.

    One draw of query indices serves every metric, so a slice costs one resampling, not one per
    metric; each resample's counts times the values give its means (a matrix product). The draws are
    those of :func:`bootstrap_means`, so a single column gives the same means (to rounding).
    """
    n = values.shape[0]
    size = batch or _default_batch(n, n_resamples)
    out = np.empty((n_resamples, values.shape[1]), dtype=np.float64)
    for start in range(0, n_resamples, size):
        stop = min(start + size, n_resamples)
        out[start:stop] = _resample_counts(rng, n, stop - start) @ values / n
    return out


def bootstrap_weighted_mean_matrix(
    values: np.ndarray,
    weights: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    batch: int | None = None,
) -> np.ndarray:
    """Weighted (Hajek) means of every column of ``values`` over resamples of the queries, each query
    keeping its weight: ``sum(c_i w_i x_i) / sum(c_i w_i)`` with ``c_i`` the times query i is drawn.

    Shape ``(B, m)``. Drawn in batches of at most about four million indices, as
    :func:`bootstrap_mean_matrix` draws them (the same draws for the same generator), so memory stays
    flat: 100,000 questions x 2,000 resamples held at once were 1.6 GB per array.
    """
    n = values.shape[0]
    size = batch or _default_batch(n, n_resamples)
    weighted = np.asarray(weights, dtype=np.float64)[:, None] * values
    out = np.empty((n_resamples, values.shape[1]), dtype=np.float64)
    for start in range(0, n_resamples, size):
        stop = min(start + size, n_resamples)
        counts = _resample_counts(rng, n, stop - start)
        out[start:stop] = (counts @ weighted) / (counts @ weights)[:, None]
    return out


def _resample_counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """How many times each of ``n`` queries is drawn in each of ``resamples`` resamples: ``(B, n)``."""
    index = rng.integers(0, n, (resamples, n))
    index += np.arange(resamples)[:, None] * n
    return np.bincount(index.ravel(), minlength=resamples * n).reshape(resamples, n).astype(np.float64)


def interval_from_draws(
    draws: np.ndarray, values: np.ndarray, *, confidence: float = 0.95, method: str = "percentile"
) -> Interval:
    """The interval of the mean of ``values`` from its bootstrap means ``draws``."""
    if method == "bca":
        return _bca(draws, float(values.mean()), [_jackknife_means(values)], confidence)
    return _percentile(draws, confidence)


def gap_interval_from_draws(
    draws: np.ndarray,
    synthetic: np.ndarray,
    real: np.ndarray,
    *,
    confidence: float = 0.95,
    method: str = "percentile",
) -> Interval:
    """The interval of ``mean(synthetic) - mean(real)`` from its bootstrap differences ``draws``."""
    if method == "bca":
        # Jackknife one set at a time, the other held at its mean (scipy's multi-sample acceleration).
        jackknife = [_jackknife_means(synthetic) - real.mean(), synthetic.mean() - _jackknife_means(real)]
        return _bca(draws, float(synthetic.mean() - real.mean()), jackknife, confidence)
    return _percentile(draws, confidence)


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator,
    batch: int | None = None,
    method: str = "percentile",
) -> Interval:
    """Bootstrap interval of the mean (``percentile`` or ``bca``); undefined below two values."""
    _check_method(method)
    array = np.asarray(values, dtype=np.float64)
    if array.size < 2:
        return Interval.undefined(confidence, "bootstrap")
    means = bootstrap_means(array, n_resamples, rng, batch=batch)
    return interval_from_draws(means, array, confidence=confidence, method=method)


def gap_interval(
    synthetic: Sequence[float] | np.ndarray,
    real: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator,
    batch: int | None = None,
    method: str = "percentile",
) -> Interval:
    """Bootstrap interval of ``mean(synthetic) - mean(real)``, the two sets resampled apart."""
    _check_method(method)
    s = np.asarray(synthetic, dtype=np.float64)
    r = np.asarray(real, dtype=np.float64)
    if s.size == 0 or r.size == 0 or s.size + r.size < 3:
        return Interval.undefined(confidence, "bootstrap")
    size = batch or _default_batch(max(s.size, r.size), n_resamples)
    gaps = np.empty(n_resamples, dtype=np.float64)
    # Drawn batch by batch, synthetic then real, as scipy.stats.bootstrap draws its samples.
    for start in range(0, n_resamples, size):
        stop = min(start + size, n_resamples)
        s_means = s[rng.integers(0, s.size, (stop - start, s.size))].mean(axis=-1)
        r_means = r[rng.integers(0, r.size, (stop - start, r.size))].mean(axis=-1)
        gaps[start:stop] = s_means - r_means
    return gap_interval_from_draws(gaps, s, r, confidence=confidence, method=method)


def estimate_mean(
    values: Sequence[float] | np.ndarray,
    *,
    binary: bool,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator,
    method: str = "percentile",
) -> Estimate:
    """The mean with its interval: Wilson for a ``binary`` metric (a proportion), else the bootstrap
    (``method``). Whether a metric is binary is the metric registry's word (``is_binary``), never
    read off the values: MRR values that happen to be all 0 or 1 are still not a proportion."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return Estimate(math.nan, Interval.undefined(confidence), 0)
    value = float(array.mean())
    if binary:
        interval = wilson_interval(int(array.sum()), int(array.size), confidence)
    else:
        interval = at_least(
            bootstrap_interval(array, confidence=confidence, n_resamples=n_resamples, rng=rng, method=method),
            bounded_mean_interval(array, confidence) if array.size > 1 else Interval.undefined(confidence),
        )
    return Estimate(value, interval, int(array.size))


def randomization_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> float:
    """Two-sided Fisher randomization (sign-flip) test of the mean paired difference (ranx ``fisher``)."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size == 0:
        return math.nan
    observed = abs(difference.mean())
    exceed = 0
    size = _default_batch(difference.size, n_resamples)
    for start in range(0, n_resamples, size):
        count = min(size, n_resamples - start)
        signs = rng.integers(0, 2, (count, difference.size)) * 2 - 1
        exceed += int(np.count_nonzero(np.abs((signs * difference).mean(axis=1)) >= observed - _TIE))
    return resampled_p_value(exceed, n_resamples)


def paired_t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value (ranx ``student``); 1.0 when every difference is zero."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size < 2:
        return math.nan
    if np.all(np.abs(difference) <= _TIE):
        return 1.0
    return float(ttest_rel(b, a).pvalue)


def paired_bootstrap_test(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> float:
    """Two-sided paired bootstrap test: resampled mean differences, shifted to the null of zero."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size == 0:
        return math.nan
    observed = difference.mean()
    means = bootstrap_means(difference, n_resamples, rng)
    return resampled_p_value(
        int(np.count_nonzero(np.abs(means - observed) >= abs(observed) - _TIE)), n_resamples
    )


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of the last axis of ``x`` against ``y``, for every row at once (``scipy.stats.
    kendalltau``'s statistic, row by row); NaN where every value of one row is tied.

    ``(concordant - discordant) / sqrt(pairs untied in x * pairs untied in y)``: vectorised over pairs,
    so the thousands of resampled taus of a few systems cost one array operation, not one call each.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    first, second = np.triu_indices(x.shape[-1], k=1)
    dx = np.sign(x[..., first] - x[..., second])
    dy = np.sign(y[..., first] - y[..., second])
    untied = np.count_nonzero(dx, axis=-1) * np.count_nonzero(dy, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, np.sum(dx * dy, axis=-1) / np.sqrt(untied), np.nan)


def resampled_p_value(reaching: int, n_resamples: int) -> float:
    """``(b + 1) / (B + 1)``: b of B resamples reach the observed statistic, and so does the observation.

    Never 0: B resamples cannot show a p below 1 / (B + 1) (Davison and Hinkley 1997, eq. 4.11), and a
    p of 0 would read as impossible under the null.
    """
    return (reaching + 1) / (n_resamples + 1)


def paired_difference_interval(
    a: np.ndarray, b: np.ndarray, *, confidence: float, n_resamples: int, rng: np.random.Generator
) -> Interval:
    """Percentile bootstrap interval of ``mean(b - a)``, resampling the pairs; undefined below two."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size < 2:
        return Interval.undefined(confidence)
    draws = bootstrap_means(difference, n_resamples, rng)
    return replace(_percentile(draws, confidence), method="paired bootstrap")


def _percentile(samples: np.ndarray, confidence: float) -> Interval:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high), confidence, "bootstrap")


# Each resample is a float64 per draw held in memory at once: beyond this, a typo, not more precision.
def check_settings(
    *, confidence: float, n_resamples: int, alpha: float | None = None, seed: int | None = None
) -> None:
    """Reject a confidence level, resample count, significance level or seed that makes no sense: their
    types, then the rules ``calibrate.settings.check_resampling`` states once for every stage."""
    check_resampling(
        confidence=typing.cast(float, convert("confidence", confidence, float)),
        n_resamples=typing.cast(int, convert("n_resamples", n_resamples, int)),
        alpha=None if alpha is None else typing.cast(float, convert("alpha", alpha, float)),
        seed=None if seed is None else typing.cast(int, convert("seed", seed, int)),
    )


def _jackknife_means(values: np.ndarray) -> np.ndarray:
    return (values.sum() - values) / (values.size - 1) if values.size > 1 else values.copy()


def _bca(draws: np.ndarray, estimate: float, jackknife: list[np.ndarray], confidence: float) -> Interval:
    """BCa interval from the bootstrap draws and the jackknife estimates of each sample."""
    alpha = (1.0 - confidence) / 2.0
    below = np.count_nonzero(draws < estimate) + np.count_nonzero(draws <= estimate)
    z0 = float(ndtri(below / (2.0 * draws.size)))
    numerator = denominator = 0.0
    for theta in jackknife:
        if theta.size < 2:
            continue
        spread = (theta.size - 1) * (theta.mean() - theta)
        numerator += float(np.sum(spread**3)) / theta.size**3
        denominator += float(np.sum(spread**2)) / theta.size**2
    # No spread at all (every value equal): no acceleration to estimate.
    acceleration = numerator / (6.0 * denominator**1.5) if denominator > 0 else 0.0
    levels = []
    for z in (float(ndtri(alpha)), -float(ndtri(alpha))):
        shifted = z0 + z
        levels.append(float(ndtr(z0 + shifted / (1.0 - acceleration * shifted))))
    if not all(np.isfinite(levels)):
        # The estimate lies outside every draw (z0 infinite): BCa is undefined, percentile is not.
        return _percentile(draws, confidence)
    low, high = np.quantile(draws, levels)
    return Interval(float(low), float(high), confidence, "bootstrap-bca")


def _check_method(method: str) -> None:
    check_choice("bootstrap", method, BOOTSTRAP_METHODS)


def _default_batch(n: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, _MAX_DRAWN // max(1, n)))

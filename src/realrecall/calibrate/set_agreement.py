"""Do two query sets order the same systems alike, and can each tell the systems apart at all?

Given every system's per-query scores on set A (say, real questions) and on set B (synthetic ones):

- ``tau``: Kendall's tau-b between the systems' means on A and on B (``scipy.stats.kendalltau``).
  ``tau_ci``: the percentile interval of tau over bootstrap resamples of the queries, A's and B's
  drawn apart, every system's mean taken on the same draw.
- ``split_half_tau``: A's own noise floor. A's queries are split at random into two halves (sizes
  floor(n/2) and ceil(n/2)), tau is taken between the systems' means on the halves, and the median and
  the percentile interval over ``n_splits`` splits are reported. Two halves of one set differ only by
  which queries were drawn, so a B whose tau with A reaches this floor orders the systems as well as
  more of A's own queries would; a tau below the floor's interval is disagreement that query noise does
  not explain. (The halves hold half of A's queries, so the floor is a conservative yardstick: it is
  lower than tau between A and a second set of A's full size would be.)
- ``pairs_separated``: the share of system pairs whose per-query differences a two-sided paired
  t-test (``scipy.stats.ttest_rel``) finds significant at ``alpha``, on A and on B. Beside it, the
  median share on random subsets of A of B's size (``a_at_b_size``): a B that separates fewer pairs
  than that is less discriminative per query, not merely smaller. A set that separates fewer than half
  of the pairs (:data:`MIN_SEPARATED`) is called too small to separate these systems.

Reference (TREC DL 2023, nDCG@10 with NIST labels, 35 runs, 51 human vs 31 synthetic queries): tau
0.8487 (the track overview's figure); split-half median about 0.82; pairs separated 0.763 and 0.739.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import kendalltau, ttest_rel

from realrecall.calibrate.query_scores import QueryScores
from realrecall.calibrate.settings import AgreementSettings
from realrecall.calibrate.statistics import Interval, bootstrap_mean_matrix, kendall_tau_b
from realrecall.errors import InputError
from realrecall.settings import settings_with

__all__ = ["MIN_SEPARATED", "SEPARATION_TEST", "SetAgreement", "pairs_separated", "set_agreement"]

MIN_SEPARATED = 0.5
"""A set separating fewer than this share of the system pairs is too small to separate the systems."""
SEPARATION_TEST = "paired t-test (scipy.stats.ttest_rel), two-sided"
# Draws of A at B's size: the median share is stable to about 0.005 at this count on DL 2023.
_SUBSAMPLES = 200


@dataclass(frozen=True)
class SetAgreement:
    """How two query sets agree on an order of systems (see the module doc for each figure)."""

    measure: str
    systems: tuple[str, ...]
    means_a: tuple[float, ...]
    means_b: tuple[float, ...]
    n_queries_a: int
    n_queries_b: int
    tau: float
    tau_p_value: float
    tau_ci: Interval
    split_half_median: float
    split_half_ci: Interval
    separated_a: float
    separated_b: float
    separated_a_at_b_size: float
    alpha: float
    n_splits: int
    n_resamples: int
    seed: int
    dropped_a: int = 0
    dropped_b: int = 0

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_pairs(self) -> int:
        return self.n_systems * (self.n_systems - 1) // 2

    @property
    def agreement_verdict(self) -> str:
        """Does B agree with A as well as A agrees with itself? One sentence."""
        floor, low = self.split_half_median, self.split_half_ci.low
        tau = f"tau {self.tau:.3f}"
        if math.isnan(self.tau):
            return "tau is undefined: one set ties every system, so it cannot order them."
        if math.isnan(floor):
            return f"{tau}; A has too few queries for a split-half floor, so there is no yardstick."
        base = f"A's split-half floor, {floor:.3f} (median; {_ci(self.split_half_ci)})"
        if self.tau >= floor:
            return f"{tau} reaches {base}: B orders the systems as well as A agrees with itself."
        if self.tau >= low:
            return (
                f"{tau} is below {base} but within its spread: B agrees with A about as well as A "
                "agrees with itself."
            )
        return (
            f"{tau} is below {base}, under its whole spread: B orders the systems differently from A "
            "beyond what query noise explains."
        )

    @property
    def power_verdict(self) -> str:
        """Is either set too small to separate the systems? One sentence."""
        pairs = f"of the {self.n_pairs} system pairs at alpha {self.alpha:g}"
        parts = [
            f"A ({self.n_queries_a} queries) separates {self.separated_a:.1%} and B ({self.n_queries_b}) "
            f"{self.separated_b:.1%} {pairs}; random subsets of A of B's size separate "
            f"{self.separated_a_at_b_size:.1%}."
        ]
        small = [
            name
            for name, share in (("A", self.separated_a), ("B", self.separated_b))
            if share < MIN_SEPARATED
        ]
        if small:
            parts.append(
                f"{' and '.join(small)} {'is' if len(small) == 1 else 'are'} too small to separate these "
                f"systems (under {MIN_SEPARATED:.0%} of the pairs): label more queries."
            )
        else:
            parts.append("Neither set is too small to separate most of these systems.")
        if self.separated_b < self.separated_a_at_b_size:
            parts.append("B separates fewer pairs than as many of A's queries would.")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "n_systems": self.n_systems,
            "n_queries": {"a": self.n_queries_a, "b": self.n_queries_b},
            "tau": _rounded(self.tau),
            "tau_p_value": self.tau_p_value,
            "tau_ci": _interval(self.tau_ci),
            "split_half_tau": {
                "median": _rounded(self.split_half_median),
                "ci": _interval(self.split_half_ci),
                "n_splits": self.n_splits,
            },
            "pairs_separated": {
                "a": _rounded(self.separated_a),
                "b": _rounded(self.separated_b),
                "a_at_b_size": _rounded(self.separated_a_at_b_size),
                "test": SEPARATION_TEST,
                "alpha": self.alpha,
                "n_pairs": self.n_pairs,
            },
            "agreement": self.agreement_verdict,
            "power": self.power_verdict,
            "systems": [
                {"name": name, "a": _rounded(a), "b": _rounded(b)}
                for name, a, b in zip(self.systems, self.means_a, self.means_b, strict=True)
            ],
            "dropped_queries": {"a": self.dropped_a, "b": self.dropped_b},
            "n_resamples": self.n_resamples,
            "seed": self.seed,
        }


def set_agreement(
    a: QueryScores,
    b: QueryScores,
    *,
    settings: AgreementSettings | None = None,
    **options: Any,
) -> SetAgreement:
    """Agreement of query sets ``a`` and ``b`` over the systems both score (see the module doc).

    ``settings`` (``AgreementSettings``, or its fields as keywords over it): the t-tests' ``alpha``,
    the intervals' ``confidence``, tau's ``n_resamples``, the split-half floor's ``n_splits``, the seed.
    """
    settings = settings_with(AgreementSettings, settings, options, what="set_agreement")
    alpha, confidence, n_resamples = settings.alpha, settings.confidence, settings.n_resamples
    n_splits, seed = settings.n_splits, settings.seed
    shared = [name for name in a.systems if name in b.systems]
    if len(shared) < 3:
        raise InputError(
            f"{len(shared)} system(s) are scored on both sets; tau needs at least 3",
            hint="score the same systems (same run names) on both sets",
        )
    a, b = a.select_systems(shared), b.select_systems(shared)
    rng = np.random.default_rng(seed)
    means_a, means_b = a.means, b.means
    with warnings.catch_warnings():  # a set that ties every system: tau is NaN, said in the verdict
        warnings.simplefilter("ignore", RuntimeWarning)
        outcome = kendalltau(means_a, means_b)
    # Each figure draws from its own stream, so asking for more splits leaves tau's interval alone.
    tau_rng, split_rng, subsample_rng = rng.spawn(3)
    median, spread = split_half(a.values, n_splits, confidence, split_rng)
    return SetAgreement(
        measure=a.measure,
        systems=tuple(shared),
        means_a=tuple(float(v) for v in means_a),
        means_b=tuple(float(v) for v in means_b),
        n_queries_a=len(a.query_ids),
        n_queries_b=len(b.query_ids),
        tau=float(outcome.statistic),
        tau_p_value=float(outcome.pvalue),
        tau_ci=_tau_interval(a.values, b.values, confidence, n_resamples, tau_rng),
        split_half_median=median,
        split_half_ci=spread,
        separated_a=pairs_separated(a.values, alpha),
        separated_b=pairs_separated(b.values, alpha),
        separated_a_at_b_size=_subsampled_separation(a.values, len(b.query_ids), alpha, subsample_rng),
        alpha=alpha,
        n_splits=n_splits,
        n_resamples=n_resamples,
        seed=seed,
        dropped_a=a.dropped,
        dropped_b=b.dropped,
    )


def pairs_separated(values: np.ndarray, alpha: float) -> float:
    """Share of system pairs (rows of ``values``) a paired t-test over the columns separates at ``alpha``.

    A pair whose differences are all zero is not separated (scipy gives no p-value for it).
    """
    first, second = np.triu_indices(values.shape[0], k=1)
    if first.size == 0 or values.shape[1] < 2:
        return math.nan
    # Pairs whose differences are (nearly) constant make scipy warn of precision loss; their p-values
    # are still what the test gives, and a warning per pair would bury the report.
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p_values = ttest_rel(values[first], values[second], axis=1).pvalue
    return float(np.count_nonzero(np.nan_to_num(p_values, nan=1.0) < alpha) / first.size)


def split_half(
    values: np.ndarray, n_splits: int, confidence: float, rng: np.random.Generator
) -> tuple[float, Interval]:
    """Median and percentile interval of tau between the systems' means on random halves of the queries."""
    n = values.shape[1]
    if n < 4:
        return math.nan, Interval.undefined(confidence, "split-half")
    half = n // 2
    order = rng.permuted(np.tile(np.arange(n), (n_splits, 1)), axis=1)
    # Membership weights (splits x queries) times the scores: each half's means in one product, with
    # memory of splits x queries however many systems there are.
    in_first = np.zeros((n_splits, n), dtype=np.float64)
    np.put_along_axis(in_first, order[:, :half], 1.0, axis=1)
    first = in_first @ values.T / half  # splits x systems
    second = (1.0 - in_first) @ values.T / (n - half)
    taus = kendall_tau_b(first, second)
    defined = taus[~np.isnan(taus)]
    if defined.size == 0:
        return math.nan, Interval.undefined(confidence, "split-half")
    level = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [level, 1.0 - level])
    return float(np.median(defined)), Interval(float(low), float(high), confidence, "split-half")


def _tau_interval(
    a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int, rng: np.random.Generator
) -> Interval:
    if a.shape[1] < 2 or b.shape[1] < 2:
        return Interval.undefined(confidence, "bootstrap over queries")
    draws_a = bootstrap_mean_matrix(a.T, n_resamples, rng)
    draws_b = bootstrap_mean_matrix(b.T, n_resamples, rng)
    taus = kendall_tau_b(draws_a, draws_b)
    defined = taus[~np.isnan(taus)]
    if defined.size < n_resamples / 2:
        return Interval.undefined(confidence, "bootstrap over queries")
    level = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [level, 1.0 - level])
    return Interval(float(low), float(high), confidence, "bootstrap over queries")


def _subsampled_separation(a: np.ndarray, size: int, alpha: float, rng: np.random.Generator) -> float:
    n = a.shape[1]
    if size >= n:
        return pairs_separated(a, alpha)
    shares = [pairs_separated(a[:, rng.choice(n, size, replace=False)], alpha) for _ in range(_SUBSAMPLES)]
    return float(np.median(shares))


def _ci(interval: Interval) -> str:
    if not interval.defined:
        return "no interval"
    return f"{interval.confidence * 100:g}% of splits {interval.low:.3f} to {interval.high:.3f}"


def _interval(interval: Interval) -> list[float | None]:
    return [None if math.isnan(v) else round(v, 4) for v in (interval.low, interval.high)]


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)

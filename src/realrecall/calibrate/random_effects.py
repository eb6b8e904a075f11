"""Random-effects pooling across strata: Paule-Mandel spread, Hartung-Knapp standard error, and the
Higgins-Thompson-Spiegelhalter prediction interval for a stratum nobody measured.

Given per-stratum effects ``y_i`` (logits of a real figure, or logit gaps) with within-stratum
variances ``v_i``:

- **between-stratum variance** ``tau²``: Paule and Mandel's estimate, the ``tau²`` at which the
  generalised Q statistic ``Σ w_i (y_i - mu)²`` with ``w_i = 1 / (v_i + tau²)`` equals its expectation
  ``k - p`` (``p`` the number of coefficients: 1 for a pooled mean); 0 when Q is already below ``k - p``
  at ``tau² = 0``. Equals statsmodels' ``combine_effects(..., method_re="pm")``.
- **pooled mean** ``mu = Σ w_i y_i / Σ w_i``, and its **Hartung-Knapp (HKSJ) variance**
  ``Σ w_i (y_i - mu)² / ((k - 1) Σ w_i)`` (statsmodels' ``var_hksj_re``), used with the t distribution;
  never below the plain random-effects variance ``1 / Σ w_i`` (the HKSJ variance shrinks when the
  strata agree more than their own noise says, which is when it is least to be trusted).
- **prediction interval** of a new stratum's effect (Higgins, Thompson and Spiegelhalter 2009):
  ``mu ± t_{k-2} · sqrt(se² + tau²)``.

Where the spread cannot be estimated (fewer than 3 strata, or ``tau² = 0`` because Q fell below
``k - 1``), a stated conservative spread is used instead: ``ASSUMED_SPREAD`` logit with fewer than three
strata (normal quantiles: there are no degrees of freedom), else never less than ``SPREAD_FLOOR`` logit.
The meta-regression (``meta_regression``) does the same with an intercept and one covariate (``p = 2``,
``t_{k-3}``); its coefficients and HKSJ covariance equal statsmodels' ``WLS`` with weights
``1 / (v_i + tau²)`` (whose scale estimate is the HKSJ factor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from realrecall.errors import InputError

__all__ = [
    "ASSUMED_SPREAD",
    "SPREAD_FLOOR",
    "MetaRegression",
    "RandomEffects",
    "meta_regression",
    "paule_mandel",
]

ASSUMED_SPREAD = 1.0
"""Between-stratum SD (logit) assumed when fewer than three strata measure it: about 0.2 in recall
near 0.7, the size of the differences seen between topics and retrievers on SciFact and Cranfield."""

SPREAD_FLOOR = 0.5
"""The least between-stratum SD (logit) a prediction uses when three or more strata measure it:
about 0.1 in recall near 0.7. A handful of strata that happen to agree (Paule-Mandel's tau at 0 in 97 of
100 SciFact topic splits) is no evidence that the next stratum will."""


@dataclass(frozen=True)
class RandomEffects:
    """A random-effects pool of ``k`` effects (see the module docstring for every formula)."""

    mu: float
    se: float
    """Hartung-Knapp standard error of ``mu``, never below the plain random-effects one."""
    tau2: float
    """Paule-Mandel between-stratum variance (0 when Q < k - 1)."""
    q: float
    """Cochran's Q at the fixed-effect weights (``Σ v_i⁻¹ (y_i - ȳ_fixed)²``)."""
    k: int
    weights: tuple[float, ...]
    """Each effect's share of ``mu`` (random-effects weights, summing to 1)."""

    @property
    def estimable(self) -> bool:
        """Whether the data estimate the spread: three strata or more, and Q not below k - 1."""
        return self.k >= 3 and not (self.tau2 == 0.0 and self.q < self.k - 1)

    @property
    def spread(self) -> float:
        """The between-stratum SD a prediction uses: ``ASSUMED_SPREAD`` below three strata, else the
        estimate, never below ``SPREAD_FLOOR``."""
        return spread_used(self.k, self.tau2, parameters=1)

    @property
    def floored(self) -> bool:
        """Whether the spread used is a stated constant rather than the estimate."""
        return self.spread != math.sqrt(self.tau2)

    @property
    def df(self) -> float:
        """Degrees of freedom of the prediction's t (``k - 2``; infinite, i.e. normal, below three)."""
        return prediction_df(self.k, parameters=1)

    @property
    def prediction_scale(self) -> float:
        """``sqrt(se² + spread²)``: the scale of a new stratum's effect around ``mu``."""
        return math.sqrt(self.se**2 + self.spread**2)

    def prediction_interval(self, confidence: float) -> tuple[float, float]:
        """``mu ± t_{k-2} · sqrt(se² + tau²)`` (Higgins, Thompson and Spiegelhalter 2009)."""
        half = quantile(self.df, confidence) * self.prediction_scale
        return self.mu - half, self.mu + half


@dataclass(frozen=True)
class MetaRegression:
    """``y_i = b0 + b1 x_i + u_i + e_i``: effects regressed on one covariate, ``u_i ~ N(0, tau²)``."""

    coefficients: tuple[float, float]
    covariance: tuple[tuple[float, float], tuple[float, float]]
    """HKSJ covariance of the coefficients (the WLS covariance with its scale, never below 1)."""
    tau2: float
    k: int

    @property
    def spread(self) -> float:
        return spread_used(self.k, self.tau2, parameters=2)

    @property
    def floored(self) -> bool:
        return self.spread != math.sqrt(self.tau2)

    @property
    def df(self) -> float:
        return prediction_df(self.k, parameters=2)

    def predict(self, x: float, x_variance: float = 0.0) -> tuple[float, float]:
        """The centre and scale of a new stratum's effect at covariate ``x`` (itself measured with
        variance ``x_variance``): ``b0 + b1 x`` and ``sqrt(c' V c + tau² + b1² var(x))``, ``c = (1, x)``."""
        b0, b1 = self.coefficients
        (v00, v01), (_, v11) = self.covariance
        fitted = v00 + 2.0 * x * v01 + x * x * v11
        return b0 + b1 * x, math.sqrt(max(fitted, 0.0) + self.spread**2 + b1 * b1 * x_variance)


def spread_used(k: int, tau2: float, *, parameters: int) -> float:
    """The between-stratum SD a prediction uses (see the module docstring)."""
    if k < parameters + 2:
        return ASSUMED_SPREAD
    return max(math.sqrt(tau2), SPREAD_FLOOR)


def prediction_df(k: int, *, parameters: int) -> float:
    """``k - parameters - 1`` degrees of freedom; infinite (normal quantiles) when there are none."""
    df = k - parameters - 1
    return float(df) if df >= 1 else math.inf


def quantile(df: float, confidence: float) -> float:
    """The two-sided t quantile with ``df`` degrees of freedom (normal when ``df`` is infinite)."""
    upper = 1.0 - (1.0 - confidence) / 2.0
    return float(stats.norm.ppf(upper) if math.isinf(df) else stats.t.ppf(upper, df))


def paule_mandel(effects: np.ndarray, variances: np.ndarray) -> RandomEffects:
    """The random-effects pool of ``effects`` (one per stratum) with within-stratum ``variances``."""
    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    k = int(y.size)
    design = np.ones((k, 1))
    tau2 = _paule_mandel_tau2(y, v, design)
    w = 1.0 / (v + tau2)
    mu = float(np.sum(w * y) / np.sum(w))
    plain = 1.0 / float(np.sum(w))
    hksj = float(np.sum(w * (y - mu) ** 2)) / ((k - 1) * float(np.sum(w))) if k > 1 else plain
    fixed = float(np.sum(y / v) / np.sum(1.0 / v))
    q = float(np.sum((y - fixed) ** 2 / v))
    return RandomEffects(
        mu=mu,
        se=math.sqrt(max(hksj, plain)),
        tau2=tau2,
        q=q,
        k=k,
        weights=tuple(float(x) for x in w / np.sum(w)),
    )


def meta_regression(effects: np.ndarray, variances: np.ndarray, covariate: np.ndarray) -> MetaRegression:
    """Random-effects meta-regression of ``effects`` on ``covariate`` (needs three strata or more)."""
    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    design = np.column_stack([np.ones(y.size), np.asarray(covariate, dtype=np.float64)])
    k = int(y.size)
    if k < 3:
        raise InputError(
            f"a meta-regression with a slope needs three strata or more, got {k}",
            hint="pool the strata instead (paule_mandel) or measure more strata",
        )
    tau2 = _paule_mandel_tau2(y, v, design)
    w = 1.0 / (v + tau2)
    beta, inverse = _weighted_fit(y, w, design)
    residual = y - design @ beta
    scale = max(1.0, float(np.sum(w * residual**2)) / (k - 2))
    covariance = inverse * scale
    return MetaRegression(
        coefficients=(float(beta[0]), float(beta[1])),
        covariance=(
            (float(covariance[0, 0]), float(covariance[0, 1])),
            (float(covariance[1, 0]), float(covariance[1, 1])),
        ),
        tau2=tau2,
        k=k,
    )


def _weighted_fit(y: np.ndarray, w: np.ndarray, design: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares: the coefficients and ``(X' W X)⁻¹``."""
    xtw = design.T * w
    inverse = np.linalg.pinv(xtw @ design)
    return inverse @ (xtw @ y), inverse


def _generalised_q(tau2: float, y: np.ndarray, v: np.ndarray, design: np.ndarray) -> float:
    w = 1.0 / (v + tau2)
    beta, _ = _weighted_fit(y, w, design)
    return float(np.sum(w * (y - design @ beta) ** 2))


def _paule_mandel_tau2(y: np.ndarray, v: np.ndarray, design: np.ndarray) -> float:
    """The root of ``Q(tau²) = k - p`` (Q falls as tau² grows); 0 when Q(0) is already below it."""
    target = y.size - design.shape[1]
    if target < 1 or _generalised_q(0.0, y, v, design) <= target:
        return 0.0
    high = max(float(np.var(y)), 1e-6)
    while _generalised_q(high, y, v, design) > target:
        high *= 4.0
    root = optimize.brentq(lambda t: _generalised_q(t, y, v, design) - target, 0.0, high, xtol=1e-14)
    return float(root)

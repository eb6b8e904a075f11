"""How a stratum without real questions is predicted: three models, chosen by how well each predicted
the user's own measured strata when they were left out.

Every stratum the real set covers gives its real mean ``m_s`` over ``n_s`` questions (and its logit
``r_s`` with its variance); those with synthetic questions too give the synthetic logit ``x_s``. The
models, for a stratum with synthetic questions only (logit ``x`` now):

- ``pooled real``: the strata's real means pooled on their own scale (random effects,
  ``random_effects.paule_mandel`` on ``m_s`` with variances ``s²/n_s``, ``s²`` the variance of every
  real value around the count-weighted mean): predicted ``mu``; a stratum is assumed as hard as a
  typical measured one. Each stratum's variance is taken at the pooled figure, not at its own: a weight
  that grows as the stratum's figure nears 0.5 (a logit's ``1/(n p (1-p))``) pulls the pool towards
  0.5, and that pull made it miss held-out topics by more than the plain mean of the real set did. With
  strata that agree (``tau² = 0``) the pool is the count-weighted real mean; the more they differ, the
  closer it comes to their unweighted mean. Its prediction is carried to the logit scale by the delta
  method (``logit(mu) ± t · sqrt(se² + spread²) / (mu (1 - mu))``, the floor applying in logits), so
  its interval stays in [0, 1].
- ``synthetic + gap``: the synthetic figure corrected by the pooled gap (random effects on
  ``x_s - r_s``): predicted ``x - mu_gap``.
- ``regression``: the real figure regressed on the synthetic one across strata (random-effects
  meta-regression of ``r_s`` on ``x_s``): predicted ``b0 + b1 x̄ + c b1 (x - x̄)``, the slope shrunk by
  its own noise (``c = max(0, 1 - 1/t²)``, ``t`` the slope over its HKSJ standard error, ``x̄`` the
  weighted mean synthetic logit, where intercept and slope do not trade off). A slope fitted to noise
  extrapolated: on held-out Cranfield topics (bm25) it missed by 18% more than the plain real mean,
  9% with the shrinkage. The interval is the unshrunk fit's.

Each predicts with the Higgins-Thompson-Spiegelhalter interval (centre ± t · scale, on the logit scale).
The choice: leave each stratum that has both sets out in turn, fit every model on the others, predict
its real figure, and score each model by its mean absolute error on the figure's own scale (weighted
by the left-out stratum's real count ``n_s``: ``e = Σ n_s e_s / N``, ``N = Σ n_s``) and that mean's
standard error (``se² = Σ n_s (e_s - e)² / (N - Σ n_s² / N) · Σ n_s² / N²``, reliability weights; with
equal counts the plain ``s / sqrt(K)``). The one-standard-error rule of cross-validation (Breiman et al.
1984, CART §3.4.3; Hastie, Tibshirani and Friedman 2009, §7.10) then chooses: the model that assumes
least (in the order above) whose error is at most the smallest error plus that smallest one's standard
error. A model that
beats a simpler one by less than the noise of its own error has not shown that its extra assumption
predicts: on SciFact topics (bm25) the smallest error picked ``synthetic + gap`` in 8 of 100 splits,
and it missed the held-out topics by 0.105 where the pooled real figure missed by 0.033. A margin
beyond the noise still wins: three strata whose synthetic figures track the real ones choose
``synthetic + gap`` at 0.037 (standard error 0.016) against ``pooled real`` at 0.338. Data too thin to
validate (fewer than two strata with both sets) go to ``pooled real``: it assumes least.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from realrecall.calibrate.random_effects import (
    ASSUMED_SPREAD,
    SPREAD_FLOOR,
    MetaRegression,
    RandomEffects,
    meta_regression,
    paule_mandel,
    prediction_df,
)

__all__ = [
    "MODELS",
    "POOLED_REAL",
    "REGRESSION",
    "SYNTHETIC_GAP",
    "ModelChoice",
    "Prediction",
    "StratumLogits",
    "choose_model",
    "standard_error",
]

POOLED_REAL, SYNTHETIC_GAP, REGRESSION = "pooled real", "synthetic + gap", "regression"
MODELS = (POOLED_REAL, SYNTHETIC_GAP, REGRESSION)
"""In order of preference on a tie: the one that assumes least first."""

_TIE = 1e-12  # errors equal but for float rounding


@dataclass(frozen=True)
class StratumLogits:
    """One measured stratum: its real logit and, where it has synthetic questions, its synthetic one."""

    real: float
    real_variance: float
    real_mean: float
    n_real: int
    synthetic: float = math.nan
    synthetic_variance: float = math.nan
    real_spread: float = math.nan
    """The variance of the stratum's real values around their mean (``m (1 - m)`` for a proportion);
    NaN: taken as a proportion's."""

    @property
    def has_synthetic(self) -> bool:
        return not math.isnan(self.synthetic)


@dataclass(frozen=True)
class Prediction:
    """A new stratum's logit: ``centre ± t_df · scale`` (df infinite: normal)."""

    centre: float
    scale: float
    df: float


@dataclass(frozen=True)
class ModelChoice:
    """The model used for strata without real questions, and why."""

    model: str
    errors: Mapping[str, float]
    """Leave-one-stratum-out mean absolute error of each model (NaN where it could not be validated)."""
    standard_errors: Mapping[str, float]
    """The standard error of each of those means (NaN where not validated): the chosen model is the one
    that assumes least whose error is within one standard error of the smallest."""
    validated_on: int
    """How many strata were left out in turn (0: nothing to validate on, ``pooled real`` by default)."""
    strata: int
    """How many measured strata the chosen model is fitted on."""
    spread: float
    """The between-stratum SD (logit) its predictions use."""
    spread_estimated: float
    """The estimate behind it (NaN with fewer than three strata)."""
    spread_basis: str
    """``estimated``, ``floor`` (the estimate is below ``SPREAD_FLOOR``) or ``assumed`` (too few strata)."""
    predict: Callable[[float, float], Prediction]
    """``predict(x, var_x)``: the prediction for a stratum whose synthetic logit now is ``x``."""


def choose_model(measured: Sequence[StratumLogits]) -> ModelChoice | None:
    """The model that predicted the left-out ``measured`` strata best (see the module docstring); None
    without a stratum."""
    if not measured:
        return None
    both = [i for i, s in enumerate(measured) if s.has_synthetic]
    folds = {model: _fold_errors(model, measured, both) for model in MODELS}
    counts = np.array([measured[i].n_real for i in both], dtype=np.float64)
    errors = {model: _mean(folds[model], counts) for model in MODELS}
    standard_errors = {model: _standard_error(folds[model], counts) for model in MODELS}
    validated = [m for m in MODELS if folds[m] is not None]
    chosen = _preferred(validated, errors, standard_errors) if validated else POOLED_REAL
    fitted = _fit(chosen, measured)
    if fitted is None:  # validated on folds of k - 1 strata, so it fits all k; kept for the type checker
        chosen, fitted = POOLED_REAL, _pooled_real(measured)
    return ModelChoice(
        model=chosen,
        errors=dict(errors),
        standard_errors=dict(standard_errors),
        validated_on=len(both) if validated else 0,
        strata=fitted.strata,
        spread=fitted.spread,
        spread_estimated=fitted.spread_estimated,
        spread_basis=fitted.spread_basis,
        predict=fitted.predict,
    )


@dataclass(frozen=True)
class _Fitted:
    strata: int
    spread: float
    """The between-stratum SD (logit) the predictions use."""
    spread_estimated: float
    """The estimate behind it, in logits (NaN when too few strata estimate it)."""
    spread_basis: str
    predict: Callable[[float, float], Prediction]


def _on_logits(
    pool: RandomEffects | MetaRegression, parameters: int, predict: Callable[[float, float], Prediction]
) -> _Fitted:
    """A fit made on the logit scale: its spread is already in logits."""
    basis = "assumed" if pool.k < parameters + 2 else ("floor" if pool.floored else "estimated")
    estimate = math.nan if basis == "assumed" else math.sqrt(pool.tau2)
    return _Fitted(pool.k, pool.spread, estimate, basis, predict)


def _fit(model: str, strata: Sequence[StratumLogits]) -> _Fitted | None:
    """``model`` fitted on ``strata``; None when they are too few for it."""
    if model == POOLED_REAL:
        return _pooled_real(strata) if strata else None
    both = [s for s in strata if s.has_synthetic]
    if model == SYNTHETIC_GAP:
        if not both:
            return None
        gap = paule_mandel(
            np.array([s.synthetic - s.real for s in both]),
            np.array([s.synthetic_variance + s.real_variance for s in both]),
        )
        return _on_logits(
            gap, 1, lambda x, v: Prediction(x - gap.mu, math.sqrt(v + gap.prediction_scale**2), gap.df)
        )
    # A slope needs a residual degree of freedom for its spread and one for the prediction's t, and
    # synthetic figures that differ between strata.
    if len(both) < 4 or len({s.synthetic for s in both}) < 2:
        return None
    regression = meta_regression(
        np.array([s.real for s in both]),
        np.array([s.real_variance for s in both]),
        np.array([s.synthetic for s in both]),
    )

    xs = np.array([s.synthetic for s in both])
    weights = 1.0 / (np.array([s.real_variance for s in both]) + regression.tau2)
    x_mean = float(np.sum(weights * xs) / np.sum(weights))
    b1 = regression.coefficients[1]
    slope_variance = regression.covariance[1][1]
    shrink = max(0.0, 1.0 - slope_variance / (b1 * b1)) if b1 != 0.0 else 0.0

    def predict(x: float, v: float) -> Prediction:
        centre, scale = regression.predict(x, v)
        # The slope shrunk towards 0 by its own noise (positive-part James-Stein: by 1/t²), about the
        # weighted mean synthetic figure, where intercept and slope do not trade off.
        return Prediction(centre - (1.0 - shrink) * b1 * (x - x_mean), scale, regression.df)

    return _on_logits(regression, 2, predict)


def _pooled_real(strata: Sequence[StratumLogits]) -> _Fitted:
    """The real means pooled on their own scale, each with its variance at the pooled figure, and the
    prediction carried to logits by the delta method (see the module docstring)."""
    counts = np.array([s.n_real for s in strata], dtype=np.float64)
    means = np.array([s.real_mean for s in strata], dtype=np.float64)
    spreads = np.array(
        [
            m * (1.0 - m) if math.isnan(s.real_spread) else s.real_spread
            for s, m in zip(strata, means, strict=True)
        ]
    )
    total = float(counts.sum())
    grand = float(np.sum(counts * means) / total)
    smoothed = (grand * total + 0.5) / (total + 1.0)  # half a count each side: 0 and 1 stay finite
    within = float(np.sum(counts * (spreads + (means - grand) ** 2)) / total)
    # Every value equal says little about their spread: a proportion's at the smoothed figure, the
    # largest values in [0, 1] can have.
    variance = within if within > 0 else smoothed * (1.0 - smoothed)
    pool = paule_mandel(means, variance / counts)
    centre = min(max(pool.mu, 0.5 / (total + 1.0)), 1.0 - 0.5 / (total + 1.0))
    slope = 1.0 / (centre * (1.0 - centre))  # d logit(p) / dp
    k = pool.k
    if k < 3:
        spread, estimate, basis = ASSUMED_SPREAD, math.nan, "assumed"
    else:
        estimate = math.sqrt(pool.tau2) * slope
        spread, basis = (estimate, "estimated") if estimate >= SPREAD_FLOOR else (SPREAD_FLOOR, "floor")
    scale = math.sqrt((pool.se * slope) ** 2 + spread**2)
    logit = math.log(centre / (1.0 - centre))
    df = prediction_df(k, parameters=1)
    return _Fitted(k, spread, estimate, basis, lambda _x, _v: Prediction(logit, scale, df))


def _fold_errors(model: str, measured: Sequence[StratumLogits], both: Sequence[int]) -> np.ndarray | None:
    """Absolute error of ``model`` predicting each left-out stratum's real figure; None when it cannot
    be validated (fewer than two strata to leave out, or too few left to fit it in some fold)."""
    if len(both) < 2:
        return None
    errors = []
    for left_out in both:
        fitted = _fit(model, [s for i, s in enumerate(measured) if i != left_out])
        if fitted is None:
            return None
        target = measured[left_out]
        predicted = fitted.predict(target.synthetic, target.synthetic_variance).centre
        errors.append(abs(_expit(predicted) - target.real_mean))
    return np.array(errors)


def _mean(errors: np.ndarray | None, counts: np.ndarray) -> float:
    """The real-count-weighted mean of fold errors (NaN: not validated)."""
    if errors is None:
        return math.nan
    return float(np.average(errors, weights=counts))


def _standard_error(errors: np.ndarray | None, counts: np.ndarray) -> float:
    """The standard error of the real-count-weighted mean of fold errors (NaN: not validated)."""
    if errors is None:
        return math.nan
    return standard_error(errors, counts)


def standard_error(values: np.ndarray, weights: np.ndarray) -> float:
    """The standard error of ``values``' weighted mean, the weights taken as reliability weights:
    ``sqrt(Σ w (x - x̄)² / (W - Σ w² / W) · Σ w² / W²)``, ``W = Σ w`` (equal weights: ``s / sqrt(n)``,
    ``scipy.stats.sem``); NaN for fewer than two values."""
    if len(values) < 2:
        return math.nan
    total = float(np.sum(weights))
    squares = float(np.sum(weights * weights))
    mean = float(np.average(values, weights=weights))
    variance = float(np.sum(weights * (values - mean) ** 2)) / (total - squares / total)
    return math.sqrt(variance * squares / (total * total))


def _preferred(
    validated: Sequence[str], errors: Mapping[str, float], standard_errors: Mapping[str, float]
) -> str:
    """The validated model that assumes least (``MODELS`` order) whose leave-one-stratum-out error is
    within one standard error of the smallest (the one-standard-error rule)."""
    best = validated[0]
    for model in validated[1:]:
        if errors[model] < errors[best] - _TIE:
            best = model
    limit = errors[best] + standard_errors[best] + _TIE
    return next(model for model in validated if errors[model] <= limit)


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))

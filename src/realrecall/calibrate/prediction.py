"""How a stratum without real questions is predicted: three models, chosen by how well each predicted
the user's own measured strata when they were left out.

Every stratum the real set covers gives its real figure as a logit ``r_s`` (with its variance); those
with synthetic questions too give the synthetic logit ``x_s``. The models, for a stratum with synthetic
questions only (logit ``x`` now):

- ``pooled real``: the strata's real figures pooled (random effects, ``random_effects.paule_mandel``
  on ``r_s``): predicted ``mu``; a stratum is assumed as hard as a typical measured one.
- ``synthetic + gap``: the synthetic figure corrected by the pooled gap (random effects on
  ``x_s - r_s``): predicted ``x - mu_gap``.
- ``regression``: the real figure regressed on the synthetic one across strata (random-effects
  meta-regression of ``r_s`` on ``x_s``): predicted ``b0 + b1 x``.

Each predicts with the Higgins-Thompson-Spiegelhalter interval (centre ± t · scale, on the logit scale).
The choice: leave each stratum that has both sets out in turn, fit every model on the others, predict
its real figure, and score each model by its mean absolute error on the figure's own scale (weighted
by the left-out stratum's real count). The model with the least error is chosen unless a simpler one
(in the order above) is within one standard error of it (the paired per-stratum differences of their
errors): with a handful of strata a slope fitted to noise often wins by a hair. Data too thin to
validate (fewer than two strata with both sets) go to ``pooled real``: it assumes least.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from realrecall.calibrate.random_effects import MetaRegression, RandomEffects, meta_regression, paule_mandel

__all__ = [
    "MODELS",
    "POOLED_REAL",
    "REGRESSION",
    "SYNTHETIC_GAP",
    "ModelChoice",
    "Prediction",
    "StratumLogits",
    "choose_model",
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
    """The model with the least leave-one-stratum-out error on ``measured``; None without a stratum."""
    if not measured:
        return None
    both = [i for i, s in enumerate(measured) if s.has_synthetic]
    folds = {model: _fold_errors(model, measured, both) for model in MODELS}
    errors = {model: _mean(folds[model], measured, both) for model in MODELS}
    validated = [m for m in MODELS if folds[m] is not None]
    chosen = _one_standard_error_choice(validated, folds, measured, both) if validated else POOLED_REAL
    fitted = _fit(chosen, measured)
    if fitted is None:  # validated on folds of k - 1 strata, so it fits all k; kept for the type checker
        chosen, fitted = POOLED_REAL, _fit_pooled_real(measured)
    return fitted_choice(chosen, fitted, errors, len(both) if validated else 0)


def fitted_choice(model: str, fitted: _Fitted, errors: Mapping[str, float], validated_on: int) -> ModelChoice:
    pool = fitted.pool
    basis = "assumed" if pool.k < fitted.parameters + 2 else ("floor" if pool.floored else "estimated")
    estimate = math.nan if basis == "assumed" else math.sqrt(pool.tau2)
    return ModelChoice(
        model=model,
        errors=dict(errors),
        validated_on=validated_on,
        strata=pool.k,
        spread=pool.spread,
        spread_estimated=estimate,
        spread_basis=basis,
        predict=fitted.predict,
    )


@dataclass(frozen=True)
class _Fitted:
    pool: RandomEffects | MetaRegression
    parameters: int
    predict: Callable[[float, float], Prediction]


def _fit_pooled_real(strata: Sequence[StratumLogits]) -> _Fitted:
    """The pooled real figure of ``strata`` (at least one)."""
    pool = paule_mandel(np.array([s.real for s in strata]), np.array([s.real_variance for s in strata]))
    return _Fitted(pool, 1, lambda _x, _v: Prediction(pool.mu, pool.prediction_scale, pool.df))


def _fit(model: str, strata: Sequence[StratumLogits]) -> _Fitted | None:
    """``model`` fitted on ``strata``; None when they are too few for it."""
    if model == POOLED_REAL:
        return _fit_pooled_real(strata) if strata else None
    both = [s for s in strata if s.has_synthetic]
    if model == SYNTHETIC_GAP:
        if not both:
            return None
        gap = paule_mandel(
            np.array([s.synthetic - s.real for s in both]),
            np.array([s.synthetic_variance + s.real_variance for s in both]),
        )
        return _Fitted(
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

    def predict(x: float, v: float) -> Prediction:
        centre, scale = regression.predict(x, v)
        return Prediction(centre, scale, regression.df)

    return _Fitted(regression, 2, predict)


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


def _mean(errors: np.ndarray | None, measured: Sequence[StratumLogits], both: Sequence[int]) -> float:
    """The real-count-weighted mean of fold errors (NaN: not validated)."""
    if errors is None:
        return math.nan
    return float(np.average(errors, weights=[measured[i].n_real for i in both]))


def _one_standard_error_choice(
    validated: Sequence[str],
    folds: Mapping[str, np.ndarray | None],
    measured: Sequence[StratumLogits],
    both: Sequence[int],
) -> str:
    """The simplest model whose error is within one standard error of the least error's."""
    weights = np.array([measured[i].n_real for i in both], dtype=np.float64)
    weights /= weights.sum()
    mean = {m: float(np.sum(weights * folds[m])) for m in validated}  # type: ignore[operator]
    best = min(validated, key=lambda m: (mean[m], MODELS.index(m)))
    for model in validated:  # simplest first
        if model == best:
            return best
        difference = folds[model] - folds[best]  # type: ignore[operator]
        spread = math.sqrt(float(np.sum(weights * (difference - np.sum(weights * difference)) ** 2)))
        standard_error = spread * math.sqrt(float(np.sum(weights**2)) / (1.0 - float(np.sum(weights**2))))
        if mean[model] - mean[best] <= standard_error + _TIE:
            return model
    return best


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))

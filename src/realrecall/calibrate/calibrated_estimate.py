"""The calibrated estimate: a real-traffic-weighted figure for the current corpus, measured where it can be.

What it is for: the real set covers some strata (a stratum is one value of the ``by`` field: a query
type, a language, a topic, old versus new documents) and not others. The estimate is

    sum over strata s of  w_s * p_s

with ``p_s`` the stratum's real mean wherever the real set has questions in it (**measured**), and a
prediction where it has none (**predicted**). When every stratum that carries traffic is measured, the
estimate *is* the measured real figure, with the real figure's own interval.

The prediction comes from the model that predicted the user's own measured strata best when each was
left out in turn (``prediction``): the pooled real figure, the synthetic figure plus the pooled gap,
or the real figure regressed on the synthetic one across strata. Pooling is random-effects
(Paule-Mandel spread, Hartung-Knapp standard error, ``random_effects``) on the logit scale, and a
predicted stratum's interval is the Higgins-Thompson-Spiegelhalter prediction interval
``centre ± t_{k-2} · sqrt(se² + tau²)``; where the spread cannot be estimated a stated floor is used.

Everything is computed on a bounded scale: means enter as logits (with a half-count continuity
correction, so 0 and 1 are finite) and leave through the logistic function, so every estimate and every
bound lies in [0, 1] without clipping. The interval is a Monte Carlo over each measured mean's sampling
distribution (Jeffreys beta for proportions, logit-normal otherwise), the predictions (one t draw per
world shared by every predicted stratum: they come from the same measured strata, so their errors are
not assumed to cancel) and, by default, the real-traffic shares (Dirichlet).

Weights ``w_s``: the share of real traffic. Strata the real set covers get their share of the real set
scaled by ``1 - U``; strata without real questions get their share of the synthetic set (the corpus
mix), summing to ``U``. ``weights`` overrides both.

The estimate belongs to one retriever and one corpus: the caller (``calibrate``) refuses gaps measured
with another retriever or generator and re-measures a real set from another corpus. It is marked with
the date of the real set behind it and flagged stale when older than ``max_age_days``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from scipy import stats

from realrecall.calibrate.gap import metric_values, slice_values
from realrecall.calibrate.plan import plan_strata
from realrecall.calibrate.prediction import ModelChoice, Prediction, StratumLogits, choose_model
from realrecall.calibrate.random_effects import ASSUMED_SPREAD, SPREAD_FLOOR, quantile
from realrecall.calibrate.settings import parse_date
from realrecall.calibrate.statistics import Estimate, Interval
from realrecall.errors import InputError
from realrecall.evaluate.results import QueryResult

__all__ = [
    "ASSUMED_SPREAD",
    "MIN_REAL",
    "SPREAD_FLOOR",
    "CalibratedEstimate",
    "LabelAdvice",
    "Stratum",
    "calibrated_estimate",
    "label_advice",
    "parse_date",
]

MIN_REAL = 10
"""Real questions a stratum should have for its own figure to be read: the labelling advice asks for
at least this many in every stratum the real set misses."""

MEASURED, PREDICTED = "measured", "predicted"
SINGLE_QUERY = "1 real query"
"""A measured stratum's figure when it rests on one real query: 0 or 1 (or one reciprocal rank), its
real mean all the same, but not a measurement anyone should quote; every format names it so."""


@dataclass(frozen=True)
class Stratum:
    """One stratum of the calibrated estimate.

    ``source``: ``measured`` (the real mean) or ``predicted`` (no real query: the chosen model's
    prediction). ``gap``: the stratum's own synthetic-minus-real gap where both were measured (NaN
    otherwise). ``interval``: the real mean's (Jeffreys or logit-normal) or the prediction interval.
    """

    value: Any
    weight: float
    synthetic: float
    gap: float
    corrected: float
    n_synthetic: int
    n_real: int
    source: str = MEASURED
    interval: Interval | None = None

    @property
    def figure(self) -> str:
        """What its figure is, in every format: ``measured``, ``1 real query`` or ``predicted``."""
        if self.source == MEASURED and self.n_real == 1:
            return SINGLE_QUERY
        return self.source


@dataclass(frozen=True)
class LabelAdvice:
    """Where to label: real questions that would make the strata without them measured, and the
    figure's interval about ``target_width`` wide (the labelling plan's Neyman allocation, at least
    :data:`MIN_REAL` in every stratum without real questions)."""

    strata: tuple[Any, ...]
    counts: tuple[int, ...]
    """How many more real questions in each of ``strata``."""
    share: float
    """The share of traffic the strata without real questions carry."""
    predicted_width: float
    target_width: float

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class CalibratedEstimate:
    """A real-traffic-weighted figure, marked with the date of the real set behind it."""

    metric: str
    by: str | None
    value: float
    interval: Interval
    strata: tuple[Stratum, ...]
    calibrated_on: str | None
    age_days: int | None
    stale: bool
    notes: tuple[str, ...] = ()
    model: ModelChoice | None = None
    """How strata without real questions were predicted (None when every stratum is measured)."""
    predicted: Estimate | None = None
    """The figure for the traffic without real questions alone, with its interval (None: there is none)."""
    advice: LabelAdvice | None = None

    @property
    def age_text(self) -> str:
        """``today``, ``1 day ago``, ``12 days ago``; empty when the real set has no date."""
        return _age_text(self.age_days)

    @property
    def measured_share(self) -> float:
        """The share of traffic whose figure is measured on real questions."""
        return float(sum(s.weight for s in self.strata if s.source == MEASURED))

    @property
    def single_query_share(self) -> float:
        """The share of traffic whose measured figure rests on one real query (part of ``measured_share``)."""
        return float(sum(s.weight for s in self.strata if s.figure == SINGLE_QUERY))

    @property
    def fully_measured(self) -> bool:
        return all(s.source == MEASURED for s in self.strata if s.weight > 0)

    @property
    def text(self) -> str:
        """One line every format shows: the figure, its interval, and what it predicts."""
        level = f"{self.interval.confidence * 100:g}%"
        kind = "CI" if self.fully_measured else "prediction interval"
        head = (
            f"Calibrated {self.metric} = {self.value:.2f} ({level} {kind} "
            f"{self.interval.low:.2f}-{self.interval.high:.2f})"
        )
        if self.fully_measured:
            return head + ": measured on real questions in every stratum" + self._single_text() + "."
        predicted = [s for s in self.strata if s.source == PREDICTED and s.weight > 0]
        share = 1.0 - self.measured_share
        text = (
            f"{head}: measured on real questions for {self.measured_share:.0%} of traffic"
            f"{self._single_text()}; the other "
            f"{share:.0%} ({_strata(len(predicted))} with no real questions) is NOT measured, "
            f"predicted{self._predicted_text()}."
        )
        if self.model is not None:
            text += f" {model_text(self.model)}"
        if self.advice is not None:
            text += f" {advice_text(self.advice, self.by)}"
        return text

    def _single_text(self) -> str:
        """Strata measured on one real query, named wherever the figure is called measured."""
        single = [s for s in self.strata if s.figure == SINGLE_QUERY and s.weight > 0]
        if not single:
            return ""
        shown = ", ".join(_label(self.by, s.value) for s in single[:6])
        more = f" and {len(single) - 6} more" if len(single) > 6 else ""
        return (
            f" ({self.single_query_share:.0%} of traffic, {shown}{more}, on {SINGLE_QUERY} each: "
            "a figure of 0 or 1, not one to quote)"
        )

    def _predicted_text(self) -> str:
        p = self.predicted
        if p is None or not p.interval.defined:
            return ""
        return f" at {p.value:.2f} ({p.interval.low:.2f}-{p.interval.high:.2f})"


def model_text(model: ModelChoice) -> str:
    """Which model predicts, on what, and how it fared when each measured stratum was left out."""
    if model.validated_on:
        errors = ", ".join(
            f"{name} {error:.3f} ± {model.standard_errors[name]:.3f}"
            for name, error in model.errors.items()
            if not math.isnan(error)
        )
        why = (
            f"chosen by leave-one-stratum-out error on {_strata(model.validated_on)}, the model that "
            f"assumes least within one standard error of the smallest (mean absolute error ± its "
            f"standard error: {errors})"
        )
    else:
        why = "no model could be validated (fewer than 2 measured strata with synthetic questions)"
    if model.spread_basis == "assumed":
        spread = (
            f"between-stratum spread assumed {model.spread:.2f} logit: it cannot be estimated from "
            f"{_strata(model.strata)}"
        )
    elif model.spread_basis == "floor":
        spread = (
            f"between-stratum spread {model.spread:.2f} logit, a floor: the estimate "
            f"{model.spread_estimated:.2f} from {_strata(model.strata)} is too small to trust"
        )
    else:
        spread = f"between-stratum spread {model.spread:.2f} logit from {_strata(model.strata)}"
    return f"Model: {model.model}, {why}; {spread}."


def advice_text(advice: LabelAdvice, by: str | None) -> str:
    """Where to label for a measured figure."""
    more = f" and {len(advice.strata) - 6} more" if len(advice.strata) > 6 else ""
    if len(set(advice.counts)) == 1:
        each = "" if len(advice.strata) == 1 else " each"
        shown = ", ".join(_label(by, v) for v in advice.strata[:6])
        where = f"at least {advice.counts[0]} real questions{each} in {shown}{more}"
    else:
        (first, *rest) = [
            f"{n} in {_label(by, v)}" for n, v in zip(advice.counts, advice.strata, strict=True)
        ][:6]
        where = ", ".join([first.replace(" in ", " real questions in ", 1), *rest]) + more
    return (
        f"To measure it, label {where} ({advice.total} in all; the real figure's interval is then "
        f"about {advice.predicted_width:.2f} wide)."
    )


def label_advice(
    metric: str,
    real: Sequence[np.ndarray],
    values: Sequence[Any],
    shares: Sequence[float],
    *,
    binary: bool,
    target_width: float,
    confidence: float,
) -> LabelAdvice:
    """Where to label, from the labelling plan (``realrecall.calibrate.plan``): each stratum's ``real``
    values are its pilot, ``shares`` its traffic; a stratum with traffic and no real question must end
    with :data:`MIN_REAL`, and the plan adds where the stratified real figure's interval needs it to be
    about ``target_width`` wide."""
    keys = [str(i) for i in range(len(values))]  # stratum values need not be text, nor distinct as text
    made = plan_strata(
        dict(zip(keys, real, strict=True)), metric=metric, binary=binary, target_width=target_width,
        weights=dict(zip(keys, shares, strict=True)), confidence=confidence,
        at_least={k: MIN_REAL for k, r, w in zip(keys, real, shares, strict=True) if w > 0 and not r.size},
    )  # fmt: skip
    asked = [(values[int(s.value)], s.n_more) for s in made.strata if s.n_more > 0]
    return LabelAdvice(
        strata=tuple(v for v, _ in asked),
        counts=tuple(n for _, n in asked),
        share=float(sum(w for r, w in zip(real, shares, strict=True) if not r.size)),
        predicted_width=made.predicted_width,
        target_width=float(target_width),
    )


def calibrated_estimate(
    metric: str,
    synthetic: Sequence[QueryResult],
    calibration_real: Sequence[QueryResult],
    calibration_synthetic: Sequence[QueryResult],
    *,
    by: str | None,
    same_synthetic: bool,
    binary: bool,
    calibrated_on: str | None,
    max_age_days: float | None,
    now: datetime,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
    weights: Mapping[Any, float] | None = None,
    real_overall: Estimate | None = None,
    target_width: float = 0.2,
) -> CalibratedEstimate | None:
    """The calibrated estimate of ``metric`` (see the module docstring); None without real queries.

    ``synthetic``: the current synthetic queries; ``calibration_real``/``calibration_synthetic``: the
    real set and the synthetic queries beside it that the models learn from (the same results, or
    earlier results of the same retriever, generator and corpus: the caller checks). ``weights``:
    traffic share per stratum value, overriding the default. ``real_overall``: the real figure over all
    of ``calibration_real`` with its interval, quoted as the estimate when every stratum is measured.
    ``target_width``: the interval width the labelling advice plans for (calibrate's ``max_width``).
    """
    if metric_values(calibration_real, metric).size == 0:
        return None
    current = calibration_synthetic if same_synthetic else synthetic
    values = slice_values([*calibration_real, *current], by) if by else [None]
    cells = [
        _Cell(
            value,
            _Sample.of(_member(calibration_real, by, value), metric),
            _Sample.of(_member(calibration_synthetic, by, value), metric),
            _Sample.of(_member(current, by, value), metric),
            binary,
        )
        for value in values
    ]
    cells = [c for c in cells if c.real.size or c.synthetic.size]
    shares = _weights(cells, weights, by)
    measured = [c for c in cells if c.real.size]
    carrying = [c for c, share in zip(cells, shares, strict=True) if share > 0 and not c.real.size]
    model = choose_model([c.logits for c in measured]) if carrying else None
    notes: list[str] = []
    strata, draws = _strata_and_draws(cells, shares, model, weights is not None, confidence, n_resamples, rng)
    value_total = float(sum(s.weight * s.corrected for s in strata))
    alpha = (1.0 - confidence) / 2.0
    if not carrying and weights is None and real_overall is not None and real_overall.interval.defined:
        # Every stratum with traffic is measured and weighted by the real set's own mix: the estimate is
        # the real figure, its interval the real figure's (nothing predicted, nothing to shade).
        value_total, interval = real_overall.value, real_overall.interval
    else:
        low, high = np.quantile(draws.total, [alpha, 1.0 - alpha])
        # A Monte Carlo quantile can sit a hair inside the point when the spread is nil.
        low, high = min(float(low), value_total), max(float(high), value_total)
        method = "Jeffreys/Dirichlet" if not carrying else "random-effects prediction"
        interval = Interval(low, high, confidence, method)
    predicted = None
    if carrying and draws.predicted is not None:
        share = sum(s.weight for s in strata if s.source == PREDICTED)
        point = sum(s.weight * s.corrected for s in strata if s.source == PREDICTED) / share
        p_low, p_high = np.quantile(draws.predicted, [alpha, 1.0 - alpha])
        predicted = Estimate(
            point,
            Interval(min(float(p_low), point), max(float(p_high), point), confidence, "prediction"),
            0,
        )
    advice = None
    if carrying:
        advice = label_advice(
            metric, [c.real.values for c in cells], [c.value for c in cells], shares, binary=binary,
            target_width=target_width, confidence=confidence,
        )  # fmt: skip
    age = _age_days(calibrated_on, now)
    stale = age is not None and max_age_days is not None and age > max_age_days
    if calibrated_on is None:
        notes.append("the real set has no date: give --real-date so staleness can be checked")
    elif stale:
        notes.append(
            f"calibration is stale: the real set dates from {calibrated_on[:10]}, {_age_text(age)} "
            f"(over {max_age_days:g}); collect fresh real questions"
        )
    return CalibratedEstimate(
        metric=metric,
        by=by,
        value=value_total,
        interval=interval,
        strata=tuple(strata),
        calibrated_on=calibrated_on,
        age_days=age,
        stale=stale,
        notes=tuple(notes),
        model=model,
        predicted=predicted,
        advice=advice,
    )


@dataclass(frozen=True)
class _Draws:
    total: np.ndarray
    predicted: np.ndarray | None


def _strata_and_draws(
    cells: Sequence[_Cell],
    shares: Sequence[float],
    model: ModelChoice | None,
    fixed_shares: bool,
    confidence: float,
    n: int,
    rng: np.random.Generator,
) -> tuple[list[Stratum], _Draws]:
    """Every stratum's figure and interval, and the Monte Carlo draws of the total and of the predicted
    part. Measured means are drawn independently; predicted strata share one t draw per world."""
    share_draws = _share_draws(cells, shares, fixed_shares, n, rng)
    total = np.zeros(n, dtype=np.float64)
    predicted_total = np.zeros(n, dtype=np.float64)
    predicted_weight = np.zeros(n, dtype=np.float64)
    shared: dict[float, np.ndarray] = {}
    strata: list[Stratum] = []
    for position, cell in enumerate(cells):
        if cell.real.size:
            draws = _expit_array(_logit_draws(cell.real, cell.binary, n, rng))
            point, source = cell.real.mean(), MEASURED
            interval = _quantile_interval(draws, point, confidence, "measured")
        elif model is not None and cell.synthetic.size:
            prediction = model.predict(_logit_mean(cell.synthetic), _logit_variance(cell.synthetic))
            if prediction.df not in shared:
                shared[prediction.df] = _standard_draws(prediction.df, n, rng)
            draws = _expit_array(prediction.centre + prediction.scale * shared[prediction.df])
            point, source = _expit(prediction.centre), PREDICTED
            interval = _prediction_interval(prediction, confidence)
            predicted_total += share_draws[:, position] * draws
            predicted_weight += share_draws[:, position]
        else:  # synthetic questions only and no traffic on them: nothing to predict
            draws, point, source, interval = np.zeros(n), math.nan, PREDICTED, None
        if not math.isnan(point):
            total += share_draws[:, position] * draws
        strata.append(
            Stratum(
                value=cell.value,
                weight=shares[position],
                synthetic=float(cell.synthetic.mean()) if cell.synthetic.size else math.nan,
                gap=cell.own_gap,
                corrected=0.0 if math.isnan(point) else point,
                n_synthetic=int(cell.synthetic.size),
                n_real=int(cell.real.size),
                source=source,
                interval=interval,
            )
        )
    predicted = predicted_total / predicted_weight if np.all(predicted_weight > 0) else None
    return strata, _Draws(total, predicted)


def _standard_draws(df: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(n) if math.isinf(df) else rng.standard_t(df, n)


def _prediction_interval(prediction: Prediction, confidence: float) -> Interval:
    half = quantile(prediction.df, confidence) * prediction.scale
    return Interval(
        _expit(prediction.centre - half), _expit(prediction.centre + half), confidence, "prediction"
    )


def _quantile_interval(draws: np.ndarray, point: float, confidence: float, method: str) -> Interval:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    return Interval(min(float(low), point), max(float(high), point), confidence, method)


@dataclass(frozen=True, eq=False)
class _Cell:
    """One stratum's per-query values: real and synthetic in the calibration, synthetic now."""

    value: Any
    real: _Sample
    calibration_synthetic: _Sample
    synthetic: _Sample
    binary: bool

    @property
    def logits(self) -> StratumLogits:
        """What the prediction models learn from this (measured) stratum."""
        both = self.calibration_synthetic.size > 0
        return StratumLogits(
            real=_logit_mean(self.real),
            real_variance=_logit_variance(self.real),
            real_mean=self.real.mean(),
            n_real=self.real.size,
            real_spread=self.real.value_variance(),
            synthetic=_logit_mean(self.calibration_synthetic) if both else math.nan,
            synthetic_variance=_logit_variance(self.calibration_synthetic) if both else math.nan,
        )

    @property
    def own_gap(self) -> float:
        if self.real.size == 0 or self.calibration_synthetic.size == 0:
            return math.nan
        return float(self.calibration_synthetic.mean() - self.real.mean())


@dataclass(frozen=True)
class _Sample:
    """One stratum's per-query values of one set, with their Horvitz-Thompson weights.

    A synthetic question generated from a sample of chunks carries ``inclusion_probability`` p; its
    weight is 1/p, so the mean (Hajek's weighted mean) estimates the whole corpus. ``n`` is the
    effective sample size (Kish): what the weights leave of the count.
    """

    values: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, records: Sequence[QueryResult], metric: str) -> _Sample:
        chosen = [q for q in records if metric in q.metrics]
        values = np.fromiter((q.metrics[metric] for q in chosen), dtype=np.float64, count=len(chosen))
        weights = np.fromiter((q.weight for q in chosen), dtype=np.float64, count=len(chosen))
        return cls(values, weights)

    @property
    def size(self) -> int:
        return int(self.values.size)

    @property
    def total_weight(self) -> float:
        return float(self.weights.sum())

    @property
    def n(self) -> float:
        if self.size == 0:
            return 0.0
        return float(self.weights.sum() ** 2 / np.sum(self.weights**2))

    def mean(self) -> float:
        return float(np.sum(self.weights * self.values) / self.weights.sum())

    def value_variance(self) -> float:
        """The (weighted) variance of the values around their mean: how far one question strays."""
        return float(np.sum(self.weights * (self.values - self.mean()) ** 2) / self.weights.sum())

    def mean_variance(self) -> float:
        """Variance of the weighted mean (the linearised Hajek variance; the plain one when unweighted)."""
        if self.size < 2:
            return 0.0
        deviations = self.values - self.mean()
        total = self.weights.sum()
        return float(np.sum(self.weights**2 * deviations**2) / total**2 * self.size / (self.size - 1))


def _logit_mean(sample: _Sample) -> float:
    """The logit of the mean, with half a count added on each side so that 0 and 1 stay finite."""
    p = _smoothed(sample)
    return math.log(p / (1.0 - p))


def _smoothed(sample: _Sample) -> float:
    return (sample.mean() * sample.n + 0.5) / (sample.n + 1.0)


def _logit_variance(sample: _Sample) -> float:
    """Delta-method variance of the logit of the mean: var(mean) / (p(1-p))^2."""
    p = _smoothed(sample)
    binomial = p * (1.0 - p) / (sample.n + 1.0)
    observed = sample.mean_variance()
    # All values equal (often the case in a small stratum) says little about the spread: take the
    # binomial variance at the smoothed mean, the largest values in [0, 1] can have.
    variance = observed if observed > 0 else binomial
    return variance / (p * (1.0 - p)) ** 2


def _logit_draws(sample: _Sample, binary: bool, n: int, rng: np.random.Generator) -> np.ndarray:
    if binary:
        p = _beta_draws(sample, n, rng)
        return np.log(p / (1.0 - p))
    return _logit_mean(sample) + math.sqrt(_logit_variance(sample)) * rng.standard_normal(n)


def _beta_draws(sample: _Sample, n: int, rng: np.random.Generator) -> np.ndarray:
    """Jeffreys posterior of a proportion, Beta(x + 1/2, n - x + 1/2) in effective counts, inside (0, 1)."""
    successes = sample.mean() * sample.n
    draws = rng.beta(successes + 0.5, sample.n - successes + 0.5, n)
    tiny = np.finfo(np.float64).tiny
    return np.clip(draws, tiny, 1.0 - np.finfo(np.float64).eps)


def _expit(x: float) -> float:
    return float(stats.logistic.cdf(x))


def _expit_array(x: np.ndarray) -> np.ndarray:
    return np.asarray(stats.logistic.cdf(x), dtype=np.float64)


def _weights(cells: Sequence[_Cell], given: Mapping[Any, float] | None, by: str | None) -> list[float]:
    if given is not None:
        # Keys may be the values themselves or their text (the command line gives text).
        found = [given.get(c.value, given.get(str(c.value))) for c in cells]
        missing = [c.value for c, weight in zip(cells, found, strict=True) if weight is None]
        if missing:
            raise InputError(
                f"no traffic weight for {_label(by, missing[0])}",
                hint="give a weight for every stratum, e.g. --stratum-weight news=0.3",
            )
        total = sum(float(weight or 0.0) for weight in found)
        if not total > 0:
            raise InputError("the traffic weights sum to 0", hint="give positive weights")
        return [float(weight or 0.0) / total for weight in found]
    n_real = sum(c.real.size for c in cells)
    # The corpus mix: synthetic questions weighted by 1/p, so a sampled stratum counts for its size.
    synthetic_total = sum(c.synthetic.total_weight for c in cells if c.synthetic.size)
    uncovered = [c for c in cells if c.real.size == 0]
    u = (
        sum(c.synthetic.total_weight for c in uncovered) / synthetic_total
        if synthetic_total and uncovered
        else 0.0
    )
    return [
        (1.0 - u) * c.real.size / n_real if c.real.size else c.synthetic.total_weight / synthetic_total
        for c in cells
    ]


def _share_draws(
    cells: Sequence[_Cell], shares: Sequence[float], fixed: bool, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Traffic shares per draw: real shares vary as a Dirichlet over the real counts (they are a sample)."""
    matrix = np.tile(np.asarray(shares, dtype=np.float64), (n, 1))
    covered = [i for i, c in enumerate(cells) if c.real.size]
    if fixed or len(covered) < 2:
        return matrix
    counts = np.array([cells[i].real.size for i in covered], dtype=np.float64)
    total = sum(shares[i] for i in covered)
    matrix[:, covered] = rng.dirichlet(counts + 0.5, n) * total
    return matrix


def _strata(count: int) -> str:
    return f"{count} stratum" if count == 1 else f"{count} strata"


def _label(by: str | None, value: Any) -> str:
    return "all queries" if by is None else f"{by}={'(missing)' if value is None else value}"


def _age_text(days: int | None) -> str:
    if days is None:
        return ""
    if days == 0:
        return "today"
    return f"{days} day ago" if days == 1 else f"{days} days ago"


def _member(records: Sequence[QueryResult], by: str | None, value: Any) -> list[QueryResult]:
    if by is None:
        return list(records)
    return [q for q in records if q.field(by) == value]


def _age_days(calibrated_on: str | None, now: datetime) -> int | None:
    if calibrated_on is None:
        return None
    moment = parse_date(calibrated_on, what="real-set date")
    return (now - moment).days

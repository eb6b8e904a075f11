"""The calibrated estimate: a real-traffic-weighted figure for the current corpus, measured where it can be.

What it is for: the real set covers some strata (a stratum is one value of the ``by`` field: a query
type, a language, a product area, old versus new documents) and not others. The estimate is

    sum over strata s of  w_s * p_s

with ``p_s`` chosen per stratum:

- **measured**: the real set has at least ``min_real`` queries in ``s``: ``p_s`` is their mean, the
  measured real figure, nothing carried over;
- **blended**: the real set covers ``s`` thinly (1 to ``min_real - 1`` queries): the real mean and the
  synthetic-based prediction below, weighted by their precision (the thinner the real evidence, the
  more the prediction counts);
- **estimated**: no real query in ``s``: the synthetic mean of ``s`` corrected by the gap.

The gap is measured on the strata that hold both real and synthetic queries, on the logit scale
(``logit(synthetic) - logit(real)``), and pooled with a random-effects model (DerSimonian-Laird): a
pooled gap ``mu`` and a between-stratum variance ``tau^2``. A stratum's own gap is not ``mu`` but a
draw from the spread of gaps, so the interval of an estimated stratum is a *prediction* interval
(Higgins, Thompson and Spiegelhalter 2009: ``mu ± t_{k-2} * sqrt(se(mu)^2 + tau^2)``); it widens when
the gaps differ between strata. With fewer than three gap strata ``tau`` cannot be estimated; the
interval then assumes a spread of ``ASSUMED_SPREAD`` on the logit scale and says so.

Everything is computed on a bounded scale: means enter as logits (with a half-count continuity
correction, so 0 and 1 are finite) and leave through the logistic function, so every estimate and every
bound lies in [0, 1] without clipping. The interval is a Monte Carlo over the sampling distribution of
each mean (Jeffreys beta for proportions, logit-normal otherwise), the pooled gap and the
between-stratum spread, and (by default) the real-traffic shares (Dirichlet).

Weights ``w_s``: the share of real traffic. Strata the real set covers get their share of the real set
scaled by ``1 - U``; strata without real questions get their share of the synthetic set (the corpus
mix), summing to ``U``. ``weights`` overrides both.

The estimate belongs to one retriever: the caller (``calibrate``) refuses gaps measured with another
retriever or generator. It is marked with the date of the real set behind it and flagged stale when
older than ``max_age_days``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from scipy import stats

from realrecall.calibrate.gap import metric_values, slice_values
from realrecall.calibrate.statistics import Interval
from realrecall.errors import InputError
from realrecall.evaluate.results import QueryResult

__all__ = [
    "ASSUMED_SPREAD",
    "MIN_REAL",
    "CalibratedEstimate",
    "PooledGap",
    "Stratum",
    "calibrated_estimate",
    "parse_date",
    "pooled_gap",
    "random_effects",
]

MIN_REAL = 10
"""A stratum with at least this many real queries is measured; with fewer, blended with the prediction."""

ASSUMED_SPREAD = 1.0
"""Between-stratum standard deviation of the logit gap assumed when fewer than three strata measure it.

A logit of 1.0 is about 0.2 in recall near 0.7: the size of the gap differences seen across strata
and retrievers on public data (SciFact gaps ran from -0.37 to +0.20 across six retrievers). It makes
the interval wide, which is the honest answer when the spread cannot be measured.
"""

MEASURED, BLENDED, ESTIMATED = "measured", "blended", "estimated"


@dataclass(frozen=True)
class Stratum:
    """One stratum of the calibrated estimate.

    ``source``: ``measured`` (real mean), ``blended`` (thin real evidence and the prediction) or
    ``estimated`` (no real query: the synthetic mean corrected by the pooled gap). ``gap``: the
    stratum's own synthetic-minus-real gap where both were measured (NaN otherwise).
    """

    value: Any
    weight: float
    synthetic: float
    gap: float
    corrected: float
    n_synthetic: int
    n_real: int
    source: str = MEASURED


@dataclass(frozen=True)
class PooledGap:
    """The random-effects pool of per-stratum logit gaps."""

    mu: float
    se: float
    tau: float | None
    """Between-stratum standard deviation; None when fewer than three strata measure it."""
    strata: int
    weights: tuple[float, ...] = ()
    """Each stratum's share of the pooled gap (random-effects weights, summing to 1)."""

    @property
    def spread(self) -> float:
        """The between-stratum SD used for predictions: measured, or ``ASSUMED_SPREAD``."""
        return ASSUMED_SPREAD if self.tau is None else self.tau

    @property
    def df(self) -> float:
        """Degrees of freedom of the prediction's t distribution (normal when tau is assumed)."""
        return math.inf if self.tau is None else float(self.strata - 2)


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
    pooled: PooledGap | None = None
    left_out: tuple[Any, ...] = ()
    """Strata with synthetic queries only and no measured gap to correct them: not in the figure."""

    @property
    def age_text(self) -> str:
        """``today``, ``1 day ago``, ``12 days ago``; empty when the real set has no date."""
        return _age_text(self.age_days)

    @property
    def measured_share(self) -> float:
        """The share of traffic whose figure is measured on real questions."""
        return float(sum(s.weight for s in self.strata if s.source == MEASURED))

    @property
    def fully_measured(self) -> bool:
        return all(s.source == MEASURED for s in self.strata)

    @property
    def text(self) -> str:
        """One line every format shows: the figure, its interval, and what it carries over."""
        level = f"{self.interval.confidence * 100:g}%"
        kind = "CI" if self.fully_measured else "prediction interval"
        head = (
            f"Calibrated {self.metric} = {self.value:.2f} ({level} {kind} "
            f"{self.interval.low:.2f}-{self.interval.high:.2f})"
        )
        if self.left_out:
            shown = ", ".join(_label(self.by, v) for v in self.left_out[:3])
            return (
                f"{head}: real questions only. No stratum in common: the synthetic questions of {shown} "
                "have no real counterpart and no gap is measured to correct them, so they are left out."
            )
        if self.fully_measured:
            return head + ": measured on real questions in every stratum."
        estimated = [s for s in self.strata if s.source != MEASURED]
        share = 1.0 - self.measured_share
        pooled = self.pooled
        basis = (
            f"the gap of {_strata(pooled.strata)} with both sets" if pooled is not None else "no measured gap"
        )
        spread = ""
        if pooled is not None:
            assumed = "(assumed) " if pooled.tau is None else ""
            spread = f", between-stratum spread {assumed}{pooled.spread:.2f} logit"
        return (
            f"{head}: NOT measured for {share:.0%} of traffic ({_strata(len(estimated))} with few or no "
            "real questions), estimated from synthetic "
            f"questions corrected by {basis}{spread}."
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
    min_real: int = MIN_REAL,
) -> CalibratedEstimate | None:
    """The calibrated estimate of ``metric`` (see the module docstring); None without real queries.

    ``synthetic``: the current synthetic queries; ``calibration_real``/``calibration_synthetic``: the
    queries the gap is measured on (the same results, or earlier results of the same retriever and
    generator: the caller checks). ``weights``: traffic share per stratum value, overriding the default.
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
    notes: list[str] = []
    gap_cells = [c for c in cells if c.real.size and c.calibration_synthetic.size]
    pooled = pooled_gap(gap_cells)
    usable = [c for c in cells if c.real.size or (pooled is not None and c.synthetic.size)]
    left_out = tuple(c.value for c in cells if not (c.real.size or (pooled is not None and c.synthetic.size)))
    if left_out:
        notes.append(
            "no stratum in common: no stratum holds both real and synthetic queries, so no gap is measured "
            f"and {', '.join(_label(by, v) for v in left_out)} (synthetic only) cannot be corrected"
        )
    if pooled is not None and pooled.tau is None and any(c.real.size < min_real for c in usable):
        notes.append(
            f"only {_strata(pooled.strata)} {'measures' if pooled.strata == 1 else 'measure'} the gap: "
            "the spread of gaps between strata cannot be estimated, so the interval assumes "
            f"{ASSUMED_SPREAD:g} logit; real questions in more strata would measure it"
        )
    shares = _weights(usable, weights, by)
    draws = np.zeros(n_resamples, dtype=np.float64)
    share_draws = _share_draws(usable, shares, weights is not None, n_resamples, rng)
    # One Monte Carlo world per draw: every mean drawn once and used everywhere it enters, so a real
    # stratum that happens to be low lowers both its own figure and the gap it lends to the others (they
    # move together; drawing them apart would make the interval too narrow).
    world = _World.draw(cells, same_synthetic, n_resamples, rng)
    strata: list[Stratum] = []
    for position, cell in enumerate(usable):
        # A thinly covered stratum is blended with what the *other* strata's gaps predict for it: its
        # own gap in the pool would make the prediction lean on the very real queries it is to back up.
        lenders = gap_cells if cell.real.size == 0 else [c for c in gap_cells if c is not cell]
        point, stratum_draws, source = _stratum(cell, lenders, world, min_real, n_resamples, rng)
        draws += share_draws[:, position] * stratum_draws
        strata.append(
            Stratum(
                value=cell.value,
                weight=shares[position],
                synthetic=float(cell.synthetic.mean()) if cell.synthetic.size else math.nan,
                gap=cell.own_gap,
                corrected=point,
                n_synthetic=int(cell.synthetic.size),
                n_real=int(cell.real.size),
                source=source,
            )
        )
    if not strata:
        return None
    value_total = float(sum(s.weight * s.corrected for s in strata))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
    # The point is a weighted mean of values in [0, 1] and the draws are too; a Monte Carlo quantile
    # can still sit a hair inside the point when the spread is nil (one measured stratum of all 1s).
    low, high = min(float(low), value_total), max(float(high), value_total)
    age = _age_days(calibrated_on, now)
    stale = age is not None and max_age_days is not None and age > max_age_days
    if calibrated_on is None:
        notes.append("the real set has no date: give --real-date so staleness can be checked")
    elif stale:
        notes.append(
            f"calibration is stale: the real set dates from {calibrated_on[:10]}, {_age_text(age)} "
            f"(over {max_age_days:g}); collect fresh real questions"
        )
    method = (
        "Jeffreys/Dirichlet" if all(s.source == MEASURED for s in strata) else "random-effects prediction"
    )
    return CalibratedEstimate(
        metric=metric,
        by=by,
        value=value_total,
        interval=Interval(low, high, confidence, method),
        strata=tuple(strata),
        calibrated_on=calibrated_on,
        age_days=age,
        stale=stale,
        notes=tuple(notes),
        pooled=pooled,
        left_out=left_out,
    )


def pooled_gap(cells: Sequence[_Cell]) -> PooledGap | None:
    """The random-effects pool of the cells' logit gaps; None without a cell."""
    if not cells:
        return None
    return random_effects(
        np.array([c.logit_gap for c in cells]), np.array([c.logit_gap_variance for c in cells])
    )


def random_effects(effects: np.ndarray, variances: np.ndarray) -> PooledGap:
    """DerSimonian-Laird random-effects pool of ``effects`` with within-stratum ``variances``.

    Equals statsmodels' ``combine_effects(effects, variances, method_re="dl")`` (mean_effect_re,
    tau2, sd_eff_w_re). ``tau`` is None with fewer than three effects: two points cannot tell a spread
    from their own noise, and the prediction needs k - 2 degrees of freedom.
    """
    k = int(effects.size)
    w = 1.0 / variances
    fixed = float(np.sum(w * effects) / np.sum(w))
    tau2 = 0.0
    if k >= 2:
        q = float(np.sum(w * (effects - fixed) ** 2))
        c = float(np.sum(w) - np.sum(w**2) / np.sum(w))
        tau2 = max(0.0, (q - (k - 1)) / c) if c > 0 else 0.0
    w_star = 1.0 / (variances + tau2)
    mu = float(np.sum(w_star * effects) / np.sum(w_star))
    se = float(math.sqrt(1.0 / np.sum(w_star)))
    shares = tuple(float(x) for x in w_star / np.sum(w_star))
    return PooledGap(mu=mu, se=se, tau=math.sqrt(tau2) if k >= 3 else None, strata=k, weights=shares)


@dataclass(frozen=True, eq=False)
class _Cell:
    """One stratum's per-query values: real and synthetic in the calibration, synthetic now."""

    value: Any
    real: _Sample
    calibration_synthetic: _Sample
    synthetic: _Sample
    binary: bool

    @property
    def logit_gap(self) -> float:
        return _logit_mean(self.calibration_synthetic) - _logit_mean(self.real)

    @property
    def logit_gap_variance(self) -> float:
        return _logit_variance(self.calibration_synthetic) + _logit_variance(self.real)

    @property
    def own_gap(self) -> float:
        if self.real.size == 0 or self.calibration_synthetic.size == 0:
            return math.nan
        return float(self.calibration_synthetic.mean() - self.real.mean())


@dataclass(frozen=True)
class _World:
    """Monte Carlo draws of every cell's logit means: real, calibration synthetic, current synthetic."""

    real: dict[int, np.ndarray]
    calibration_synthetic: dict[int, np.ndarray]
    synthetic: dict[int, np.ndarray]

    @classmethod
    def draw(cls, cells: Sequence[_Cell], same_synthetic: bool, n: int, rng: np.random.Generator) -> _World:
        def of(pick: Callable[[_Cell], _Sample]) -> dict[int, np.ndarray]:
            return {id(c): _logit_draws(pick(c), c.binary, n, rng) for c in cells if pick(c).size}

        calibration = of(lambda c: c.calibration_synthetic)
        # The same synthetic questions calibrate and are corrected: one draw serves both.
        current = calibration if same_synthetic else of(lambda c: c.synthetic)
        return cls(of(lambda c: c.real), calibration, current)

    def pooled_gap(self, cells: Sequence[_Cell], pooled: PooledGap) -> np.ndarray:
        """The pooled logit gap in each draw, from the same draws as everything else."""
        total = np.zeros_like(next(iter(self.real.values())))
        for weight, cell in zip(pooled.weights, cells, strict=True):
            total += weight * (self.calibration_synthetic[id(cell)] - self.real[id(cell)])
        return total


def _stratum(
    cell: _Cell, lenders: Sequence[_Cell], world: _World, min_real: int, n: int, rng: np.random.Generator
) -> tuple[float, np.ndarray, str]:
    """A stratum's point, its Monte Carlo draws (in [0, 1]) and where it comes from.

    ``lenders``: the strata whose gaps predict this one's. The caller leaves out strata with neither real
    queries nor a way to correct their synthetic ones, so one that falls through to measured has real
    queries.
    """
    pooled = pooled_gap(lenders)
    if cell.real.size >= min_real or pooled is None or not cell.synthetic.size:
        return float(cell.real.mean()), _expit_array(world.real[id(cell)]), MEASURED
    # A new stratum's own gap is the pooled gap (drawn with its sampling error) plus its deviation from
    # it: t with k-2 degrees of freedom times the between-stratum spread (normal when the spread is assumed).
    deviation = rng.standard_t(pooled.df, n) if math.isfinite(pooled.df) else rng.standard_normal(n)
    gap_draws = world.pooled_gap(lenders, pooled) + pooled.spread * deviation
    predicted = _logit_mean(cell.synthetic) - pooled.mu
    predicted_draws = world.synthetic[id(cell)] - gap_draws
    if cell.real.size == 0:
        return _expit(predicted), _expit_array(predicted_draws), ESTIMATED
    # Thin real evidence: precision-weighted with the prediction (an empirical-Bayes shrinkage).
    predicted_variance = _logit_variance(cell.synthetic) + pooled.se**2 + pooled.spread**2
    share = (1.0 / _logit_variance(cell.real)) / (1.0 / _logit_variance(cell.real) + 1.0 / predicted_variance)
    point = share * _logit_mean(cell.real) + (1.0 - share) * predicted
    draws = share * world.real[id(cell)] + (1.0 - share) * predicted_draws
    return _expit(point), _expit_array(draws), BLENDED


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


def parse_date(text: str, *, what: str = "date") -> datetime:
    """An ISO 8601 date or timestamp; naive values are taken as UTC."""
    if not isinstance(text, str):
        raise InputError(f"{what} {text!r} is not an ISO date", hint="write it as 2026-11-30")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{what} {text!r} is not an ISO date", hint="write it as 2026-11-30") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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

"""The synthetic-vs-real gap, overall and per slice, and the headline that says which figure to quote.

For every metric and every slice (a value of ``type``, ``language`` or any other per-query field), the
real figure and the synthetic figure each get their interval (see ``statistics``), and the gap
``synthetic - real`` gets an interval: Newcombe's hybrid score interval for a binary metric (the
difference of two proportions), else a bootstrap interval that resamples the two sets independently. A real
figure is flagged as too uncertain to quote alone when its interval is wider than ``max_width`` or
fewer than ``min_queries`` real queries stand behind it; the flag says how many more would do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from realrecall.calibrate.plan import plan_strata
from realrecall.calibrate.statistics import (
    Estimate,
    Interval,
    at_least,
    bootstrap_mean_matrix,
    bootstrap_weighted_mean_matrix,
    bounded_mean_interval,
    estimate_mean,
    gap_interval,
    gap_interval_from_draws,
    interval_from_draws,
    mover_interval,
    newcombe_interval,
    wilson_interval,
)
from realrecall.evaluate.metrics import is_binary
from realrecall.evaluate.results import QueryResult

__all__ = [
    "Headline",
    "SliceGap",
    "headline",
    "measure_gaps",
    "metric_values",
    "more_real_needed",
    "slice_values",
]


@dataclass(frozen=True)
class SliceGap:
    """One metric on one slice (``field`` None = all queries): real, synthetic and their gap."""

    metric: str
    field: str | None
    value: Any
    real: Estimate
    synthetic: Estimate
    gap: float
    gap_interval: Interval
    more_real_needed: int
    notes: tuple[str, ...] = ()

    @property
    def n_real(self) -> int:
        return self.real.n

    @property
    def n_synthetic(self) -> int:
        return self.synthetic.n

    @property
    def label(self) -> str:
        return "all queries" if self.field is None else f"{self.field}={_value_text(self.value)}"


@dataclass(frozen=True)
class Headline:
    """The figure to quote, as one line (``text``) and as the numbers behind it."""

    metric: str
    real: Estimate
    synthetic: Estimate
    gap: float
    gap_interval: Interval
    text: str


def metric_values(records: Sequence[QueryResult], metric: str) -> np.ndarray:
    """The per-query values of ``metric`` (queries without it are left out)."""
    return np.fromiter(
        (q.metrics[metric] for q in records if metric in q.metrics), dtype=np.float64, count=-1
    )


def slice_values(records: Sequence[QueryResult], field: str) -> list[Any]:
    """The distinct values of ``field`` among ``records``, sorted, missing (None) last."""
    values = {q.field(field) for q in records}
    present = sorted((v for v in values if v is not None), key=lambda v: (type(v).__name__, str(v)))
    return present + ([None] if None in values else [])


def measure_gaps(
    real: Sequence[QueryResult],
    synthetic: Sequence[QueryResult],
    metrics: Sequence[str],
    fields: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator,
    min_queries: int = 30,
    max_width: float = 0.2,
    method: str = "percentile",
) -> tuple[SliceGap, ...]:
    """Every metric on all queries and on every slice of ``fields`` (values seen in either set).

    ``method``: the bootstrap interval (``percentile`` or ``bca``) for non-proportions and gaps.
    """
    settings = _Settings(confidence, n_resamples, rng, min_queries, max_width, method)
    slices: list[list[SliceGap]] = [_slice_gaps(metrics, None, None, real, synthetic, settings)]
    for name in fields:
        for value in slice_values([*real, *synthetic], name):
            r = [q for q in real if q.field(name) == value]
            s = [q for q in synthetic if q.field(name) == value]
            slices.append(_slice_gaps(metrics, name, value, r, s, settings))
    # Reported metric by metric: all queries first, then each slice.
    return tuple(rows[position] for position in range(len(metrics)) for rows in slices)


def headline(overall: SliceGap) -> Headline:
    """The one line every report starts with, e.g.

    ``Quote real recall@10 = 0.68 (95% CI 0.61-0.75, n=120). Synthetic 0.94 overstates it by 0.26.``
    """
    real, synthetic, metric = overall.real, overall.synthetic, overall.metric
    level = f"{overall.real.interval.confidence * 100:g}% CI"
    if real.n == 0:
        text = f"No real queries: there is no real {metric} to quote."
        if synthetic.n:
            text += (
                f" Synthetic {_fmt(synthetic.value)} ({_ci_text(synthetic.interval, level)}, "
                f"n={synthetic.n}) is not a real-equivalent figure; add real questions or calibrate."
            )
    else:
        text = f"Quote real {metric} = {_fmt(real.value)} ({_ci_text(real.interval, level)}, n={real.n})."
        if synthetic.n == 0:
            text += " No synthetic queries to compare it with."
        elif round(abs(overall.gap), 2) == 0:
            text += f" Synthetic {_fmt(synthetic.value)} matches it."
        else:
            verb = "overstates" if overall.gap > 0 else "understates"
            text += f" Synthetic {_fmt(synthetic.value)} {verb} it by {_fmt(abs(overall.gap))}."
        if overall.more_real_needed > 0:
            text += (
                f" The real set is too small for a useful interval: about {overall.more_real_needed} "
                "more real questions needed."
            )
    return Headline(metric, real, synthetic, overall.gap, overall.gap_interval, text)


@dataclass(frozen=True)
class _Settings:
    confidence: float
    n_resamples: int
    rng: np.random.Generator
    min_queries: int
    max_width: float
    method: str


def _slice_gaps(
    metrics: Sequence[str],
    field: str | None,
    value: Any,
    real: Sequence[QueryResult],
    synthetic: Sequence[QueryResult],
    settings: _Settings,
) -> list[SliceGap]:
    """Every metric on one slice, from one resampling of each set shared by all metrics."""
    r_values, s_values = _matrix(real, metrics), _matrix(synthetic, metrics)
    s_weights = np.array([q.weight for q in synthetic], dtype=np.float64)
    weighted = bool(s_weights.size) and not np.all(s_weights == 1.0)
    # Synthetic drawn before real, as scipy.stats.bootstrap draws (synthetic, real).
    s_draws = _weighted_draws(s_values, s_weights, settings) if weighted else _draws(s_values, settings)
    r_draws = _draws(r_values, settings)
    rows = []
    for j, metric in enumerate(metrics):
        r, s = r_values[:, j], s_values[:, j]
        if np.isnan(r).any() or np.isnan(s).any():
            rows.append(_slice_gap_apart(metric, field, value, real, synthetic, settings))
            continue
        binary = is_binary(metric)
        real_estimate = _estimate(r, None if r_draws is None else r_draws[:, j], binary, settings)
        if weighted and s_draws is not None:
            synthetic_estimate = _weighted_estimate(s, s_weights, s_draws[:, j], binary, settings)
        else:
            synthetic_estimate = _estimate(s, None if s_draws is None else s_draws[:, j], binary, settings)
        if binary and weighted:
            mean, n_eff = _weighted_mean(s, s_weights), _effective_n(s_weights)
            interval = newcombe_interval(
                mean * n_eff, n_eff, float(r.sum()), float(r.size), settings.confidence
            )
        elif binary:
            interval = _proportion_gap(s, r, settings.confidence)
        elif r_draws is None or s_draws is None or r.size + s.size < 3:
            interval = Interval.undefined(settings.confidence, "bootstrap")
        else:
            interval = at_least(
                gap_interval_from_draws(
                    s_draws[:, j] - r_draws[:, j],
                    s,
                    r,
                    confidence=settings.confidence,
                    method=settings.method,
                ),
                _bounded_gap(s, s_weights if weighted else None, r, settings.confidence),
            )
        rows.append(
            _slice_gap(metric, field, value, r, s, real_estimate, synthetic_estimate, interval, settings)
        )
    return rows


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    """Hajek's mean: questions from a sampled corpus count 1/p each (p their inclusion probability)."""
    return float(np.sum(weights * values) / np.sum(weights))


def _effective_n(weights: np.ndarray) -> float:
    """Kish's effective sample size: what unequal weights leave of the count."""
    return float(weights.sum() ** 2 / np.sum(weights**2))


def _weighted_draws(values: np.ndarray, weights: np.ndarray, settings: _Settings) -> np.ndarray | None:
    """Bootstrap draws of the weighted means of every column: queries resampled, weights kept with them."""
    if values.shape[0] == 0:
        return None
    return bootstrap_weighted_mean_matrix(np.nan_to_num(values), weights, settings.n_resamples, settings.rng)


def _weighted_estimate(
    values: np.ndarray, weights: np.ndarray, draws: np.ndarray, binary: bool, settings: _Settings
) -> Estimate:
    """The weighted mean with its interval: Wilson on the effective count for a proportion, else the
    percentile interval of the weighted bootstrap."""
    mean = _weighted_mean(values, weights)
    if binary:
        n_eff = _effective_n(weights)
        interval = wilson_interval(mean * n_eff, n_eff, settings.confidence)
    elif values.size < 2:
        interval = Interval.undefined(settings.confidence, "bootstrap")
    else:
        interval = at_least(
            interval_from_draws(draws, values, confidence=settings.confidence, method="percentile"),
            bounded_mean_interval(values, settings.confidence, weights=weights),
        )
    return Estimate(mean, interval, int(values.size))


def _matrix(records: Sequence[QueryResult], metrics: Sequence[str]) -> np.ndarray:
    return np.array(
        [[q.metrics.get(m, math.nan) for m in metrics] for q in records], dtype=np.float64
    ).reshape(len(records), len(metrics))


def _draws(values: np.ndarray, settings: _Settings) -> np.ndarray | None:
    if values.shape[0] == 0:
        return None
    return bootstrap_mean_matrix(np.nan_to_num(values), settings.n_resamples, settings.rng)


def _estimate(values: np.ndarray, draws: np.ndarray | None, binary: bool, settings: _Settings) -> Estimate:
    confidence = settings.confidence
    if values.size == 0 or draws is None:
        return Estimate(math.nan, Interval.undefined(confidence), 0)
    if binary:
        interval = wilson_interval(int(values.sum()), int(values.size), confidence)
    elif values.size < 2:
        interval = Interval.undefined(confidence, "bootstrap")
    else:
        interval = at_least(
            interval_from_draws(draws, values, confidence=confidence, method=settings.method),
            bounded_mean_interval(values, confidence),
        )
    return Estimate(float(values.mean()), interval, int(values.size))


def _bounded_gap(
    synthetic: np.ndarray, weights: np.ndarray | None, real: np.ndarray, confidence: float
) -> Interval:
    """The gap's floor: MOVER from each set's bounded-mean interval (Newcombe's method for a
    proportion; for a mean in [0, 1], what keeps the gap from collapsing where each set's bootstrap does)."""
    mean = float(synthetic.mean()) if weights is None else _weighted_mean(synthetic, weights)
    return mover_interval(
        mean,
        bounded_mean_interval(synthetic, confidence, weights=weights),
        float(real.mean()),
        bounded_mean_interval(real, confidence),
    )


def _proportion_gap(synthetic: np.ndarray, real: np.ndarray, confidence: float) -> Interval:
    """Newcombe's interval of the difference of two proportions: it keeps its coverage with a few
    queries and at 0 or 1, where the bootstrap of 6 real queries covered the true gap 44% of the time."""
    return newcombe_interval(
        int(synthetic.sum()), int(synthetic.size), int(real.sum()), int(real.size), confidence
    )


def _slice_gap_apart(
    metric: str,
    field: str | None,
    value: Any,
    real: Sequence[QueryResult],
    synthetic: Sequence[QueryResult],
    settings: _Settings,
) -> SliceGap:
    # Some queries lack this metric: resample only those that have it, for this metric alone.
    confidence, n_resamples, rng, method = (
        settings.confidence,
        settings.n_resamples,
        settings.rng,
        settings.method,
    )
    r, s = metric_values(real, metric), metric_values(synthetic, metric)
    binary = is_binary(metric)
    real_estimate, synthetic_estimate = (
        estimate_mean(
            values, binary=binary, confidence=confidence, n_resamples=n_resamples, rng=rng, method=method
        )
        for values in (r, s)
    )
    if binary:
        interval = _proportion_gap(s, r, confidence)
    else:
        interval = at_least(
            gap_interval(s, r, confidence=confidence, n_resamples=n_resamples, rng=rng, method=method),
            _bounded_gap(s, None, r, confidence),
        )
    return _slice_gap(metric, field, value, r, s, real_estimate, synthetic_estimate, interval, settings)


def _slice_gap(
    metric: str,
    field: str | None,
    value: Any,
    r: np.ndarray,
    s: np.ndarray,
    real_estimate: Estimate,
    synthetic_estimate: Estimate,
    interval: Interval,
    settings: _Settings,
) -> SliceGap:
    confidence, min_queries, max_width = settings.confidence, settings.min_queries, settings.max_width
    gap = synthetic_estimate.value - real_estimate.value if r.size and s.size else math.nan
    notes: list[str] = []
    more = 0
    if r.size == 0:
        notes.append("no real queries in this slice: no real figure and no gap")
    else:
        width = real_estimate.interval.width
        if r.size < min_queries or not width <= max_width:
            more = more_real_needed(
                r, metric, min_queries=min_queries, max_width=max_width, confidence=confidence
            )
            reason = (
                f"only {r.size} real {'query' if r.size == 1 else 'queries'} (fewer than {min_queries})"
                if r.size < min_queries
                else f"real interval {width:.2f} wide (over {max_width:.2f})"
            )
            notes.append(f"{reason}: about {more} more real questions needed")
    if s.size == 0:
        notes.append("no synthetic queries in this slice")
    return SliceGap(
        metric, field, value, real_estimate, synthetic_estimate, gap, interval, more, tuple(notes)
    )


def more_real_needed(
    real: np.ndarray, metric: str, *, min_queries: int, max_width: float, confidence: float
) -> int:
    """How many more real questions a slice needs: the labelling plan's count (``plan_strata``, the
    slice as one stratum, its real values the pilot) for an interval ``max_width`` wide, with at least
    ``min_queries`` in all. calibrate's "where to label" is the same plan over its strata."""
    if max_width >= 2.0:  # no interval of a metric in [0, 1] is that wide: only the count is asked
        return max(0, min_queries - int(real.size))
    made = plan_strata(
        {"all": real}, metric=metric, binary=is_binary(metric), target_width=max_width,
        confidence=confidence, at_least={"all": min_queries},
    )  # fmt: skip
    return made.n_more


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def _ci_text(interval: Interval, level: str) -> str:
    if not interval.defined:
        return f"{level} undefined"
    return f"{level} {_fmt(interval.low)}-{_fmt(interval.high)}"


def _value_text(value: Any) -> str:
    return "(missing)" if value is None else str(value)

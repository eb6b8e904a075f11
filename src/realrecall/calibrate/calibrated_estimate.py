"""The calibrated estimate: a real-equivalent figure from synthetic queries and a measured gap.

After a scheduled regeneration only the synthetic set is new; the real set (and the gap measured on it)
is older. The calibrated estimate carries the old measurement forward, slice by slice::

    calibrated = sum over strata s of  w_s * (S_s - G_s),   G_s = S'_s - R_s,   w_s = n_real_s / n_real

where a stratum is one value of the ``by`` field (``type`` by default), ``S_s`` is the synthetic mean
in the current results, ``S'_s`` and ``R_s`` are the synthetic and real means in the calibration
results (the ones holding the real set), and ``w_s`` is the stratum's share of the real set, so the
figure is weighted to the mix of questions real users ask. A stratum without current synthetic
queries keeps its real mean (``S_s - G_s`` with nothing to move it). When the current results are the
calibration results, ``S_s = S'_s`` and the estimate equals the real mean exactly.

Interval: a stratified percentile bootstrap, resampling within each stratum the current synthetic, the
calibration synthetic and the real queries independently (the same resample for ``S`` and ``S'`` when
they are the same queries), with the weights fixed. The estimate is marked with the date of the real
set it was calibrated on and flagged stale when older than ``max_age_days``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from realrecall.calibrate.gap import metric_values, slice_values
from realrecall.calibrate.statistics import Interval, bootstrap_means
from realrecall.errors import InputError
from realrecall.evaluate.results import QueryResult

__all__ = ["CalibratedEstimate", "Stratum", "calibrated_estimate", "parse_date"]


@dataclass(frozen=True)
class Stratum:
    """One stratum of the calibrated estimate."""

    value: Any
    weight: float
    synthetic: float
    gap: float
    corrected: float
    n_synthetic: int
    n_real: int


@dataclass(frozen=True)
class CalibratedEstimate:
    """A real-equivalent figure, marked with the date of the real set behind its correction."""

    metric: str
    by: str | None
    value: float
    interval: Interval
    strata: tuple[Stratum, ...]
    calibrated_on: str | None
    age_days: int | None
    stale: bool
    notes: tuple[str, ...] = ()

    @property
    def age_text(self) -> str:
        """``today``, ``1 day ago``, ``12 days ago``; empty when the real set has no date."""
        return _age_text(self.age_days)


def calibrated_estimate(
    metric: str,
    synthetic: Sequence[QueryResult],
    calibration_real: Sequence[QueryResult],
    calibration_synthetic: Sequence[QueryResult],
    *,
    by: str | None,
    same_synthetic: bool,
    calibrated_on: str | None,
    max_age_days: float | None,
    now: datetime,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> CalibratedEstimate | None:
    """The calibrated estimate of ``metric`` (formula in the module docstring); None without real queries."""
    real_values = metric_values(calibration_real, metric)
    if real_values.size == 0:
        return None
    strata_values = slice_values(calibration_real, by) if by else [None]
    n_real = real_values.size
    strata: list[Stratum] = []
    draws = np.zeros(n_resamples, dtype=np.float64)
    notes: list[str] = []
    for value in strata_values:
        r = metric_values(_member(calibration_real, by, value), metric)
        if r.size == 0:
            continue
        s_old = metric_values(_member(calibration_synthetic, by, value), metric)
        s_new = s_old if same_synthetic else metric_values(_member(synthetic, by, value), metric)
        weight = r.size / n_real
        r_draw = bootstrap_means(r, n_resamples, rng)
        label = "all queries" if by is None else f"{by}={'(missing)' if value is None else value}"
        if s_new.size == 0 or s_old.size == 0:
            gap = math.nan
            corrected = float(r.mean())
            corrected_draw = r_draw
            notes.append(f"{label}: no synthetic queries to correct, its real mean is carried over")
        else:
            gap = float(s_old.mean() - r.mean())
            corrected = float(s_new.mean()) - gap
            if same_synthetic:
                corrected_draw = r_draw
            else:
                new_draw = bootstrap_means(s_new, n_resamples, rng)
                corrected_draw = new_draw - bootstrap_means(s_old, n_resamples, rng) + r_draw
        if r.size < 2:
            notes.append(f"{label}: one real query, its correction is barely measured")
        draws += weight * corrected_draw
        synthetic_mean = float(s_new.mean()) if s_new.size else math.nan
        strata.append(Stratum(value, weight, synthetic_mean, gap, corrected, int(s_new.size), int(r.size)))
    value_total = float(sum(stratum.weight * stratum.corrected for stratum in strata))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [alpha, 1.0 - alpha])
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
        interval=Interval(float(low), float(high), confidence, "stratified bootstrap"),
        strata=tuple(strata),
        calibrated_on=calibrated_on,
        age_days=age,
        stale=stale,
        notes=tuple(notes),
    )


def parse_date(text: str, *, what: str = "date") -> datetime:
    """An ISO 8601 date or timestamp; naive values are taken as UTC."""
    if not isinstance(text, str):
        raise InputError(f"{what} {text!r} is not an ISO date", hint="write it as 2026-11-30")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{what} {text!r} is not an ISO date", hint="write it as 2026-11-30") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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

"""The width a labelling plan will reach, predicted from its pilot: the width most probably within 20%.

A plan asks for ``n_h`` questions per stratum; the interval width they give depends on the spread of
the population, which a pilot of 30 knows only roughly (26 hits in 30 fit a rate of 0.75 as well as
one of 0.95, and ``p(1-p)`` differs threefold between them). So the prediction is made from the
pilot's posterior, not from one point estimate:

- **Posterior of each stratum's population**: a Dirichlet over the values seen in the pilot and the
  metric's bounds 0 and 1, one pseudo-question at each bound (Bayesian bootstrap; for a binary metric
  the rate's posterior is exactly ``Beta(x + 1, n - x + 1)``, Bayes-Laplace's uniform prior). Strata
  borrow from the pooled pilot: a stratum's draw is ``Dirichlet(own counts + strength * pooled draw)``,
  ``strength`` questions' worth of the pooled population.
- **Predictive width**: for each posterior draw, the questions still to label are drawn from it (their
  hit count binomially for a binary metric; for any other, the sums of their values and squares, normal
  with the draw's moments) and the interval width computed as the labelled set will give it: Wilson's
  for one binary stratum, else ``2 z sqrt(sum_h W_h^2 s_h^2 / n_h)`` with each stratum's sample spread.
- **The predicted width** ``W`` is the one whose window ``[0.8 W, 1.2 W]`` holds the most draws: it
  maximises the posterior probability that the width reached lands within 20% of the prediction, and
  that probability is reported beside it. Among equally full windows, the median draw's when it is one
  of them, else the one nearest it.

The uniform prior rather than Jeffreys' ``Beta(1/2, 1/2)``: Jeffreys' puts half its mass within 0.15 of
the bounds, so an all-hit pilot reads as a rate near 0.98, and the prediction fails at rates of 0.85 to
0.9 (where retrieval often sits) more often than it gains near 0.99. Near a bound no prediction from 30
questions holds 90% of the time: even knowing the rate exactly, the Wilson width of 200 answers at a rate
of 0.99 is within 20% of any one value only 72% of the time (``docs/real-data.md`` has the figures).
Draws come from a fixed seed, so a plan is a function of its pilot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "WITHIN",
    "PilotPosterior",
    "WidthPrediction",
    "pilot_posterior",
    "predict_width",
    "probability_within",
    "reached_widths",
]

WITHIN = 0.2
"""The prediction is meant to hold within this share of the width reached: ``[0.8 W, 1.2 W]``."""
_DRAWS = 4000
_SEED = 32
# A pilot with many distinct values (a graded metric over thousands of questions) is binned onto this
# many points of its range for the posterior: a bin is 1/127 of the range wide, which moves a spread by
# far less than the pilot's own uncertainty about it.
_MAX_SUPPORT = 128
_BOUND_PSEUDO = 1.0


@dataclass(frozen=True)
class WidthPrediction:
    """The predicted width, and the posterior probability that the width reached is within 20% of it."""

    width: float
    probability: float


@dataclass(frozen=True, eq=False)
class PilotPosterior:
    """Posterior draws of each stratum's population, from the pilot (see the module doc)."""

    binary: bool
    weight: np.ndarray
    """Each stratum's traffic weight (summing to 1)."""
    pilot_n: np.ndarray
    pilot_sum: np.ndarray
    pilot_squares: np.ndarray
    moments: np.ndarray
    """Raw moments 1 to 4 of each stratum's draws: shape (strata, 4, draws)."""
    z: float

    @property
    def single_binary(self) -> bool:
        return self.binary and self.weight.size == 1


def pilot_posterior(
    values: Sequence[np.ndarray], weight: np.ndarray, *, binary: bool, strength: float, z: float
) -> PilotPosterior:
    """Posterior draws of each stratum's population from its pilot ``values`` (see the module doc);
    ``strength``: how many questions' worth of the pooled population each stratum borrows."""
    rng = np.random.default_rng(_SEED)
    pooled = np.concatenate([np.asarray(v, dtype=np.float64) for v in values])
    low = min(0.0, float(pooled.min())) if pooled.size else 0.0
    high = max(1.0, float(pooled.max())) if pooled.size else 1.0
    support, index = _support(pooled, low, high, binary)
    counts = []
    start = 0
    for v in values:
        counts.append(np.bincount(index[start : start + len(v)], minlength=support.size).astype(np.float64))
        start += len(v)
    prior = np.sum(counts, axis=0)
    prior[0] += _BOUND_PSEUDO
    prior[-1] += _BOUND_PSEUDO
    base = _dirichlet(rng, np.broadcast_to(prior, (_DRAWS, support.size)))
    powers = np.stack([support**r for r in range(1, 5)], axis=1)
    moments = []
    for own in counts:
        draws = base if len(values) == 1 else _dirichlet(rng, own + strength * base, fallback=base)
        moments.append((draws @ powers).T)
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    return PilotPosterior(
        binary=binary,
        weight=np.asarray(weight, dtype=np.float64),
        pilot_n=np.array([v.size for v in arrays], dtype=np.float64),
        pilot_sum=np.array([v.sum() for v in arrays]),
        pilot_squares=np.array([(v**2).sum() for v in arrays]),
        moments=np.stack(moments),
        z=z,
    )


def predict_width(posterior: PilotPosterior, counts: Sequence[float] | np.ndarray) -> WidthPrediction:
    """The width most probably reached with ``counts`` questions per stratum in all (pilot included),
    and that probability; infinite, with probability 0, when a weighted stratum has no question."""
    widths = reached_widths(posterior, counts)
    if not np.all(np.isfinite(widths)):
        return WidthPrediction(math.inf, 0.0)
    return _densest_window(widths)


def probability_within(
    posterior: PilotPosterior, counts: Sequence[float] | np.ndarray, width: float
) -> float:
    """The posterior probability that ``counts`` questions per stratum give a width within 20% of
    ``width``."""
    widths = reached_widths(posterior, counts)
    if not (np.all(np.isfinite(widths)) and math.isfinite(width) and width > 0):
        return 0.0
    return float(np.mean(np.abs(widths / width - 1.0) <= WITHIN + 1e-12))


def reached_widths(posterior: PilotPosterior, counts: Sequence[float] | np.ndarray) -> np.ndarray:
    """One width reached per posterior draw, with ``counts`` questions per stratum in all."""
    total = np.asarray(counts, dtype=np.float64)
    more = np.maximum(total - posterior.pilot_n, 0.0)
    rng = np.random.default_rng(_SEED + 1)  # the same draws for every count: widths compare smoothly
    z = posterior.z
    variance_terms = np.zeros(posterior.moments.shape[2])
    for h in range(total.size):
        first, second, third, fourth = posterior.moments[h]
        m = more[h]
        if posterior.binary:
            hits = rng.binomial(int(m), np.clip(first, 0.0, 1.0)).astype(np.float64)
            added, added_squares = hits, hits
        else:
            normal = rng.standard_normal((2, first.size))
            spread = np.sqrt(np.maximum(second - first**2, 0.0))
            covariance = third - first * second
            lower = np.divide(covariance, spread, out=np.zeros_like(spread), where=spread > 0)
            rest = np.sqrt(np.maximum(fourth - second**2 - lower**2, 0.0))
            added = m * first + math.sqrt(m) * spread * normal[0]
            added_squares = m * second + math.sqrt(m) * (lower * normal[0] + rest * normal[1])
        n = total[h]
        hits_total = posterior.pilot_sum[h] + added
        if posterior.single_binary:
            rate = np.clip(hits_total / n, 0.0, 1.0)
            half = z * np.sqrt(rate * (1.0 - rate) / n + z * z / (4.0 * n * n))
            return np.asarray(2.0 * half / (1.0 + z * z / n), dtype=np.float64)
        if posterior.weight[h] == 0:
            continue
        if n < 2:
            if n < 1:
                return np.full(first.size, math.inf)
            variance = np.maximum(second - first**2, 0.0)  # one question has no spread of its own
        else:
            squares = posterior.pilot_squares[h] + added_squares
            variance = np.maximum((squares - hits_total**2 / n) / (n - 1.0), 0.0)
        variance_terms += posterior.weight[h] ** 2 * variance / n
    return np.asarray(2.0 * z * np.sqrt(variance_terms), dtype=np.float64)


def _densest_window(widths: np.ndarray) -> WidthPrediction:
    """The ``W`` whose ``[0.8 W, 1.2 W]`` holds the most of ``widths``, and the share it holds; among
    equally full windows, the one nearest the median (a tight cluster of draws fits in many windows, and
    the lowest or the middle one would quote a width the draws mostly stay under)."""
    ordered = np.sort(widths)
    ratio = (1.0 + WITHIN) / (1.0 - WITHIN)
    ends = np.searchsorted(ordered, ordered * ratio * (1.0 + 1e-12), side="right")
    held = ends - np.arange(ordered.size)
    median = float(np.median(ordered))
    at_median = int(np.count_nonzero(np.abs(ordered / median - 1.0) <= WITHIN + 1e-12)) if median > 0 else 0
    if at_median >= held.max():
        return WidthPrediction(median, at_median / ordered.size)
    best = np.flatnonzero(held == held.max())
    chosen = best[np.argmin(np.abs(ordered[best] / (1.0 - WITHIN) - median))]
    return WidthPrediction(float(ordered[chosen] / (1.0 - WITHIN)), float(held[chosen] / ordered.size))


def _support(pooled: np.ndarray, low: float, high: float, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """The points the posterior puts mass on (the bounds first and last) and each pilot value's point."""
    if binary:
        return np.array([low, high]), (pooled >= high).astype(np.intp)
    distinct = np.unique(np.concatenate([[low], pooled, [high]]))
    if distinct.size <= _MAX_SUPPORT:
        return distinct, np.searchsorted(distinct, pooled)
    grid = np.linspace(low, high, _MAX_SUPPORT)
    index = np.rint((pooled - low) / (high - low) * (_MAX_SUPPORT - 1)).astype(np.intp)
    return grid, index


def _dirichlet(rng: np.random.Generator, alpha: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """One Dirichlet draw per row of ``alpha`` (gamma draws, normalised); zero entries stay zero."""
    gammas = rng.gamma(np.maximum(alpha, 1e-300)) * (alpha > 0)
    sums = gammas.sum(axis=1, keepdims=True)
    if fallback is not None:
        empty = sums[:, 0] <= 0
        gammas[empty], sums[empty] = fallback[empty], 1.0
    return np.asarray(gammas / sums, dtype=np.float64)

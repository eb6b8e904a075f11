"""Rank agreement: do the synthetic and real sets put several retrievers in the same order?

Kendall's tau-b (``scipy.stats.kendalltau``) between the retrievers' means on the synthetic set and on
the real set. Published studies find synthetic sets order systems much as real ones do (tau about 0.85
on TREC DL 2023, Rahmani et al., SIGIR 2024) while overstating the absolute figures; hence the advice:
use the synthetic set to compare systems, the real set to quote a figure. Three things keep that
advice honest:

- **tau's interval**, from resampling queries: the query ids every system was evaluated on are drawn
  with replacement (the synthetic and the real set apart), every system's mean is recomputed on the same
  draw (paired), and so is tau; the percentile interval of those taus.
- **no advice from fewer than 4 systems**: with 2, tau is +1 or -1 by construction, and a random order
  gives tau = 1 half the time (1 in 6 with 3 systems); with 4 it is 1 in 24, under 5%.
- **ties**: two systems that a paired test on the queries both were evaluated on does not separate (the
  test ``compare`` runs by default, Fisher's randomization test, at ``ALPHA``) are tied on that set,
  whatever tau says. The synthetic set cannot choose between them, so the advice never sends you to it
  for that choice (the case that prompted this: synthetic 0.996 for bm25 and for bm25 without
  stemming, real 0.820 and 0.797). A set on which the test separates no pair, or fewer than half of
  them, orders the systems mostly by chance, and the advice says so. The test is paired because two
  systems whose intervals overlap can still differ on the same queries: the earlier rule (each figure
  within the other's interval) called 45 of 45 pairs of SciFact retrievers tied and the real order
  "mostly chance" while ``compare`` found a pair different at p = 0.03.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.stats import kendalltau

from realrecall.calibrate.comparison import query_key
from realrecall.calibrate.gap import metric_values
from realrecall.calibrate.set_agreement import split_half
from realrecall.calibrate.statistics import (
    Interval,
    bootstrap_mean_matrix,
    estimate_mean,
    kendall_tau_b,
    randomization_test,
)
from realrecall.evaluate.metrics import is_binary
from realrecall.evaluate.results import EvaluationResult, QueryResult, distinct_labels

__all__ = ["ALPHA", "MIN_SYSTEMS_FOR_ADVICE", "RankAgreement", "SystemScore", "rank_agreement"]

ALPHA = 0.05
"""Two systems a paired test separates at this level are not tied (``compare``'s default alpha)."""

# Below this tau the synthetic set is not trusted even for comparing systems.
_GOOD_TAU = 0.7
# Fewer systems: a random order reaches tau = 1 with probability 1/n! >= 1/6, so tau proves nothing.
MIN_SYSTEMS_FOR_ADVICE = 4
_ORIGINS = ("synthetic", "real")
# The advice names this many tied pairs; the report's table lists every system's ties.
_TIES_NAMED = 3
# Random halves of the real set for its split-half floor, from a stream of their own.
_SPLITS, _SPLIT_SEED = 500, 0


@dataclass(frozen=True)
class SystemScore:
    """One retriever's mean on each set, with its interval (Wilson or bootstrap, as for the headline)."""

    name: str
    synthetic: float
    real: float
    n_synthetic: int
    n_real: int
    synthetic_interval: Interval | None = None
    real_interval: Interval | None = None


@dataclass(frozen=True)
class RankAgreement:
    """Kendall's tau between the retrievers' order on the synthetic and the real set, with advice.

    ``tau_interval``: from resampling the queries every system shares (undefined when too few do).
    ``synthetic_ties`` / ``real_ties``: pairs of system names that a paired randomization test on that
    set's shared queries does not separate at ``ALPHA``.
    """

    metric: str
    systems: tuple[SystemScore, ...]
    tau: float
    p_value: float
    advice: str
    tau_interval: Interval | None = None
    synthetic_ties: tuple[tuple[str, str], ...] = ()
    real_ties: tuple[tuple[str, str], ...] = ()
    real_split_half: float | None = None
    """The real set's noise floor: median tau between the systems' means on random halves of the real
    queries every system shares (``set_agreement.split_half``); None below 4 such queries."""


def rank_agreement(
    results: Sequence[EvaluationResult],
    metric: str,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RankAgreement | None:
    """Agreement over the retrievers evaluated on both sets; None when fewer than two are."""
    rng = np.random.default_rng(seed)
    binary = is_binary(metric)
    named: list[tuple[str, np.ndarray, np.ndarray, dict[str, tuple[QueryResult, ...]]]] = []
    both = [item for item in results if item.of_origin("synthetic") and item.of_origin("real")]
    for item, name in zip(both, distinct_labels(both), strict=True):
        s = metric_values(item.of_origin("synthetic"), metric)
        r = metric_values(item.of_origin("real"), metric)
        if s.size and r.size:
            named.append((name, s, r, {origin: item.of_origin(origin) for origin in _ORIGINS}))
    if len(named) < 2:
        return None
    # tau's resamples are drawn first, from the seed, so they can be reproduced alone.
    interval = _tau_interval([records for *_, records in named], metric, confidence, n_resamples, rng)
    systems: list[SystemScore] = []
    for name, s, r, _ in named:
        s_estimate, r_estimate = (
            estimate_mean(v, binary=binary, confidence=confidence, n_resamples=n_resamples, rng=rng)
            for v in (s, r)
        )
        systems.append(
            SystemScore(
                name, float(s.mean()), float(r.mean()), int(s.size), int(r.size),
                s_estimate.interval, r_estimate.interval,
            )
        )  # fmt: skip
    outcome = kendalltau([x.synthetic for x in systems], [x.real for x in systems])
    tau, p_value = float(outcome.statistic), float(outcome.pvalue)
    # Drawn after every other figure above, so adding the tests moved none of them.
    names, records = [name for name, *_ in named], [records for *_, records in named]
    synthetic_ties, real_ties = (
        _ties(names, [system[origin] for system in records], metric, n_resamples, rng) for origin in _ORIGINS
    )
    pairs = len(named) * (len(named) - 1) // 2
    advice = _advice(tau, interval, systems, synthetic_ties) + _chance_note(
        {"synthetic": synthetic_ties, "real": real_ties}, pairs
    )
    floor = _real_split_half(records, metric, confidence)
    return RankAgreement(
        metric, tuple(systems), tau, p_value, advice, interval, synthetic_ties, real_ties, floor
    )


def _real_split_half(
    records: Sequence[dict[str, tuple[QueryResult, ...]]], metric: str, confidence: float
) -> float | None:
    """Median split-half tau of the real queries every system shares, from its own seeded stream (the
    figures drawn before it stay as they were)."""
    values = _shared_values([system["real"] for system in records], metric)
    if values.shape[0] < 4 or values.shape[1] < 3:
        return None
    median, _ = split_half(values.T, _SPLITS, confidence, np.random.default_rng(_SPLIT_SEED))
    return None if math.isnan(median) else median


def _tau_interval(
    records: Sequence[dict[str, tuple[QueryResult, ...]]],
    metric: str,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> Interval:
    """Percentile interval of tau over paired resamples of the queries every system shares."""
    draws = []
    for origin in _ORIGINS:
        values = _shared_values([system[origin] for system in records], metric)
        if values.shape[0] < 2:
            return Interval.undefined(confidence, "paired bootstrap")
        draws.append(bootstrap_mean_matrix(values, n_resamples, rng))
    taus = kendall_tau_b(draws[0], draws[1])
    defined = taus[~np.isnan(taus)]
    # A resample that ties every system on one set has no tau; with most resamples so, no interval.
    if defined.size < n_resamples / 2:
        return Interval.undefined(confidence, "paired bootstrap")
    level = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [level, 1.0 - level])
    return Interval(float(low), float(high), confidence, "paired bootstrap")


def _shared_values(systems: Sequence[tuple[QueryResult, ...]], metric: str) -> np.ndarray:
    """Queries that every system has the metric for, paired as compare pairs them: queries x systems."""
    with_metric = [[q for q in queries if metric in q.metrics] for queries in systems]
    by_gold_set = any(len({query_key(q) for q in queries}) < len(queries) for queries in with_metric)
    indexed = [
        {query_key(q, by_gold_set=by_gold_set): q.metrics[metric] for q in queries} for queries in with_metric
    ]
    shared = [key for key in indexed[0] if all(key in other for other in indexed[1:])]
    return np.array([[values[key] for values in indexed] for key in shared], dtype=np.float64).reshape(
        len(shared), len(systems)
    )


def _ties(
    names: Sequence[str],
    systems: Sequence[tuple[QueryResult, ...]],
    metric: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[tuple[str, str], ...]:
    """Pairs that a paired randomization test on the queries both hold (paired as compare pairs them)
    does not separate at ``ALPHA``; fewer than two shared queries, or none that differs, is a tie."""
    pairs = []
    for (first, a), (second, b) in combinations(zip(names, systems, strict=True), 2):
        values = _shared_values([a, b], metric)
        differs = values.shape[0] >= 2 and bool(np.any(values[:, 0] != values[:, 1]))
        if (
            not differs
            or randomization_test(values[:, 0], values[:, 1], n_resamples=n_resamples, rng=rng) > ALPHA
        ):
            pairs.append((first, second))
    return tuple(pairs)


def _chance_note(ties: dict[str, tuple[tuple[str, str], ...]], pairs: int) -> str:
    """On a set where the paired test separates fewer than half of the pairs, the order is mostly chance."""
    notes = []
    for origin in _ORIGINS:
        separated = pairs - len(ties[origin])
        if not pairs or separated >= pairs / 2:
            continue
        how = "no pair" if separated == 0 else f"{separated} of {pairs} pairs"
        notes.append(
            f" On the {origin} set a paired randomization test (as compare runs it) separates {how} of "
            f"systems at alpha {ALPHA:g}: {'that' if separated == 0 else 'most of that'} order is chance."
        )
    return "".join(notes)


def _advice(
    tau: float, interval: Interval, systems: Sequence[SystemScore], ties: Sequence[tuple[str, str]]
) -> str:
    count = len(systems)
    if count < MIN_SYSTEMS_FOR_ADVICE:
        why = (
            "with 2, tau is +1 or -1 by construction, and a random order gives +1 half the time"
            if count == 2
            else "tau can only be ±1 or ±1/3, and a random order gives tau = 1 one time in 6"
        )
        return (
            f"No advice from {count} systems: {why}. Evaluate at least {MIN_SYSTEMS_FOR_ADVICE} systems "
            "on both sets (then a random order gives tau = 1 one time in 24)."
        )
    if math.isnan(tau):
        return "tau undefined (tied figures on one set): the sets cannot order these systems"
    ci = (
        f" ({interval.confidence * 100:g}% CI {interval.low:.2f} to {interval.high:.2f})"
        if interval.defined
        else ""
    )
    small = (
        f" With only {count} systems tau is coarse; add configurations to firm it up." if count < 5 else ""
    )
    tie_text = _tie_text(systems, ties)
    if tau < _GOOD_TAU:
        return (
            f"tau {tau:.2f}{ci}: the synthetic set orders systems differently from the real set. Do not "
            f"choose between systems on synthetic figures; compare them on real questions.{tie_text}{small}"
        )
    if ties:
        # The order may agree, but the synthetic set cannot choose between tied systems.
        return (
            f"tau {tau:.2f}{ci}, but the synthetic set ties systems it cannot tell apart.{tie_text} "
            f"Choose between tied systems on real questions; quote figures from the real set.{small}"
        )
    if interval.defined and interval.low <= 0.0:
        return (
            f"tau {tau:.2f}{ci}: the interval reaches {interval.low:.2f}, so this agreement may be chance. "
            f"Compare systems on real questions until more queries or systems firm it up.{small}"
        )
    return (
        f"tau {tau:.2f}{ci}: the synthetic set orders systems like the real set. Use the synthetic set to "
        f"compare systems and the real set to quote a figure.{small}"
    )


def _tie_text(systems: Sequence[SystemScore], ties: Sequence[tuple[str, str]]) -> str:
    if not ties:
        return ""
    by_name = {s.name: s for s in systems}
    pairs = "; ".join(
        f"{a} and {b} (synthetic {by_name[a].synthetic:.3f} and {by_name[b].synthetic:.3f}, "
        f"real {by_name[a].real:.3f} and {by_name[b].real:.3f})"
        for a, b in ties[:_TIES_NAMED]
    )
    more = f"; {len(ties) - _TIES_NAMED} more pairs in the table" if len(ties) > _TIES_NAMED else ""
    return f" Tied on the synthetic set (each within the other's interval): {pairs}{more}."

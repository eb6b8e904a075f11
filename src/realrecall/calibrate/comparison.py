"""Two retrievers on the same gold set: is the difference real? A paired test, overall and per slice.

Queries are paired by gold set and query id. Tests, as ranx offers them:

- ``randomization`` (default; ranx ``"fisher"``): Fisher's randomization test. Under the null the two
  systems' scores for a query are exchangeable, so each query's difference keeps or flips its sign at
  random; p is the share of ``n_resamples`` such relabellings whose absolute mean difference reaches the
  observed one (ranx's estimate: no +1 correction).
- ``t`` (ranx ``"student"``): the two-sided paired t-test, ``scipy.stats.ttest_rel``.
- ``bootstrap``: the paired bootstrap test: resample queries, shift the resampled mean differences to
  mean zero, p is the share at least as far from zero as the observed difference.

Every row also carries a paired percentile-bootstrap interval of the difference ``b - a``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import ttest_rel

from realrecall.calibrate.gap import slice_values
from realrecall.calibrate.intervals import Interval, bootstrap_means, check_settings
from realrecall.errors import InputError
from realrecall.evaluate.results import (
    EvaluationResult,
    QueryResult,
    ResultsSource,
    default_slice_fields,
    distinct_labels,
    load_results,
)

__all__ = [
    "TESTS",
    "ComparisonReport",
    "PairedComparison",
    "compare",
    "paired_bootstrap_test",
    "paired_t_test",
    "randomization_test",
]

# Identical systems give exactly equal means; float sums can still differ in the last bit.
_TIE = 1e-12


@dataclass(frozen=True)
class PairedComparison:
    """System b against system a on one slice (``field`` None = all paired queries)."""

    metric: str
    field: str | None
    value: Any
    n: int
    mean_a: float
    mean_b: float
    difference: float
    interval: Interval
    p_value: float
    significant: bool
    note: str = ""

    @property
    def label(self) -> str:
        return (
            "all queries"
            if self.field is None
            else f"{self.field}={'(missing)' if self.value is None else self.value}"
        )


@dataclass(frozen=True)
class ComparisonReport:
    """The comparison of two retrievers, with a one-line headline first."""

    name_a: str
    name_b: str
    metric: str
    test: str
    alpha: float
    rows: tuple[PairedComparison, ...]
    unpaired: int
    headline: str
    warnings: tuple[str, ...] = ()


def randomization_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> float:
    """Two-sided Fisher randomization (sign-flip) test of the mean paired difference (ranx ``fisher``)."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size == 0:
        return math.nan
    observed = abs(difference.mean())
    exceed = 0
    size = max(1, min(n_resamples, 4_000_000 // difference.size))
    for start in range(0, n_resamples, size):
        count = min(size, n_resamples - start)
        signs = rng.integers(0, 2, (count, difference.size)) * 2 - 1
        exceed += int(np.count_nonzero(np.abs((signs * difference).mean(axis=1)) >= observed - _TIE))
    return exceed / n_resamples


def paired_t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value (ranx ``student``); 1.0 when every difference is zero."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size < 2:
        return math.nan
    if np.all(np.abs(difference) <= _TIE):
        return 1.0
    return float(ttest_rel(b, a).pvalue)


def paired_bootstrap_test(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> float:
    """Two-sided paired bootstrap test: resampled mean differences, shifted to the null of zero."""
    difference = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if difference.size == 0:
        return math.nan
    observed = difference.mean()
    means = bootstrap_means(difference, n_resamples, rng)
    return float(np.mean(np.abs(means - observed) >= abs(observed) - _TIE))


TESTS: Mapping[str, Callable[..., float]] = {
    "randomization": lambda a, b, n, rng: randomization_test(a, b, n_resamples=n, rng=rng),
    "t": lambda a, b, n, rng: paired_t_test(a, b),
    "bootstrap": lambda a, b, n, rng: paired_bootstrap_test(a, b, n_resamples=n, rng=rng),
}


def compare(
    a: ResultsSource,
    b: ResultsSource,
    *,
    metric: str | None = None,
    by: Sequence[str] | None = None,
    test: str = "randomization",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> ComparisonReport:
    """Compare retriever b against retriever a on the queries both were evaluated on.

    ``a``, ``b``: what ``evaluate`` returned, or its results.json (a path or the parsed mapping).
    ``by``: slice fields, any field of the gold sets (None: every field present, origin aside).
    Significance: ``p_value <= alpha``.
    """
    check_settings(confidence=confidence, n_resamples=n_resamples, alpha=alpha, seed=seed)
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}", hint=f"choose from {', '.join(TESTS)}")
    first, second = load_results(a), load_results(b)
    chosen = metric or _default_metric(first, second)
    pairs = _pairs(first, second, chosen)
    if not pairs:
        raise InputError(
            f"no query has {chosen} in both results",
            path=second.source,
            hint="compare two evaluations of the same gold set",
        )
    if isinstance(by, str):
        by = [by]  # one field named as a string, not its letters
    fields, unsliced = (tuple(by), ()) if by is not None else default_slice_fields(first)
    unsliced += _absent_fields(fields if by is not None else (), first)
    rng = np.random.default_rng(seed)
    rows = [_row(chosen, None, None, pairs, test, alpha, confidence, n_resamples, rng)]
    records = [qa for qa, _ in pairs]
    for name in fields:
        for value in slice_values(records, name):
            subset = [(qa, qb) for qa, qb in pairs if qa.field(name) == value]
            rows.append(_row(chosen, name, value, subset, test, alpha, confidence, n_resamples, rng))
    unpaired = len(first.queries) + len(second.queries) - 2 * len(pairs)
    name_a, name_b = distinct_labels([first, second])
    return ComparisonReport(
        name_a,
        name_b,
        chosen,
        test,
        alpha,
        tuple(rows),
        unpaired,
        _headline(rows[0], name_a, name_b, test, alpha),
        unsliced,
    )


def _row(
    metric: str,
    field: str | None,
    value: Any,
    pairs: Sequence[tuple[QueryResult, QueryResult]],
    test: str,
    alpha: float,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> PairedComparison:
    a = np.array([qa.metrics[metric] for qa, _ in pairs], dtype=np.float64)
    b = np.array([qb.metrics[metric] for _, qb in pairs], dtype=np.float64)
    if a.size < 2:
        mean_a = float(a.mean()) if a.size else math.nan
        mean_b = float(b.mean()) if b.size else math.nan
        note = "one paired query: no test" if a.size == 1 else "no paired query"
        return PairedComparison(
            metric, field, value, int(a.size), mean_a, mean_b, mean_b - mean_a,
            Interval.undefined(confidence), math.nan, False, note,
        )  # fmt: skip
    p_value = TESTS[test](a, b, n_resamples, rng)
    differences = bootstrap_means(b - a, n_resamples, rng)
    level = (1.0 - confidence) / 2.0
    low, high = np.quantile(differences, [level, 1.0 - level])
    return PairedComparison(
        metric, field, value, int(a.size), float(a.mean()), float(b.mean()), float(b.mean() - a.mean()),
        Interval(float(low), float(high), confidence, "paired bootstrap"), p_value, bool(p_value <= alpha),
    )  # fmt: skip


def _absent_fields(by: Sequence[str], result: EvaluationResult) -> tuple[str, ...]:
    """A ``--by`` field no query has (a typo, or one the gold sets lack) gives one ``(missing)`` row."""
    present = result.present_fields()
    return tuple(
        f"--by {name!r}: no query in the results has this field, so its only slice is (missing) "
        f"(fields: {', '.join(present) or 'none'})"
        for name in dict.fromkeys(by)
        if name not in present
    )


def _pairs(
    first: EvaluationResult, second: EvaluationResult, metric: str
) -> list[tuple[QueryResult, QueryResult]]:
    index = {(q.gold_set, q.query_id): q for q in second.queries if metric in q.metrics}
    return [
        (q, index[(q.gold_set, q.query_id)])
        for q in first.queries
        if metric in q.metrics and (q.gold_set, q.query_id) in index
    ]


def _default_metric(first: EvaluationResult, second: EvaluationResult) -> str:
    shared = [m for m in first.metrics if m in second.metrics]
    if not shared:
        raise InputError("the two results share no metric", path=second.source, hint="evaluate both alike")
    return "recall@10" if "recall@10" in shared else shared[0]


def _headline(row: PairedComparison, name_a: str, name_b: str, test: str, alpha: float) -> str:
    if math.isnan(row.p_value):
        return f"{name_b} vs {name_a} on {row.metric}: too few paired queries ({row.n}) to test."
    verdict = "significant" if row.significant else "not significant"
    return (
        f"{name_b} vs {name_a}: {row.metric} {row.mean_b:.3f} vs {row.mean_a:.3f} "
        f"(difference {row.difference:+.3f}, {row.interval.confidence * 100:g}% CI "
        f"{row.interval.low:+.3f} to {row.interval.high:+.3f}, n={row.n}); {test} test p={row.p_value:.4f}, "
        f"{verdict} at alpha {alpha:g}."
    )

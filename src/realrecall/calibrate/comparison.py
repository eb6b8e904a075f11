"""Two retrievers on the same gold set: is the difference real? A paired test, overall and per slice.

Queries are paired by gold set and query id. Tests (defined in ``statistics``): ``randomization``
(default; ranx ``"fisher"``), ``t`` (ranx ``"student"``) and ``bootstrap`` (the paired bootstrap test).
Every row also carries a paired percentile-bootstrap interval of the difference ``b - a``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from realrecall.calibrate.gap import slice_values
from realrecall.calibrate.statistics import (
    Interval,
    check_settings,
    paired_bootstrap_test,
    paired_difference_interval,
    paired_t_test,
    randomization_test,
)
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
]


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
    interval = paired_difference_interval(a, b, confidence=confidence, n_resamples=n_resamples, rng=rng)
    return PairedComparison(
        metric, field, value, int(a.size), float(a.mean()), float(b.mean()), float(b.mean() - a.mean()),
        interval, p_value, bool(p_value <= alpha),
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

"""Two retrievers on the same queries: is the difference real? A paired test per origin and slice.

Real and synthetic queries are never pooled: each origin gets its own rows and its own verdict (a
difference measured on 300 real and 500 synthetic questions at once is neither figure). Queries are
paired by origin and query id, so two evaluations of one gold set over two chunkings of the corpus
(other passage ids, the same questions) pair; a query id whose question text differs between the two
results is not the same query and is left out, counted. Queries found in one result only are counted
per origin and reported. Query ids that repeat across gold sets of one origin are told apart by the gold
set's name.

Tests (defined in ``statistics``): ``randomization`` (default; ranx ``"fisher"``), ``t`` (ranx
``"student"``) and ``bootstrap`` (the paired bootstrap test). Every row also carries a paired
percentile-bootstrap interval of the difference ``b - a``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.calibrate.gap import slice_values
from realrecall.calibrate.judge_labels import JudgeLabelNote, judge_label_note
from realrecall.calibrate.settings import CompareSettings
from realrecall.calibrate.statistics import (
    Interval,
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
from realrecall.files import refuse_same_file
from realrecall.settings import settings_with

__all__ = [
    "TESTS",
    "ComparisonReport",
    "PairedComparison",
    "Unpaired",
    "compare",
    "query_key",
]

NO_QUERY_DIFFERS = "no paired query differs"
# Identical scores give exactly equal values; float sums can still differ in the last bit.
_TIE = 1e-12
# Real first: it is the figure to quote; queries without an origin last.
_ORIGIN_ORDER = {"real": 0, "synthetic": 1}


@dataclass(frozen=True)
class PairedComparison:
    """System b against system a on one slice of one origin (``field`` None = all its paired queries)."""

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
    origin: str | None = None

    @property
    def label(self) -> str:
        where = (
            "all queries"
            if self.field is None
            else f"{self.field}={'(missing)' if self.value is None else self.value}"
        )
        return f"{_origin_text(self.origin)}: {where}"


@dataclass(frozen=True)
class Unpaired:
    """Queries of one origin that could not be paired: in a's results only, in b's only, or under one
    query id with a different question text in each."""

    origin: str | None
    only_a: int
    only_b: int
    text_differs: int = 0

    @property
    def total(self) -> int:
        return self.only_a + self.only_b + 2 * self.text_differs

    def text(self, name_a: str, name_b: str) -> str:
        parts = [f"{self.only_a} only in {name_a}'s results"] if self.only_a else []
        parts += [f"{self.only_b} only in {name_b}'s"] if self.only_b else []
        if self.text_differs:
            parts.append(f"{self.text_differs} with the same id but another question text")
        return f"{_origin_text(self.origin)} queries left out: {', '.join(parts)}"


@dataclass(frozen=True)
class ComparisonReport:
    """The comparison of two retrievers, with a one-line headline first (one verdict per origin).

    ``rows``: per origin, its all-queries row first, then its slices. ``unpaired``: how many queries
    were left out in all; ``unpaired_by_origin``: where and why.
    """

    name_a: str
    name_b: str
    metric: str
    test: str
    alpha: float
    rows: tuple[PairedComparison, ...]
    unpaired: int
    headline: str
    warnings: tuple[str, ...] = ()
    unpaired_by_origin: tuple[Unpaired, ...] = ()
    judge_labels: JudgeLabelNote | None = None
    """How far the compared figures rest on a judge's labels (``judge_labels``' rules); its sentence
    ends the headline."""

    @property
    def verdicts(self) -> tuple[PairedComparison, ...]:
        """The all-queries row of each origin."""
        return tuple(row for row in self.rows if row.field is None)

    @property
    def unpaired_text(self) -> str:
        """One line on the queries left out, or that none were."""
        if not self.unpaired_by_origin:
            return "every query paired"
        return "; ".join(u.text(self.name_a, self.name_b) for u in self.unpaired_by_origin)


TESTS: Mapping[str, Callable[..., float]] = {
    "randomization": lambda a, b, n, rng: randomization_test(a, b, n_resamples=n, rng=rng),
    "t": lambda a, b, n, rng: paired_t_test(a, b),
    "bootstrap": lambda a, b, n, rng: paired_bootstrap_test(a, b, n_resamples=n, rng=rng),
}


def compare(
    a: ResultsSource, b: ResultsSource, *, settings: CompareSettings | None = None, **options: Any
) -> ComparisonReport:
    """Compare retriever b against retriever a on the queries both were evaluated on, origin by origin.

    ``a``, ``b``: what ``evaluate`` returned, or its results.json (a path or the parsed mapping).
    ``settings`` (``CompareSettings``, or its fields as keywords over it): the metric, the slice fields
    (``by``: any field of the gold sets; None: every field present, origin aside, the rows being per
    origin already), the test, and significance: ``p_value <= alpha``.
    """
    settings = settings_with(CompareSettings, settings, options, what="compare")
    if isinstance(a, str | Path) and isinstance(b, str | Path):
        refuse_same_file(("results a", a), ("results b", b), hint="give b the results of the other retriever")
    metric, by, test, alpha = settings.metric, settings.by, settings.test, settings.alpha
    confidence, n_resamples, seed = settings.confidence, settings.n_resamples, settings.seed
    first, second = load_results(a), load_results(b)
    chosen = metric or _default_metric(first, second)
    name_a, name_b = distinct_labels([first, second])
    pairing = _Pairing.of(first, second, chosen)
    if not pairing.pairs:
        raise InputError(
            f"no query has {chosen} in both results",
            path=second.source,
            hint="compare two evaluations of the same queries (paired by query id)",
        )
    fields, unsliced = (tuple(by), ()) if by is not None else default_slice_fields(first)
    unsliced += _absent_fields(fields if by is not None else (), first)
    fields = tuple(name for name in fields if name != "origin")  # every row is of one origin already
    rng = np.random.default_rng(seed)
    testing = _Settings(chosen, test, alpha, confidence, n_resamples, rng)
    rows: list[PairedComparison] = []
    for origin in pairing.origins():
        pairs = [(qa, qb) for qa, qb in pairing.pairs if qa.origin == origin]
        rows.append(_row(testing, origin, None, None, pairs))
        for name in fields:
            for value in slice_values([qa for qa, _ in pairs], name):
                subset = [(qa, qb) for qa, qb in pairs if qa.field(name) == value]
                rows.append(_row(testing, origin, name, value, subset))
    unpaired = pairing.unpaired()
    warnings = unsliced + pairing.notes + tuple(u.text(name_a, name_b) for u in unpaired)
    headline = _headline(rows, name_a, name_b, test, alpha)
    # Either side scored with a judge's labels: its paired queries are behind every verdict.
    note = judge_label_note([first], [qa for qa, _ in pairing.pairs], chosen) or judge_label_note(
        [second], [qb for _, qb in pairing.pairs], chosen
    )
    if note is not None:
        headline = f"{headline} {note.text}"
    return ComparisonReport(
        name_a, name_b, chosen, test, alpha, tuple(rows), sum(u.total for u in unpaired),
        headline, warnings, unpaired, note,
    )  # fmt: skip


def query_key(query: QueryResult, *, by_gold_set: bool = False) -> tuple[str | None, ...]:
    """What pairs a query across two results: its origin and id (and gold set, when ids repeat)."""
    return (query.origin, query.gold_set if by_gold_set else None, query.query_id)


@dataclass(frozen=True)
class _Settings:
    metric: str
    test: str
    alpha: float
    confidence: float
    n_resamples: int
    rng: np.random.Generator


@dataclass(frozen=True)
class _Pairing:
    """The queries of two results paired by :func:`query_key`, and those left out."""

    pairs: tuple[tuple[QueryResult, QueryResult], ...]
    only_a: tuple[QueryResult, ...]
    only_b: tuple[QueryResult, ...]
    text_differs: tuple[tuple[QueryResult, QueryResult], ...]
    notes: tuple[str, ...]

    @classmethod
    def of(cls, first: EvaluationResult, second: EvaluationResult, metric: str) -> _Pairing:
        mine = [q for q in first.queries if metric in q.metrics]
        theirs = [q for q in second.queries if metric in q.metrics]
        by_gold_set = _ids_repeat(mine) or _ids_repeat(theirs)
        notes = (
            ("query ids repeat across gold sets of one origin: queries are paired by gold set name and "
             "query id, so the gold sets of both results must have the same names",)
            if by_gold_set else ()
        )  # fmt: skip
        index = {query_key(q, by_gold_set=by_gold_set): q for q in theirs}
        pairs, differs, only_a = [], [], []
        for q in mine:
            other = index.pop(query_key(q, by_gold_set=by_gold_set), None)
            if other is None:
                only_a.append(q)
            elif q.query and other.query and q.query.strip() != other.query.strip():
                differs.append((q, other))
            else:
                pairs.append((q, other))
        return cls(tuple(pairs), tuple(only_a), tuple(index.values()), tuple(differs), notes)

    def origins(self) -> list[str | None]:
        present = {qa.origin for qa, _ in self.pairs}
        return sorted(present, key=_origin_rank)

    def unpaired(self) -> tuple[Unpaired, ...]:
        origins = {q.origin for q in (*self.only_a, *self.only_b)} | {
            qa.origin for qa, _ in self.text_differs
        }
        return tuple(
            Unpaired(
                origin,
                sum(q.origin == origin for q in self.only_a),
                sum(q.origin == origin for q in self.only_b),
                sum(qa.origin == origin for qa, _ in self.text_differs),
            )
            for origin in sorted(origins, key=_origin_rank)
        )


def _ids_repeat(queries: Sequence[QueryResult]) -> bool:
    keys = [query_key(q) for q in queries]
    return len(set(keys)) < len(keys)


def _origin_rank(origin: str | None) -> tuple[int, str]:
    return (_ORIGIN_ORDER.get(origin or "", 2 if origin is not None else 3), origin or "")


def _origin_text(origin: str | None) -> str:
    return "(no origin)" if origin is None else origin


def _row(
    settings: _Settings,
    origin: str | None,
    field: str | None,
    value: Any,
    pairs: Sequence[tuple[QueryResult, QueryResult]],
) -> PairedComparison:
    metric, confidence = settings.metric, settings.confidence
    a = np.array([qa.metrics[metric] for qa, _ in pairs], dtype=np.float64)
    b = np.array([qb.metrics[metric] for _, qb in pairs], dtype=np.float64)
    if a.size < 2:
        mean_a = float(a.mean()) if a.size else math.nan
        mean_b = float(b.mean()) if b.size else math.nan
        note = "one paired query: no test" if a.size == 1 else "no paired query"
        return PairedComparison(
            metric, field, value, int(a.size), mean_a, mean_b, mean_b - mean_a,
            Interval.undefined(confidence), math.nan, False, note, origin,
        )  # fmt: skip
    if np.all(np.abs(b - a) <= _TIE):
        # Every query scores the same under both: no test or interval can tell them apart (a paired
        # bootstrap gives "+0.000 to +0.000" and a randomization test p = 1, read as certainty).
        return PairedComparison(
            metric, field, value, int(a.size), float(a.mean()), float(b.mean()), 0.0,
            Interval.undefined(confidence), math.nan, False, f"{NO_QUERY_DIFFERS}: these {a.size} paired "
            "queries cannot tell them apart", origin,
        )  # fmt: skip
    p_value = TESTS[settings.test](a, b, settings.n_resamples, settings.rng)
    interval = paired_difference_interval(
        a, b, confidence=confidence, n_resamples=settings.n_resamples, rng=settings.rng
    )
    return PairedComparison(
        metric, field, value, int(a.size), float(a.mean()), float(b.mean()), float(b.mean() - a.mean()),
        interval, p_value, bool(p_value <= settings.alpha), "", origin,
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


def _default_metric(first: EvaluationResult, second: EvaluationResult) -> str:
    shared = [m for m in first.metrics if m in second.metrics]
    if not shared:
        raise InputError("the two results share no metric", path=second.source, hint="evaluate both alike")
    return "recall@10" if "recall@10" in shared else shared[0]


def _headline(rows: Sequence[PairedComparison], name_a: str, name_b: str, test: str, alpha: float) -> str:
    """One line, one verdict per origin: real and synthetic queries are never pooled into one."""
    first, *others = [_verdict(row, test, alpha) for row in rows if row.field is None]
    return f"{name_b} vs {name_a} on {first}" + "".join(f" On {sentence}" for sentence in others)


def _verdict(row: PairedComparison, test: str, alpha: float) -> str:
    where = f"{_origin_text(row.origin)} queries"
    if row.note.startswith(NO_QUERY_DIFFERS):
        return (
            f"{where}: {row.metric} {row.mean_b:.3f} for both, and no one of the {row.n} paired queries "
            f"scores differently: these queries cannot tell them apart (no test can); compare on more "
            "queries, or harder ones."
        )
    if math.isnan(row.p_value):
        return f"{where}: too few paired queries ({row.n}) to test {row.metric}."
    verdict = "significant" if row.significant else "not significant"
    return (
        f"{where}: {row.metric} {row.mean_b:.3f} vs {row.mean_a:.3f} "
        f"(difference {row.difference:+.3f}, {row.interval.confidence * 100:g}% CI "
        f"{row.interval.low:+.3f} to {row.interval.high:+.3f}, n={row.n}); {test} test p={row.p_value:.4f}, "
        f"{verdict} at alpha {alpha:g}."
    )

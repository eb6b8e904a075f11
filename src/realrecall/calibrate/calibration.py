"""``calibrate()``: from results.json to the report that says which figure to quote, and its gates."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.calibrate.agreement import RankAgreement, rank_agreement
from realrecall.calibrate.answers import AnswerGrid, answer_grid, load_answers
from realrecall.calibrate.calibrated_estimate import CalibratedEstimate, calibrated_estimate
from realrecall.calibrate.diagnostics import Diagnostics, diagnose
from realrecall.calibrate.gap import Headline, SliceGap, headline, measure_gaps
from realrecall.calibrate.statistics import BOOTSTRAP_METHODS, check_settings
from realrecall.corpus import Corpus, load_corpus
from realrecall.errors import GateFailed, InputError
from realrecall.evaluate.results import (
    EvaluationResult,
    ResultsSource,
    default_slice_fields,
    load_results,
    merge_by_retriever,
)

__all__ = ["CalibrationReport", "GateResult", "calibrate", "parse_gate"]

_SOURCE_TYPES = (EvaluationResult, Mapping, str, Path)


@dataclass(frozen=True)
class GateResult:
    """One quality gate and whether it held."""

    gate: str
    passed: bool
    message: str


@dataclass(frozen=True)
class CalibrationReport:
    """Everything ``realrecall calibrate`` reports; every output format renders this."""

    headline: Headline
    retriever: str
    metric: str
    metrics: tuple[str, ...]
    confidence: float
    slice_fields: tuple[str, ...]
    gaps: tuple[SliceGap, ...]
    calibrated: CalibratedEstimate | None
    diagnostics: Diagnostics
    rank_agreement: RankAgreement | None
    answers: AnswerGrid | None
    gates: tuple[GateResult, ...]
    warnings: tuple[str, ...]
    sources: tuple[str, ...]
    seed: int
    n_resamples: int

    def overall(self, metric: str | None = None) -> SliceGap:
        """The all-queries row of ``metric`` (default: the headline metric)."""
        chosen = metric or self.metric
        return next(g for g in self.gaps if g.metric == chosen and g.field is None)

    def slices(self, metric: str | None = None) -> tuple[SliceGap, ...]:
        """The per-slice rows of ``metric`` (default: the headline metric)."""
        chosen = metric or self.metric
        return tuple(g for g in self.gaps if g.metric == chosen and g.field is not None)

    @property
    def failed_gates(self) -> tuple[GateResult, ...]:
        return tuple(g for g in self.gates if not g.passed)

    def check_gates(self) -> None:
        """Raise :class:`GateFailed` naming every gate that did not hold."""
        failed = self.failed_gates
        if failed:
            raise GateFailed("gate failed: " + "; ".join(g.message for g in failed))


def calibrate(
    results: Sequence[ResultsSource] | ResultsSource,
    *,
    metric: str | None = None,
    confidence: float = 0.95,
    by: Sequence[str] | None = None,
    calibrate_by: str | None = "type",
    calibrate_on: ResultsSource | None = None,
    real_date: str | None = None,
    max_age_days: float | None = 90,
    corpus: Corpus | str | Path | None = None,
    answers: Mapping[str, bool] | str | Path | None = None,
    answer_k: int | None = None,
    fail_under: Mapping[str, float] | None = None,
    max_gap: float | None = None,
    origins: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    bootstrap: str = "percentile",
    min_queries: int = 30,
    max_width: float = 0.2,
    now: datetime | None = None,
) -> CalibrationReport:
    """Report the real figure, the synthetic figure and their gap, overall and per slice.

    ``results``: what ``evaluate`` returned, or its results.json (paths or parsed mappings). Results of
    the same retriever merge;
    the first retriever is the one reported, and all retrievers evaluated on both sets feed the rank
    agreement. ``bootstrap``: ``percentile`` or ``bca`` intervals for non-proportions and gaps.
    ``calibrate_on``: earlier results holding the real set, whose per-slice gaps correct
    these synthetic figures (default: these results). ``origins``: gold set name -> ``real`` or
    ``synthetic``, for sets evaluated without an origin. Gates are evaluated, not raised: call
    :meth:`CalibrationReport.check_gates`.
    """
    check_settings(confidence=confidence, n_resamples=n_resamples, seed=seed)
    _check_bounds(max_age_days=max_age_days, max_gap=max_gap, fail_under=fail_under, answer_k=answer_k)
    if bootstrap not in BOOTSTRAP_METHODS:
        raise InputError(
            f"unknown bootstrap {bootstrap!r}", hint=f"choose from {', '.join(BOOTSTRAP_METHODS)}"
        )
    sources = [results] if isinstance(results, _SOURCE_TYPES) else _sources(results)
    if not sources:
        raise InputError("no results given", hint="pass at least one results.json")
    if isinstance(by, str):
        by = [by]  # one field named as a string, not its letters
    for name, origin in (origins or {}).items():
        if origin not in ("real", "synthetic"):
            raise InputError(f"origin of {name!r} must be real or synthetic, got {origin!r}")
    retrievers = merge_by_retriever(_with_origins(load_results(s, origins=origins)) for s in sources)
    primary = retrievers[0]
    if not primary.metrics:
        raise InputError("the results hold no metric", path=primary.source, hint="rerun evaluate")
    chosen = _choose_metric(metric, primary)
    for name in fail_under or {}:
        _choose_metric(name, primary)
    fields, unsliced = (tuple(by), ()) if by is not None else default_slice_fields(primary)
    rng = np.random.default_rng(seed)
    real, synthetic = primary.of_origin("real"), primary.of_origin("synthetic")
    gaps = measure_gaps(
        real, synthetic, primary.metrics, fields,
        confidence=confidence, n_resamples=n_resamples, rng=rng, min_queries=min_queries, max_width=max_width,
        method=bootstrap,
    )  # fmt: skip
    overall = next(g for g in gaps if g.metric == chosen and g.field is None)

    calibration = primary if calibrate_on is None else _as_results(calibrate_on, origins)
    by_field = calibrate_by if calibrate_by in calibration.slice_fields() else None
    field_warnings = _unknown_fields(
        fields if by is not None else (), primary, calibrate_by, by_field, calibration
    )
    dates = calibration.real_set_dates()
    # The oldest real set dates the calibration: staleness errs on the side of a warning.
    real_set_date = real_date or (min(dates) if dates else None)
    calibrated = calibrated_estimate(
        chosen, synthetic, calibration.of_origin("real"), calibration.of_origin("synthetic"),
        by=by_field, same_synthetic=calibration is primary, calibrated_on=real_set_date,
        max_age_days=max_age_days, now=now or datetime.now(UTC),
        confidence=confidence, n_resamples=n_resamples, rng=rng,
    )  # fmt: skip
    head = headline(overall)
    if overall.n_real == 0 and calibrated is not None:
        head = _calibrated_headline(head, calibrated)

    text_of, skipped = _passage_text(corpus, primary)
    grid = None
    if answers is not None:
        labels = answers if isinstance(answers, Mapping) else load_answers(answers)
        wrong = [qid for qid, label in labels.items() if not isinstance(label, bool)]
        if wrong:
            raise InputError(
                f"the answer label of query {wrong[0]!r} is {labels[wrong[0]]!r}, not true or false",
                hint="label each query's answer True (right) or False (wrong)",
            )
        grid = answer_grid(primary.queries, labels, k=answer_k or _metric_k(chosen) or 10)
    report_gates = _gates(fail_under or {}, max_gap, gaps, chosen, calibrated)
    return CalibrationReport(
        headline=head,
        retriever=primary.description or primary.name,
        metric=chosen,
        metrics=primary.metrics,
        confidence=confidence,
        slice_fields=fields,
        gaps=gaps,
        calibrated=calibrated,
        diagnostics=diagnose(real, synthetic, text_of, skipped_reason=skipped),
        rank_agreement=rank_agreement(retrievers, chosen),
        answers=grid,
        gates=report_gates,
        warnings=primary.warnings + field_warnings + unsliced + _warnings(gaps, chosen, calibrated, skipped),
        sources=tuple(str(s) for s in sources if isinstance(s, str | Path)),
        seed=seed,
        n_resamples=n_resamples,
    )


def _check_bounds(
    *,
    max_age_days: float | None,
    max_gap: float | None,
    fail_under: Mapping[str, float] | None,
    answer_k: int | None,
) -> None:
    """Settings a gate or a staleness check compares against: a NaN or a negative would pass or fail
    every run whatever the figures, so each is refused up front."""
    for name, value in (("--max-age", max_age_days), ("--max-gap", max_gap)):
        if value is not None and not (_is_number(value) and math.isfinite(value) and value >= 0):
            raise InputError(f"{name} must be a number of 0 or more, got {value!r}")
    for metric, bound in (fail_under or {}).items():
        if not (_is_number(bound) and math.isfinite(bound)):
            raise InputError(f"--fail-under {metric}={bound!r} is not a finite number", hint="e.g. 0.7")
    if answer_k is not None and (isinstance(answer_k, bool) or not isinstance(answer_k, int) or answer_k < 1):
        raise InputError(f"--answer-k must be a positive whole number, got {answer_k!r}", hint="e.g. 10")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_gate(text: str) -> tuple[str, float]:
    """Parse ``recall@10=0.7`` (a ``--fail-under`` value) into ``("recall@10", 0.7)``."""
    name, sep, bound = text.partition("=")
    try:
        value = float(bound)
    except ValueError:
        value = math.nan
    if not sep or not name.strip() or not math.isfinite(value):
        raise InputError(f"--fail-under {text!r} is not METRIC=VALUE", hint="write e.g. recall@10=0.7")
    return name.strip(), value


def _sources(results: Any) -> list[ResultsSource]:
    """A sequence of results sources; anything else (a number, a list of numbers) is an InputError."""
    what = "results must be results.json paths, parsed results.json mappings or EvaluationResult"
    if isinstance(results, bytes) or not isinstance(results, Iterable):
        raise InputError(f"{what}, got {type(results).__name__}")
    sources = list(results)
    for source in sources:
        if not isinstance(source, _SOURCE_TYPES):
            raise InputError(f"{what}, got {type(source).__name__}")
    return sources


def _as_results(source: ResultsSource, origins: Mapping[str, str] | None) -> EvaluationResult:
    return merge_by_retriever([_with_origins(load_results(source, origins=origins))])[0]


def _with_origins(result: EvaluationResult) -> EvaluationResult:
    """``result``, once every query is real or synthetic: calibrate splits on nothing else."""
    for gold_set in result.gold_sets:
        if not gold_set.queries and gold_set.n_queries:
            # A results.json read for its settings alone may omit them; calibrate cannot.
            raise InputError(
                f'gold set {gold_set.name!r} has no "per_query" records',
                path=result.source,
                hint="rerun evaluate; calibrate needs per-query values for its intervals",
            )
        for query in gold_set.queries:
            if query.origin is None:
                raise InputError(
                    f"query {query.query_id!r} of gold set {gold_set.name!r} has no origin",
                    path=result.source,
                    hint=f"name it: --origin {gold_set.name}=real (or synthetic), or evaluate with --origin",
                )
    return result


def _choose_metric(metric: str | None, results: EvaluationResult) -> str:
    if metric is None:
        return "recall@10" if "recall@10" in results.metrics else results.metrics[0]
    if metric not in results.metrics:
        raise InputError(
            f"metric {metric!r} is not in the results",
            path=results.source,
            hint=f"choose from {', '.join(results.metrics)}",
        )
    return metric


def _metric_k(metric: str) -> int | None:
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else None


def _calibrated_headline(head: Headline, calibrated: CalibratedEstimate) -> Headline:
    level = f"{calibrated.interval.confidence * 100:g}% CI"
    when = calibrated.calibrated_on[:10] if calibrated.calibrated_on else "an undated real set"
    text = (
        f"Quote calibrated {head.metric} = {calibrated.value:.2f} ({level} {calibrated.interval.low:.2f}-"
        f"{calibrated.interval.high:.2f}, calibrated on the real set of {when})."
    )
    if head.synthetic.n:
        gap = head.synthetic.value - calibrated.value
        verb = "overstates" if gap > 0 else "understates"
        text += f" Synthetic {head.synthetic.value:.2f} {verb} it by {abs(gap):.2f}."
    if calibrated.stale:
        text += f" Calibration is stale (real set from {calibrated.age_text})."
    return Headline(head.metric, head.real, head.synthetic, head.gap, head.gap_interval, text)


def _passage_text(
    corpus: Corpus | str | Path | None, results: EvaluationResult
) -> tuple[Callable[[str], str | None] | None, str | None]:
    if isinstance(corpus, Corpus):
        loaded = corpus
    elif corpus is not None:
        loaded = load_corpus(corpus)  # named by the user: a missing file is an error, not a skip
    else:
        path = _corpus_path(results)
        if path is None:
            return None, "the results name no corpus file"
        if not path.exists():
            return None, f"corpus {path} (named in the results) not found"
        loaded = load_corpus(path)

    def text_of(passage_id: str) -> str | None:
        chunk = loaded.get(passage_id)
        return None if chunk is None else chunk.searchable_text()

    return text_of, None


def _corpus_path(results: EvaluationResult) -> Path | None:
    if not results.corpus_path:
        return None
    path = Path(results.corpus_path)
    if not path.is_absolute() and not path.exists() and results.source:
        beside = Path(results.source).parent / path
        if beside.exists():
            return beside
    return path


def _gates(
    fail_under: Mapping[str, float],
    max_gap: float | None,
    gaps: Sequence[SliceGap],
    metric: str,
    calibrated: CalibratedEstimate | None,
) -> tuple[GateResult, ...]:
    results: list[GateResult] = []
    for name, bound in fail_under.items():
        overall = next(g for g in gaps if g.metric == name and g.field is None)
        figure, what = overall.real.value, "real"
        if overall.n_real == 0 and calibrated is not None and calibrated.metric == name:
            figure, what = calibrated.value, "calibrated"
        if math.isnan(figure):
            message = f"--fail-under {name}={bound:g}: there is no real {name} to check"
            results.append(GateResult(f"fail-under {name}", False, message))
        elif figure < bound:
            message = f"{what} {name} = {figure:.3f} is under --fail-under {bound:g}"
            results.append(GateResult(f"fail-under {name}", False, message))
        else:
            message = f"{what} {name} = {figure:.3f} is at least --fail-under {bound:g}"
            results.append(GateResult(f"fail-under {name}", True, message))
    if max_gap is not None:
        overall = next(g for g in gaps if g.metric == metric and g.field is None)
        if math.isnan(overall.gap):
            message = f"--max-gap {max_gap:g}: no gap measured ({metric} needs real and synthetic queries)"
            results.append(GateResult("max-gap", False, message))
        elif abs(overall.gap) > max_gap:
            verb = "overstates" if overall.gap > 0 else "understates"
            message = (
                f"synthetic {metric} {verb} the real figure by {abs(overall.gap):.3f}, "
                f"over --max-gap {max_gap:g}"
            )
            results.append(GateResult("max-gap", False, message))
        else:
            message = f"gap on {metric} is {abs(overall.gap):.3f}, within --max-gap {max_gap:g}"
            results.append(GateResult("max-gap", True, message))
    return tuple(results)


def _unknown_fields(
    by: Sequence[str],
    results: EvaluationResult,
    calibrate_by: str | None,
    by_field: str | None,
    calibration: EvaluationResult,
) -> tuple[str, ...]:
    """A slice or stratum field no query has would silently mean one ``(none)`` slice or one stratum.

    Every field of the gold sets is in the results, so such a field is a typo or one the gold sets
    lack: the warning names it and the fields there are.
    """
    warnings = []
    present = results.present_fields()
    for name in dict.fromkeys(by):
        if name not in present:
            warnings.append(
                f"--by {name!r}: no query in the results has this field, so its only slice is (none) "
                f"(fields: {', '.join(present) or 'none'})"
            )
    if calibrate_by is not None and by_field is None:
        known = calibration.slice_fields()
        warnings.append(
            f"--calibrate-by {calibrate_by!r}: no query in the results has this field, so the calibrated "
            f"estimate uses one stratum (fields: {', '.join(known) or 'none'})"
        )
    return tuple(warnings)


def _warnings(
    gaps: Sequence[SliceGap], metric: str, calibrated: CalibratedEstimate | None, skipped: str | None
) -> tuple[str, ...]:
    warnings: list[str] = []
    for gap in gaps:
        # A value the real set lacks is worth a warning; a field the synthetic set lacks is not.
        if gap.metric == metric and gap.value is not None and gap.n_real == 0 and gap.n_synthetic:
            warnings.append(
                f"the real set has no queries with {gap.label} (the synthetic set has {gap.n_synthetic}): "
                "its gap cannot be measured"
            )
    if calibrated is not None:
        warnings.extend(note for note in calibrated.notes if "stale" in note or "no date" in note)
    if skipped:
        warnings.append(f"overlap and exact-match diagnostics skipped: {skipped}")
    return tuple(warnings)

"""``calibrate()``: from results.json to the report that says which figure to quote, and its gates."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from realrecall.calibrate.agreement import RankAgreement, rank_agreement
from realrecall.calibrate.answers import AnswerGrid, answer_grid, load_answers
from realrecall.calibrate.calibrated_estimate import CalibratedEstimate, calibrated_estimate
from realrecall.calibrate.diagnostics import Diagnostics, diagnose
from realrecall.calibrate.gap import Headline, SliceGap, headline, measure_gaps, metric_values
from realrecall.calibrate.judge_agreement import (
    LabelAgreement,
    load_label_agreement,
    marked_label_agreement,
)
from realrecall.calibrate.judge_labels import JudgeLabelNote, judge_label_note
from realrecall.calibrate.remeasure import corpus_changed, remeasure_real
from realrecall.calibrate.settings import CalibrateSettings
from realrecall.calibrate.statistics import Estimate, estimate_mean
from realrecall.corpus import Corpus, load_corpus
from realrecall.errors import GateFailed, InputError, SettingError
from realrecall.evaluate.metrics import is_binary
from realrecall.evaluate.results import (
    EvaluationResult,
    QueryResult,
    ResultsSource,
    default_slice_fields,
    load_results,
    merge_by_retriever,
)
from realrecall.evaluate.settings import headline_metric
from realrecall.settings import settings_with

__all__ = [
    "CalibrationReport",
    "GateResult",
    "calibrate",
    "check_calibration_carries",
]

_SOURCE_TYPES = (EvaluationResult, Mapping, str, Path)


@dataclass(frozen=True)
class GateResult:
    """One quality gate and whether it held."""

    gate: str
    passed: bool
    message: str


@dataclass(frozen=True)
class CalibrationReport:
    """Everything ``realrecall calibrate`` reports; every output format renders this.

    ``retriever``: its description, parameters and versions (``bm25s 0.3.16 k1=0.9 b=0.4 ...``);
    ``retriever_name``: its name (``bm25``), which titles a report.
    """

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
    retriever_name: str = ""
    judge: LabelAgreement | None = None
    """The judge's agreement with people and its bias, when the results were scored with judge labels."""
    judge_labels: JudgeLabelNote | None = None
    """How far the headline rests on a judge's labels, found by their marks (``judge_labels``' rules);
    its sentence ends the headline's line."""

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
    corpus: Corpus | str | Path | None = None,
    calibrate_on: ResultsSource | None = None,
    answers: Mapping[str, bool] | str | Path | None = None,
    settings: CalibrateSettings | None = None,
    now: datetime | None = None,
    **options: Any,
) -> CalibrationReport:
    """Report the real figure, the synthetic figure and their gap, overall and per slice.

    ``results``: what ``evaluate`` returned, or its results.json (paths or parsed mappings). Results of
    the same retriever merge;
    the first retriever is the one reported, and all retrievers evaluated on both sets feed the rank
    agreement. ``settings`` (``CalibrateSettings``, or its fields as keywords over it) says how: the
    headline metric, the slices, the calibrated estimate's strata, the gates, the intervals.
    ``calibrate_on``: earlier results holding the real set, whose per-slice gaps correct
    these synthetic figures (default: these results); ``answers``: answer labels, a mapping of query id
    to True/False or a file. Both may be given as objects here, or as paths in the settings.
    ``origins``: gold set name -> ``real`` or ``synthetic``, for sets evaluated without an origin.
    Gates are evaluated, not raised: call :meth:`CalibrationReport.check_gates`; ``gate_on="bound"``
    checks the interval's bound instead of the point (``fail_under`` on the lower bound, ``max_gap`` on
    the bound farthest from zero).

    A calibration from other results (``calibrate_on``) is refused unless it was measured with the same
    retriever and the same generator: a gap belongs to the retriever. ``stratum_weights``: the traffic
    share of each value of ``calibrate_by`` (default: the real set's mix, and the synthetic set's mix
    for strata without real questions).
    """
    settings = settings_with(CalibrateSettings, settings, options, what="calibrate")
    calibrate_on = _given_once("calibrate_on", calibrate_on, settings.calibrate_on)
    answers = _given_once("answers", answers, settings.answers)
    metric, confidence, by = settings.metric, settings.confidence, settings.by
    calibrate_by = settings.calibrate_by
    real_date, max_age_days, answer_k = settings.real_date, settings.max_age_days, settings.answer_k
    fail_under, max_gap, gate_on = settings.fail_under, settings.max_gap, settings.gate_on
    stratum_weights, origins = settings.stratum_weights, settings.origins
    seed, n_resamples, bootstrap = settings.seed, settings.n_resamples, settings.bootstrap
    min_queries, max_width = settings.min_queries, settings.max_width
    _check_judge_labels(settings)
    sources = [results] if isinstance(results, _SOURCE_TYPES) else _sources(results)
    if not sources:
        raise InputError("no results given", hint="pass at least one results.json")
    retrievers = merge_by_retriever(_with_origins(load_results(s, origins=origins)) for s in sources)
    primary = retrievers[0]
    earlier = None if calibrate_on is None else _as_results(calibrate_on, origins)
    remeasured: tuple[str, ...] = ()
    if earlier is not None and corpus_changed(earlier, primary):
        # A real figure belongs to its corpus: never carried to another, re-measured on today's.
        remeasured = (_remeasured_note(earlier, primary),)
        if not primary.of_origin("real"):
            primary = merge_by_retriever([primary, remeasure_real(earlier, primary, corpus=corpus)])[0]
            retrievers = (primary, *retrievers[1:])
        earlier = None
    if not primary.metrics:
        raise InputError("the results hold no metric", path=primary.source, hint="rerun evaluate")
    chosen = _choose_metric(metric, primary)
    for name in fail_under or {}:
        _choose_metric(name, primary)
    fields, unsliced = (tuple(by), ()) if by is not None else default_slice_fields(primary)
    rng = np.random.default_rng(seed)
    # A stream of its own for the calibrated estimate: how many slices --by asks for must not move it.
    calibration_rng = np.random.default_rng([seed, 1])
    real, synthetic = primary.of_origin("real"), primary.of_origin("synthetic")
    gaps = measure_gaps(
        real, synthetic, primary.metrics, fields,
        confidence=confidence, n_resamples=n_resamples, rng=rng, min_queries=min_queries, max_width=max_width,
        method=bootstrap,
    )  # fmt: skip
    overall = next(g for g in gaps if g.metric == chosen and g.field is None)

    calibration = primary if earlier is None else earlier
    carried = () if calibration is primary else check_calibration_carries(calibration, primary, metric=chosen)
    carried += remeasured
    by_field = calibrate_by if calibrate_by in calibration.slice_fields() else None
    field_warnings = _unknown_fields(
        fields if by is not None else (), primary, calibrate_by, by_field, calibration
    )
    unsorted = _real_lacks_stratum_field(by_field, calibration)
    if unsorted:
        by_field, field_warnings = None, (*field_warnings, unsorted)
    dates = calibration.real_set_dates()
    # The oldest real set dates the calibration: staleness errs on the side of a warning.
    real_set_date = real_date or (min(dates) if dates else None)
    calibration_real = calibration.of_origin("real")
    real_overall = (
        overall.real
        if calibration is primary
        else estimate_mean(
            metric_values(calibration_real, chosen), binary=is_binary(chosen), confidence=confidence,
            n_resamples=n_resamples, rng=calibration_rng, method=bootstrap,
        )
    )  # fmt: skip
    calibrated = calibrated_estimate(
        chosen, synthetic, calibration_real, calibration.of_origin("synthetic"),
        by=by_field, same_synthetic=calibration is primary, binary=is_binary(chosen),
        calibrated_on=real_set_date, max_age_days=max_age_days, now=now or datetime.now(UTC),
        confidence=confidence, n_resamples=n_resamples, rng=calibration_rng, weights=stratum_weights,
        real_overall=real_overall, target_width=max_width,
    )  # fmt: skip
    if calibrated is not None and carried:
        calibrated = replace(calibrated, notes=calibrated.notes + carried)
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
    report_gates = _gates(fail_under or {}, max_gap, gaps, chosen, calibrated, gate_on)
    judge = _judge_agreement(settings, primary)
    behind = real or (*synthetic, *(() if calibration is primary else calibration_real))

    def estimate(queries: Sequence[QueryResult]) -> Estimate:
        return estimate_mean(
            metric_values(queries, chosen), binary=is_binary(chosen), confidence=confidence,
            n_resamples=n_resamples, rng=np.random.default_rng([seed, 2]), method=bootstrap,
        )  # fmt: skip

    sources_behind = [primary] if calibration is primary else [primary, calibration]
    note = judge_label_note(sources_behind, behind, chosen, checked=judge, estimate=estimate)
    if note is not None:
        head = replace(head, text=f"{head.text} {note.text}")
    return CalibrationReport(
        headline=head,
        retriever=primary.description or primary.name,
        metric=chosen,
        metrics=primary.metrics,
        confidence=confidence,
        slice_fields=fields,
        gaps=gaps,
        calibrated=calibrated,
        diagnostics=diagnose(real, synthetic, text_of, skipped_reason=skipped, realism=settings.realism),
        rank_agreement=rank_agreement(
            retrievers, chosen, confidence=confidence, n_resamples=n_resamples, seed=seed
        ),
        answers=grid,
        gates=report_gates,
        warnings=primary.warnings
        + _not_pooled(primary, retrievers[1:])
        + field_warnings
        + unsliced
        + _warnings(gaps, chosen, calibrated, skipped, calibration_real),
        sources=tuple(str(s) for s in sources if isinstance(s, str | Path)),
        seed=seed,
        n_resamples=n_resamples,
        retriever_name=primary.name,
        judge=judge,
        judge_labels=note,
    )


def _not_pooled(primary: EvaluationResult, others: Sequence[EvaluationResult]) -> tuple[str, ...]:
    """Why results of a retriever of the primary's name were not pooled with it: other code or another
    corpus (``EvaluationResult.identity``). Said when they hold the real questions the primary lacks,
    which the user most likely meant to quote."""
    return tuple(
        f"{other.source or 'other results'} holds real questions of {other.name} with other code or on "
        f"another corpus ({_difference_of(other, primary)}): they are another system, not pooled with "
        f"{primary.source or 'these results'}; give them with --calibrate-on to re-measure or refuse as "
        "a calibration does"
        for other in others
        if other.name == primary.name and other.of_origin("real") and not primary.of_origin("real")
    )


def _difference_of(other: EvaluationResult, primary: EvaluationResult) -> str:
    if other.corpus_sha256 != primary.corpus_sha256:
        return "the corpus differs"
    mine, theirs = primary.retriever_fingerprint, other.retriever_fingerprint
    if mine is None or theirs is None:
        return "one records no retriever fingerprint"
    return _difference(theirs, mine)


def _check_judge_labels(settings: CalibrateSettings) -> None:
    """Judge labels come with people's labels to check them against, and the other way round."""
    if settings.judge_labels is not None and settings.human_labels is None:
        raise SettingError(
            "judge_labels",
            "needs human_labels: a figure from judge labels is never reported unchecked",
            hint="give people's labels of some of the same pairs with --human-labels",
        )


def _judge_agreement(settings: CalibrateSettings, result: EvaluationResult) -> LabelAgreement | None:
    """The judge's agreement with people's ``human_labels``: against the declared ``judge_labels``,
    else against the pairs the result's gold sets mark as a judge's (their files, read again)."""
    if settings.human_labels is None:
        return None
    if settings.judge_labels is not None:
        return load_label_agreement(settings.human_labels, settings.judge_labels)
    marked = [g.path for g in result.gold_sets if g.judge_labels is not None]
    if not marked:
        raise SettingError(
            "human_labels",
            "checks a judge's labels: judge_labels is not given and no gold set of the results holds "
            "labels marked as a judge's",
            hint="give the judge's labels with --judge-labels",
        )
    return marked_label_agreement(settings.human_labels, [Path(path) for path in marked if path])


def _given_once(name: str, given: Any, setting: Path | None) -> Any:
    """An input given as an object (in Python) or as a path in the settings, not both."""
    if given is not None and setting is not None:
        raise SettingError(name, "is given twice: as an argument and in the settings", hint="give it once")
    return given if given is not None else setting


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
        return headline_metric(results.metrics)
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


def _remeasured_note(earlier: EvaluationResult, current: EvaluationResult) -> str:
    then_chunks = (earlier.corpus or {}).get("chunks")
    now_chunks = (current.corpus or {}).get("chunks")
    source = earlier.source or "the calibration results"
    where = (
        "these results' own real questions are used"
        if current.of_origin("real")
        else ("its real set was re-scored on today's corpus with today's retriever")
    )
    return (
        f"the corpus changed since {source} ({then_chunks} chunks then, {now_chunks} now): {where}, so the "
        "real figure is measured today, not carried"
    )


def _calibrated_headline(head: Headline, calibrated: CalibratedEstimate) -> Headline:
    """The headline of results without real queries: the estimate, saying first that it is not measured."""
    real_set = (
        f"the real set of {calibrated.calibrated_on[:10]}"
        if calibrated.calibrated_on
        else "an undated real set"
    )
    # Not "synthetic corrected by the gap": a stratum the real set covers is its measured real figure,
    # and the rest is predicted by whichever model the estimate's own line names.
    text = (
        f"Not measured in these results, which hold no real questions: the figure rests on {real_set}, "
        f"evaluated with the same retriever on the same corpus. {calibrated.text}"
    )
    if head.synthetic.n:
        gap = head.synthetic.value - calibrated.value
        verb = "overstates" if gap > 0 else "understates"
        text += f" Synthetic {head.synthetic.value:.2f} {verb} it by {abs(gap):.2f}."
    if calibrated.stale:
        text += f" Calibration is stale (real set from {calibrated.age_text})."
    text += " Evaluating the real set with this retriever costs no model call and replaces the estimate."
    return Headline(head.metric, head.real, head.synthetic, head.gap, head.gap_interval, text)


SHARED_OUTCOMES_ALPHA = 0.01
"""Level of the exact McNemar test on synthetic questions both results share: below it, the retriever
is taken to have changed, whatever its fingerprint says."""


def check_calibration_carries(
    calibration: EvaluationResult, current: EvaluationResult, *, metric: str | None = None
) -> tuple[str, ...]:
    """Refuse a gap measured with another retriever or generator; notes on what still differs (corpus).

    On SciFact six retrievers had synthetic-minus-real gaps from -0.37 to +0.20: a gap belongs to the
    retriever and to the generator of the synthetic questions, so it never carries to another. Beside
    the fingerprints, the outcomes themselves are compared: synthetic questions both results hold (same
    id, same text) must fare alike (``shared_outcomes_differ``).
    """
    source = calibration.source or "the calibration results"
    free = (
        f"evaluating the real set with {current.name} costs no model call "
        "(realrecall evaluate --gold REAL.jsonl ..., then calibrate those results)"
    )
    mine, theirs = current.retriever_fingerprint, calibration.retriever_fingerprint
    if mine is None or theirs is None:
        older = source if theirs is None else (current.source or "the results")
        raise InputError(
            f"{older} records no retriever fingerprint (written by an older realrecall), so the gap it "
            "measured cannot be shown to belong to this retriever",
            hint=f"re-run evaluate; {free}",
        )
    if dict(mine) != dict(theirs):
        raise InputError(
            f"the gap measured for {_retriever_label(theirs)} ({source}) does not carry to "
            f"{_retriever_label(mine)}: a gap belongs to its retriever ({_difference(theirs, mine)})",
            hint=free,
        )
    now_generators = set(current.generator_fingerprints())
    then_generators = set(calibration.generator_fingerprints())
    if now_generators and then_generators and now_generators != then_generators:
        raise InputError(
            f"the gap measured on synthetic questions of {_generators_label(then_generators)} ({source}) "
            f"does not carry to questions of {_generators_label(now_generators)}: a gap belongs to its "
            "generator",
            hint=f"regenerate with the calibration's generator, or {free}",
        )
    differ = shared_outcomes_differ(calibration, current, metric)
    if differ is not None:
        raise InputError(
            f"the gap measured in {source} does not carry to these results: {differ}, so the retriever "
            "or what it searches changed whatever its fingerprint says",
            hint=free,
        )
    notes: list[str] = []
    return tuple(notes)


def shared_outcomes_differ(
    calibration: EvaluationResult, current: EvaluationResult, metric: str | None
) -> str | None:
    """Why the synthetic questions both results hold fare differently beyond noise; None if they don't.

    Per shared question (same id, same text) the outcome of a binary metric (``metric`` if it is one,
    else the first binary metric both hold): hit or miss, then and now. The discordant pairs go to the
    exact McNemar test (two-sided binomial test of the hit-then-miss-now count against half of the
    discordant pairs, ``scipy.stats.binomtest``); below ``SHARED_OUTCOMES_ALPHA`` the results are taken
    to come from different retrievers. The same retriever on the same corpus gives the same outcomes.
    """
    chosen = _binary_metric(metric, calibration, current)
    if chosen is None:
        return None
    then = {
        (q.query_id, q.query): q.metrics[chosen]
        for q in calibration.of_origin("synthetic")
        if chosen in q.metrics
    }
    lost = gained = shared = 0
    for query in current.of_origin("synthetic"):
        before = then.get((query.query_id, query.query))
        if before is None or chosen not in query.metrics:
            continue
        shared += 1
        now = query.metrics[chosen]
        lost += before > 0 and now == 0
        gained += before == 0 and now > 0
    if lost + gained == 0:
        return None
    p_value = float(binomtest(lost, lost + gained, 0.5).pvalue)
    if p_value >= SHARED_OUTCOMES_ALPHA:
        return None
    return (
        f"of {shared} synthetic questions both hold, {gained} went from miss to hit and {lost} from hit to "
        f"miss on {chosen} (exact McNemar p = {p_value:.2g})"
    )


def _binary_metric(metric: str | None, *results: EvaluationResult) -> str | None:
    held = [m for m in results[0].metrics if all(m in r.metrics for r in results[1:])]
    if metric in held and is_binary(metric):
        return metric
    return next((m for m in held if is_binary(m)), None)


def _retriever_label(fingerprint: Mapping[str, Any]) -> str:
    options = fingerprint.get("options") or {}
    shown = (
        " ".join(f"{k}={'none' if v is None else v}" for k, v in options.items())
        if isinstance(options, Mapping)
        else ""
    )
    name = str(fingerprint.get("name") or "retriever")
    return f"{name} {shown}".strip() if len(shown) < 80 else name


def _difference(then: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    for key in ("name", "options", "versions", "description", "run"):
        a, b = then.get(key), now.get(key)
        if a != b:
            if isinstance(a, Mapping) and isinstance(b, Mapping):
                changed = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
                shown = (f"{k} {_shown(a.get(k))} then, {_shown(b.get(k))} now" for k in changed[:3])
                return f"{key} differ: {', '.join(shown)}"
            return f"{key}: {a} then, {b} now"
    return "fingerprints differ"


def _shown(value: object) -> str:
    return "none" if value is None else str(value)


def _generators_label(generators: set[str]) -> str:
    labels = []
    for text in sorted(generators):
        record = json.loads(text)
        parts = [str(record.get("backend"))]
        if record.get("model"):
            parts.append(str(record["model"]))
        if record.get("prompt"):
            parts.append(f"prompt {str(record['prompt'])[:12]}")
        labels.append(" ".join(parts))
    return "; ".join(labels)


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
    gate_on: str = "point",
) -> tuple[GateResult, ...]:
    """Each gate with the interval beside the point; ``gate_on="bound"`` checks the unfavourable bound."""
    results: list[GateResult] = []
    for name, bound in fail_under.items():
        overall = next(g for g in gaps if g.metric == name and g.field is None)
        figure, interval, what = overall.real.value, overall.real.interval, "real"
        if overall.n_real == 0 and calibrated is not None and calibrated.metric == name:
            figure, interval, what = calibrated.value, calibrated.interval, "calibrated (estimated)"
        level = f"{interval.confidence * 100:g}% CI"
        if math.isnan(figure):
            message = f"--fail-under {name}={bound:g}: there is no real {name} to check"
            results.append(GateResult(f"fail-under {name}", False, message))
            continue
        ci = f"{level} {interval.low:.3f}-{interval.high:.3f}" if interval.defined else "no interval"
        checked = interval.low if gate_on == "bound" and interval.defined else figure
        on = "its lower bound" if gate_on == "bound" else "the point"
        passed = checked >= bound
        relation = "is at least" if passed else "is under"
        message = f"{what} {name} = {figure:.3f} ({ci}); {on} {relation} --fail-under {bound:g}"
        results.append(GateResult(f"fail-under {name}", passed, message))
    if max_gap is not None:
        overall = next(g for g in gaps if g.metric == metric and g.field is None)
        if math.isnan(overall.gap):
            message = f"--max-gap {max_gap:g}: no gap measured ({metric} needs real and synthetic queries)"
            results.append(GateResult("max-gap", False, message))
            return tuple(results)
        interval = overall.gap_interval
        ci = (
            f"{interval.confidence * 100:g}% CI {interval.low:+.3f} to {interval.high:+.3f}"
            if interval.defined
            else "no interval"
        )
        far = max(abs(interval.low), abs(interval.high)) if interval.defined else abs(overall.gap)
        checked = far if gate_on == "bound" else abs(overall.gap)
        on = "its farther bound" if gate_on == "bound" else "the point"
        verb = "overstates" if overall.gap > 0 else "understates"
        passed = checked <= max_gap
        relation = "within" if passed else "over"
        message = (
            f"synthetic {metric} {verb} the real figure by {abs(overall.gap):.3f} ({ci}); "
            f"{on} is {relation} --max-gap {max_gap:g}"
        )
        results.append(GateResult("max-gap", passed, message))
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


def _real_lacks_stratum_field(by_field: str | None, calibration: EvaluationResult) -> str:
    """Why stratifying by ``by_field`` is dropped: no real question has it (a BEIR set's language),
    so every stratum with synthetic questions would be unmeasured, the real set all in a stratum of
    its own, and a set that measures all of the traffic said to measure none of it; "" when it has."""
    real = calibration.of_origin("real")
    if by_field is None or not real or any(q.field(by_field) is not None for q in real):
        return ""
    return (
        f"--calibrate-by {by_field!r}: no real question has this field (only synthetic ones), so the "
        "calibrated estimate uses one stratum; give the real questions the field to stratify by it"
    )


def _warnings(
    gaps: Sequence[SliceGap],
    metric: str,
    calibrated: CalibratedEstimate | None,
    skipped: str | None,
    calibration_real: Sequence[QueryResult] = (),
) -> tuple[str, ...]:
    warnings: list[str] = []
    for gap in gaps:
        # A value the real set lacks is worth a warning; a field the synthetic set lacks is not. Nor is
        # a value the calibration's real set measures (synthetic-only results calibrated on it).
        covered = gap.field is not None and any(q.field(gap.field) == gap.value for q in calibration_real)
        if (
            gap.metric == metric
            and gap.value is not None
            and gap.n_real == 0
            and gap.n_synthetic
            and not covered
        ):
            warnings.append(
                f"the real set has no queries with {gap.label} (the synthetic set has {gap.n_synthetic}): "
                "its gap cannot be measured"
            )
    if calibrated is not None:
        warnings.extend(note for note in calibrated.notes if "stale" in note or "no date" in note)
    if skipped:
        warnings.append(f"overlap and exact-match diagnostics skipped: {skipped}")
    return tuple(warnings)

"""``CalibrateSettings`` and ``CompareSettings``: every option of calibrate and compare, declared once;
``AgreementSettings``, ``DriftSettings``, ``PlanSettings``, ``LabelAgreementSettings`` and
``PPISettings`` likewise for the report commands (``judge agreement`` and ``judge ppi`` the last two).

``realrecall calibrate``'s and ``realrecall compare``'s options, the ``[calibrate]`` section of
pipeline.toml and the keyword arguments of ``calibrate``, ``compare`` and ``evaluate_and_calibrate`` are
their fields (``realrecall.settings`` derives them from the declarations below), and the rules of the
resampling settings the stages share are written here once. Kept free of heavy imports: the CLI reads
it at start-up.
"""

from __future__ import annotations

import datetime as dt
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from realrecall.errors import SettingError
from realrecall.evaluate.settings import HEADLINE_METRIC
from realrecall.settings import Flag, StageSettings

__all__ = [
    "BOOTSTRAP_METHODS",
    "GATE_ON",
    "MAX_RESAMPLES",
    "TEST_NAMES",
    "AgreementSettings",
    "CalibrateSettings",
    "CompareSettings",
    "DriftSettings",
    "LabelAgreementSettings",
    "PPISettings",
    "PlanSettings",
    "check_resampling",
    "fail_under_problem",
    "parse_date",
]

BootstrapMethod = Literal["percentile", "bca"]
BOOTSTRAP_METHODS: tuple[str, ...] = typing.get_args(BootstrapMethod)
"""Bootstrap intervals for non-proportions and gaps (``statistics.bootstrap_interval``)."""

GateOn = Literal["point", "bound"]
GATE_ON: tuple[str, ...] = typing.get_args(GateOn)
"""What a gate checks: the point estimate, or the bound of its interval that is least favourable."""

TestName = Literal["randomization", "t", "bootstrap"]
TEST_NAMES: tuple[str, ...] = typing.get_args(TestName)
"""compare's paired tests (``comparison.TESTS`` maps each to its function)."""

Origin = Literal["real", "synthetic"]

MAX_RESAMPLES = 1_000_000
"""More draws than this buy no precision a report shows and cost minutes."""


@dataclass(frozen=True, kw_only=True)
class CalibrateSettings(StageSettings):
    """How calibrate reports: the headline metric, the slices, the calibrated estimate, the gates."""

    metric: Annotated[
        str | None, f"Headline metric (default {HEADLINE_METRIC}, or the results' first without it)."
    ] = None
    by: Annotated[tuple[str, ...] | None, "Slice fields (default: every field present)."] = None
    calibrate_by: Annotated[str | None, "Stratum field of the calibrated estimate (none: one stratum)."] = (
        "type"
    )
    calibrate_on: Annotated[Path | None, "Earlier results.json holding the real set to calibrate on."] = None
    real_date: Annotated[str | None, "Date the real set was collected, ISO (default: its file's date)."] = (
        None
    )
    max_age_days: Annotated[
        float | None, "Flag the calibration stale when its real set is older (days).", Flag("--max-age")
    ] = 90.0
    answers: Annotated[Path | None, "Answer labels (JSONL or CSV: query_id, correct)."] = None
    answer_k: Annotated[
        int | None, "Evidence counts when ranked within k (default: the headline metric's, else 10)."
    ] = None
    fail_under: Annotated[
        Mapping[str, float],
        "Gate: METRIC=VALUE, e.g. recall@10=0.7 (repeatable).",
        Flag("--fail-under", metavar="METRIC=VALUE"),
    ] = field(default_factory=dict)
    max_gap: Annotated[float | None, "Gate: largest allowed |synthetic - real|."] = None
    gate_on: Annotated[
        GateOn, "Gates check the point, or the bound of its interval (lower for fail_under)."
    ] = "point"
    stratum_weights: Annotated[
        Mapping[str, float] | None,
        "VALUE=SHARE: traffic share of a calibrate_by stratum (repeatable; default: the real set's mix).",
        Flag("--stratum-weight", metavar="VALUE=SHARE"),
    ] = None
    origins: Annotated[
        Mapping[str, Origin],
        "NAME=real|synthetic: origin of a gold set's queries (repeatable).",
        Flag("--origin", metavar="NAME=ORIGIN"),
    ] = field(default_factory=dict)
    confidence: Annotated[float, "Confidence level of every interval."] = 0.95
    seed: Annotated[int, "Seed of every resampling, so a report is reproducible."] = 0
    n_resamples: Annotated[int, "Bootstrap resamples."] = 2000
    bootstrap: Annotated[
        BootstrapMethod, "Bootstrap interval for non-proportions and gaps: percentile or bca."
    ] = "percentile"
    realism: Annotated[
        bool,
        "Score how well a classifier tells synthetic from real questions (trains one; needs scikit-learn).",
    ] = False
    min_queries: Annotated[int, "Slices with fewer queries are marked too small to read."] = 30
    max_width: Annotated[float, "Slices whose interval is wider are marked too uncertain to read."] = 0.2
    judge_labels: Annotated[
        Path | None,
        "Judge labels the results were scored with (realrecall judge's qrels): the report shows the "
        "judge's agreement with people and its bias (needs human_labels).",
    ] = None
    human_labels: Annotated[
        Path | None,
        "People's labels of some of the same pairs (qrels or gold set), to check the judge: against "
        "judge_labels, else against the pairs the results' gold sets mark as a judge's.",
    ] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(confidence=self.confidence, n_resamples=self.n_resamples, seed=self.seed)
        for name in ("max_age_days", "max_gap"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise SettingError(name, f"must be a number of 0 or more, got {value!r}")
        if self.answer_k is not None and self.answer_k < 1:
            raise SettingError(
                "answer_k", f"must be a whole number >= 1, got {self.answer_k!r}", hint="e.g. 10"
            )
        for gated, bound in self.fail_under.items():
            problem = fail_under_problem(bound)
            if problem is not None:
                raise SettingError("fail_under", f"{gated}={bound!r} {problem}", hint="e.g. recall@10=0.7")
        for stratum, share in (self.stratum_weights or {}).items():
            if share < 0:
                raise SettingError("stratum_weights", f"of {stratum!r} must be a share >= 0, got {share!r}")
        if self.min_queries < 1:
            raise SettingError("min_queries", f"must be a whole number >= 1, got {self.min_queries!r}")
        if self.max_width <= 0:
            raise SettingError("max_width", f"must be a number above 0, got {self.max_width!r}")
        if self.real_date is not None:
            parse_date(self.real_date, what="real_date")
        _check_names("by", self.by or ())
        _check_names("calibrate_by", () if self.calibrate_by is None else (self.calibrate_by,))


@dataclass(frozen=True, kw_only=True)
class CompareSettings(StageSettings):
    """How compare tests system b against system a on the same queries."""

    metric: Annotated[
        str | None, f"Metric to compare (default {HEADLINE_METRIC}, or the first both results hold)."
    ] = None
    by: Annotated[tuple[str, ...] | None, "Slice fields (default: every field present)."] = None
    test: Annotated[TestName, "randomization (ranx fisher), t (ranx student) or bootstrap."] = "randomization"
    alpha: Annotated[float, "Significance level: a p-value at or under it is significant."] = 0.05
    confidence: Annotated[float, "Confidence level of each difference's interval."] = 0.95
    n_resamples: Annotated[int, "Randomizations / bootstrap resamples."] = 10_000
    seed: Annotated[int, "Seed of the randomization."] = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(
            confidence=self.confidence, n_resamples=self.n_resamples, alpha=self.alpha, seed=self.seed
        )
        _check_names("by", self.by or ())


@dataclass(frozen=True, kw_only=True)
class AgreementSettings(StageSettings):
    """How agreement compares two query sets: the tests, the intervals and the split-half floor."""

    alpha: Annotated[float, "Significance level of the paired t-tests."] = 0.05
    confidence: Annotated[float, "Confidence level of the intervals."] = 0.95
    n_resamples: Annotated[int, "Bootstrap resamples of tau's interval."] = 2000
    n_splits: Annotated[int, "Random splits of A for the split-half floor.", Flag("--splits")] = 1000
    seed: Annotated[int, "Seed of the resampling and the splits."] = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(
            confidence=self.confidence, n_resamples=self.n_resamples, alpha=self.alpha, seed=self.seed
        )
        if self.n_splits < 1:
            raise SettingError(
                "n_splits", f"must be a whole number >= 1, got {self.n_splits!r}", hint="e.g. 1000"
            )


MIN_PERMUTATIONS = 19
"""Fewer label shuffles cannot give a p-value of 0.05 or under (1 / (1 + 19))."""


@dataclass(frozen=True, kw_only=True)
class DriftSettings(StageSettings):
    """How drift tests recent traffic against the real set: the alarm's level and the permutation test."""

    alpha: Annotated[float, "Significance level of the alarm."] = 0.05
    n_permutations: Annotated[int, "Label shuffles of the permutation test.", Flag("--permutations")] = 200
    folds: Annotated[int, "Cross-validation folds."] = 5
    seed: Annotated[int, "Seed of the folds and the shuffles."] = 0
    top: Annotated[int, "Queries and terms shown."] = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(alpha=self.alpha, seed=self.seed)
        if self.n_permutations < MIN_PERMUTATIONS:
            raise SettingError(
                "n_permutations",
                f"must be at least {MIN_PERMUTATIONS}, got {self.n_permutations!r}",
                hint="fewer shuffles cannot reach p = 0.05; the default is 200",
            )
        if self.folds < 2:
            raise SettingError("folds", f"must be a whole number >= 2, got {self.folds!r}", hint="e.g. 5")
        if self.top < 0:
            raise SettingError("top", f"must be a whole number >= 0, got {self.top!r}", hint="e.g. 10")


@dataclass(frozen=True, kw_only=True)
class PlanSettings(StageSettings):
    """How plan sizes the real questions to label: the metric, the strata and the interval."""

    metric: Annotated[str, "Metric to plan for."] = HEADLINE_METRIC
    calibrate_by: Annotated[
        str | None,
        "Stratum field (type, topic...; default: type with --weights, else none).",
        Flag("--by"),
    ] = None
    weights: Annotated[
        Path | None, "Traffic share of each stratum value: JSON {value: share} or lines value,share."
    ] = None
    confidence: Annotated[float, "Confidence level of the interval."] = 0.95

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(confidence=self.confidence)
        _check_names("calibrate_by", () if self.calibrate_by is None else (self.calibrate_by,))

    def stratum_field(self, *, weighted: bool) -> str | None:
        """The field strata are drawn from: ``calibrate_by`` (as calibrate names it), else calibrate's
        default when traffic shares are given (``weighted``), else none."""
        if self.calibrate_by is not None:
            return self.calibrate_by
        return CalibrateSettings().calibrate_by if weighted else None


@dataclass(frozen=True, kw_only=True)
class LabelAgreementSettings(StageSettings):
    """How judge agreement reads two labellings of the same pairs: the grade a pair is relevant from."""

    threshold: Annotated[
        int | None, "Relevant from this grade (default 2 when grades go above 1, else 1)."
    ] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        # Grade 0 is "not relevant" in every qrels file: a threshold of 0 calls every pair relevant.
        if self.threshold is not None and self.threshold < 1:
            raise SettingError(
                "threshold", f"must be a grade >= 1, got {self.threshold!r}", hint="e.g. 2 for graded labels"
            )


@dataclass(frozen=True, kw_only=True)
class PPISettings(StageSettings):
    """How judge ppi states each system's figure corrected by people: the intervals' confidence."""

    confidence: Annotated[float, "Confidence level of the intervals."] = 0.95

    def __post_init__(self) -> None:
        super().__post_init__()
        check_resampling(confidence=self.confidence)


def check_resampling(
    *,
    confidence: float | None = None,
    n_resamples: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
) -> None:
    """The rules of the resampling settings the stages share, each with its one message (a setting a
    stage has not is None)."""
    if confidence is not None and not 0.0 < confidence < 1.0:
        raise SettingError("confidence", f"must be between 0 and 1, got {confidence}", hint="e.g. 0.95")
    if n_resamples is not None and n_resamples < 100:
        raise SettingError(
            "n_resamples", f"must be at least 100 for an interval, got {n_resamples}", hint="use 1000 or more"
        )
    if n_resamples is not None and n_resamples > MAX_RESAMPLES:
        raise SettingError(
            "n_resamples",
            f"must be at most {MAX_RESAMPLES}, got {n_resamples}",
            hint="10000 already gives intervals stable to the third decimal",
        )
    if alpha is not None and not 0.0 < alpha < 1.0:
        raise SettingError("alpha", f"must be between 0 and 1, got {alpha}", hint="e.g. 0.05")
    if seed is not None and seed < 0:
        raise SettingError("seed", f"must be a whole number >= 0, got {seed!r}", hint="e.g. 0")


def fail_under_problem(bound: object) -> str | None:
    """Why ``bound`` cannot be a ``fail_under`` bound (None: it can).

    Every metric is a mean of per-query values in [0, 1] (recall, MRR, nDCG, precision, their budgeted
    forms), so a bound outside [0, 1] would fail every run (above 1) or none (below 0) whatever the
    figures: a typo (1.5 for 0.15, 70 for 0.70), refused before anything is generated or scored.
    """
    if isinstance(bound, bool) or not isinstance(bound, int | float):
        return "is not a number"
    if not math.isfinite(bound):
        return "is not a finite number"
    if not 0.0 <= bound <= 1.0:
        return "is outside [0, 1], where every metric lies"
    return None


def parse_date(text: str, *, what: str = "date") -> dt.datetime:
    """An ISO 8601 date or timestamp; naive values are taken as UTC. ``what`` names it in the error."""
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise SettingError(what, f"must be an ISO date, got {text!r}", hint="write it as 2026-11-30")
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _check_names(name: str, values: tuple[str, ...]) -> None:
    if not all(value.strip() for value in values):
        raise SettingError(name, f"must name fields, got {values!r}", hint="e.g. type,language")

"""Number formatting shared by the table, Markdown and HTML reports, so they agree to the digit."""

from __future__ import annotations

import math
from collections.abc import Sequence

from realrecall.calibrate.agreement import RankAgreement
from realrecall.calibrate.calibrated_estimate import MEASURED, CalibratedEstimate, Stratum
from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.gap import SliceGap
from realrecall.calibrate.statistics import Interval

__all__ = [
    "AGREEMENT_HEADER",
    "CALIBRATED_HEADER",
    "REALISM_HEADER",
    "agreement_line",
    "agreement_rows",
    "calibrated_rows",
    "ci_text",
    "diagnostics_rows",
    "figure",
    "gap_rows",
    "realism_line",
    "realism_rows",
    "signed",
]


def figure(value: float | None, digits: int = 2) -> str:
    """``0.68``; ``n/a`` for a missing or undefined value."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 2) -> str:
    """``+0.26`` / ``-0.04``; ``n/a`` when undefined."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:+.{digits}f}"


def ci_text(interval: Interval, *, signed_values: bool = False, digits: int = 2) -> str:
    """``0.61-0.75`` (or ``-0.02 to +0.11`` for differences); ``n/a`` when undefined."""
    if not interval.defined:
        return "n/a"
    if signed_values:
        return f"{signed(interval.low, digits)} to {signed(interval.high, digits)}"
    return f"{figure(interval.low, digits)}-{figure(interval.high, digits)}"


def gap_rows(gaps: Sequence[SliceGap]) -> list[list[str]]:
    """Rows: slice, metric, real, CI, n real, synthetic, CI, n synthetic, gap, gap CI."""
    return [
        [
            g.label, g.metric,
            figure(g.real.value), ci_text(g.real.interval), str(g.n_real),
            figure(g.synthetic.value), ci_text(g.synthetic.interval), str(g.n_synthetic),
            signed(g.gap), ci_text(g.gap_interval, signed_values=True),
        ]
        for g in gaps
    ]  # fmt: skip


CALIBRATED_HEADER = ("figure", "weight", "synthetic", "gap", "estimate", "n synthetic", "n real")
"""The calibrated estimate's columns after the stratum's (named by the field it is by)."""


def calibrated_rows(estimate: CalibratedEstimate) -> list[list[str]]:
    """Rows: stratum, where its figure comes from, weight, synthetic, gap, estimate, n synthetic, n real.

    The figure column says how each estimate was made, so the row reads: ``measured`` is the
    stratum's real mean (synthetic minus its own gap); ``1 real query`` the same from one query (0 or
    1, not a measurement anyone should quote); a predicted stratum names the model whose prediction
    it is (``predicted: pooled real`` is the real mean pooled over the measured strata, whatever this
    stratum's synthetic figure), since it has no gap of its own.
    """
    return [
        [str(s.value), stratum_figure(s, estimate), figure(s.weight), figure(s.synthetic), signed(s.gap),
         figure(s.corrected), str(s.n_synthetic), str(s.n_real)]
        for s in estimate.strata
    ]  # fmt: skip


def stratum_figure(stratum: Stratum, estimate: CalibratedEstimate) -> str:
    """Where a stratum's estimate comes from: ``measured``, ``1 real query``, ``predicted: MODEL``."""
    if stratum.source == MEASURED:
        return stratum.figure
    model = estimate.model.model if estimate.model is not None else ""
    return f"{stratum.source}: {model}" if model else stratum.source


def diagnostics_rows(report: CalibrationReport) -> list[list[str]]:
    """Rows of the side-by-side diagnostics: label, real, synthetic."""
    real, synthetic = report.diagnostics.real, report.diagnostics.synthetic
    rows = [
        ["queries", str(real.n), str(synthetic.n)],
        [
            "question words (mean)",
            figure(real.question_words.mean, 1),
            figure(synthetic.question_words.mean, 1),
        ],
        [
            "question words (median)",
            figure(real.question_words.median, 1),
            figure(synthetic.question_words.median, 1),
        ],
    ]
    if real.overlap is not None and synthetic.overlap is not None:
        rows.append(["lexical overlap (mean)", figure(real.overlap.mean), figure(synthetic.overlap.mean)])
        rows.append(
            ["exact string match", _share(real.exact_match_share), _share(synthetic.exact_match_share)]
        )
    rows.append(["types", _mix(real.types), _mix(synthetic.types)])
    rows.append(["languages", _mix(real.languages), _mix(synthetic.languages)])
    return rows


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _mix(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "none"


def realism_line(report: CalibrationReport) -> str:
    """``Realism: AUC 0.98 (95% CI 0.96-1.00; ...): the synthetic questions are ...``, or why it is absent."""
    d = report.diagnostics
    score = d.realism
    if score is None:
        return f"Realism score absent: {d.realism_skipped or 'not computed'}."
    return (
        f"Realism: a classifier tells synthetic from real questions with AUC {figure(score.auc)} "
        f"({score.confidence * 100:g}% CI {figure(score.low)}-{figure(score.high)}; {score.folds}-fold, "
        f"{score.n_real} real, {score.n_synthetic} synthetic; 0.5 = indistinguishable): {score.verdict}."
    )


REALISM_HEADER = (
    "feature",
    "leans",
    "contribution",
    "weight",
    "real",
    "synthetic",
    "held by (real, synthetic)",
)


def realism_rows(report: CalibrationReport) -> list[list[str]]:
    """Rows: the features that tell the sets apart most, by contribution, the side each leans to, its
    weight, each side's mean and how many questions of each side hold it."""
    score = report.diagnostics.realism
    if score is None:
        return []
    return [
        [
            f.name,
            f.leans,
            f"{f.contribution:.3f}",
            signed(f.weight),
            f"{f.real:.3g}",
            f"{f.synthetic:.3g}",
            f"{f.real_support}/{score.n_real}, {f.synthetic_support}/{score.n_synthetic}",
        ]
        for f in score.features
    ]


def agreement_line(agreement: RankAgreement) -> str:
    """``Kendall's tau = 0.67 (95% CI 0.33 to 1.00 from resampled queries; p = 0.174).``"""
    interval = agreement.tau_interval
    ci = (
        f"{interval.confidence * 100:g}% CI {ci_text(interval, signed_values=True)} from resampled queries; "
        if interval is not None and interval.defined
        else ""
    )
    return f"Kendall's tau = {figure(agreement.tau)} ({ci}p = {figure(agreement.p_value, 3)})."


def agreement_rows(agreement: RankAgreement) -> list[list[str]]:
    """Rows: system, synthetic, CI, real, CI, the systems tied with it on the synthetic set."""
    rows = []
    for s in agreement.systems:
        tied = [b if a == s.name else a for a, b in agreement.synthetic_ties if s.name in (a, b)]
        rows.append(
            [
                s.name,
                figure(s.synthetic, 3),
                "n/a" if s.synthetic_interval is None else ci_text(s.synthetic_interval, digits=3),
                figure(s.real, 3),
                "n/a" if s.real_interval is None else ci_text(s.real_interval, digits=3),
                ", ".join(tied) or "-",
            ]
        )
    return rows


AGREEMENT_HEADER = ("system", "synthetic", "CI", "real", "CI", "tied on synthetic")

"""The calibration report as Markdown: the headline as the first line, then one section per concern.

Control characters in data (slice values, names, notes) are written as escapes (``realrecall.printable``).
"""

from __future__ import annotations

from collections.abc import Sequence

from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.comparison import ComparisonReport
from realrecall.calibrate.report.judge import label_agreement_figures
from realrecall.calibrate.report.text import (
    AGREEMENT_HEADER,
    CALIBRATED_HEADER,
    REALISM_HEADER,
    agreement_line,
    agreement_rows,
    calibrated_rows,
    ci_text,
    diagnostics_rows,
    figure,
    gap_rows,
    realism_line,
    realism_rows,
    signed,
)
from realrecall.printable import printable

__all__ = ["render_comparison_markdown", "render_markdown"]


def render_markdown(report: CalibrationReport) -> str:
    """Markdown text; its first line is the headline."""
    lines = [report.headline.text, "", f"# Calibration of {report.retriever_name or report.retriever}", ""]
    if report.retriever_name and report.retriever != report.retriever_name:
        lines += [f"_{report.retriever}_", ""]
    if report.warnings:
        lines += [f"> warning: {w}" for w in report.warnings] + [""]
    for gate in report.gates:
        lines.append(f"- gate {'passed' if gate.passed else '**failed**'}: {gate.message}")
    if report.gates:
        lines.append("")
    if report.judge is not None:
        lines += ["## Judge labels", "", report.judge.summary, ""]
        lines += _table(["figure", "value"], label_agreement_figures(report.judge))
        lines.append("")
    lines += ["## Every metric, all queries", ""]
    lines += _table(
        ["metric", "real", "CI", "n real", "synthetic", "CI", "n synth", "gap", "gap CI"],
        [row[1:] for row in gap_rows([g for g in report.gaps if g.field is None])],
    )
    lines += ["", f"## {report.metric} by slice", ""]
    slices = report.slices()
    if slices:
        lines += _table(
            ["slice", "real", "CI", "n real", "synthetic", "CI", "n synth", "gap", "gap CI"],
            [[row[0], *row[2:]] for row in gap_rows(slices)],
        )
        notes = [f"- {g.label}: {note}" for g in slices for note in g.notes]
        if notes:
            lines += ["", *notes]
    else:
        lines.append("No slice fields in the per-query records.")
    other = [g for g in report.gaps if g.field is not None and g.metric != report.metric]
    if other:
        lines += ["", "## Every other metric by slice", ""]
        lines += _table(
            ["slice", "metric", "real", "CI", "n real", "synthetic", "CI", "n synth", "gap", "gap CI"],
            gap_rows(other),
        )
    lines += ["", *_calibrated(report), "", *_diagnostics(report)]
    if report.rank_agreement is not None:
        a = report.rank_agreement
        lines += [
            "",
            "## Rank agreement",
            "",
            agreement_line(a),
            "",
        ]
        lines += _table(AGREEMENT_HEADER, agreement_rows(a))
        lines += ["", a.advice]
    if report.answers is not None:
        grid = report.answers
        lines += ["", f"## Answers against evidence (top {grid.k})", ""]
        lines += _table(["cell", "queries"], [[cell, str(count)] for cell, count in grid.counts.items()])
        lines += ["", f"Verdict: {grid.verdict}."]
        if grid.unmatched:
            lines.append(f"{len(grid.unmatched)} labelled query ids were not in the results.")
    lines += ["", f"_Seed {report.seed}, {report.n_resamples} bootstrap resamples._", ""]
    return printable("\n".join(lines))


def render_comparison_markdown(report: ComparisonReport) -> str:
    """Markdown text of the comparison; its first line is the headline."""
    lines = [report.headline, "", f"# {report.name_b} against {report.name_a}: {report.metric}", ""]
    rows = [
        [
            r.label, str(r.n), figure(r.mean_a, 3), figure(r.mean_b, 3), signed(r.difference, 3),
            ci_text(r.interval, signed_values=True, digits=3), figure(r.p_value, 4),
            "yes" if r.significant else ("-" if r.note else "no"),
        ]
        for r in report.rows
    ]  # fmt: skip
    lines += _table(
        ["slice", "n", report.name_a, report.name_b, "difference", "CI", "p", "significant"], rows
    )
    lines += [
        "",
        f"_{report.test} test, alpha {report.alpha:g}; {report.unpaired_text}._",
        "",
    ]
    return printable("\n".join(lines))


def _calibrated(report: CalibrationReport) -> list[str]:
    c = report.calibrated
    if c is None:
        return ["## Calibrated estimate", "", "None: no real queries to calibrate on."]
    when = f"of {c.calibrated_on[:10]}" if c.calibrated_on else "undated"
    lines = [
        "## Calibrated estimate",
        "",
        f"{c.text} Real set {when}"
        + (f" ({c.age_text})" if c.age_text else "")
        + (", **stale**" if c.stale else "")
        + ".",
        "",
    ]
    lines += _table([c.by or "stratum", *CALIBRATED_HEADER], calibrated_rows(c))
    return lines + ([""] if c.notes else []) + [f"- {note}" for note in c.notes]


def _diagnostics(report: CalibrationReport) -> list[str]:
    d = report.diagnostics
    lines = ["## Why the sets differ", "", *_table(["", "real", "synthetic"], diagnostics_rows(report))]
    if d.overlap_skipped:
        lines += ["", f"Overlap and exact match skipped: {d.overlap_skipped}."]
    elif d.overlap_source:
        lines += ["", f"Overlap computed by {d.overlap_source}."]
    lines += ["", realism_line(report)]
    if realism_rows(report):
        lines += ["", *_table(REALISM_HEADER, realism_rows(report))]
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *(line(r) for r in rows)]

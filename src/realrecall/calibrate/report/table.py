"""The calibration report as rich renderables (the CLI prints them; the library never prints).

Text from data is ``Text`` (never read as markup, whatever console prints it) with its control
characters escaped (``realrecall.printable``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.comparison import ComparisonReport
from realrecall.calibrate.gap import SliceGap
from realrecall.calibrate.report.text import (
    AGREEMENT_HEADER,
    CALIBRATED_HEADER,
    agreement_line,
    agreement_rows,
    calibrated_rows,
    ci_text,
    diagnostics_rows,
    figure,
    gap_rows,
    realism_line,
    signed,
)
from realrecall.printable import printable

__all__ = ["comparison_table", "report_table"]

# Short headers and minimum widths keep the table whole in an 80-column terminal.
_GAP_COLUMNS = (
    ("real", 4),
    ("CI", 9),
    ("n", 1),
    ("synth", 4),
    ("CI", 9),
    ("n", 1),
    ("gap", 5),
    ("gap CI", 11),
)


def report_table(report: CalibrationReport, *, warnings: bool = True) -> RenderableType:
    """Headline first, then the gap tables, calibrated estimate, diagnostics and verdicts.

    ``warnings=False`` leaves out the report's warnings, for a caller that has printed them already.
    """
    parts: list[RenderableType] = [_text(report.headline.text, style="bold")]
    if warnings:
        parts += [_text(f"warning: {w}", style="yellow") for w in report.warnings]
    for gate in report.gates:
        parts.append(_text(f"gate {'passed' if gate.passed else 'FAILED'}: {gate.message}",
                          style="green" if gate.passed else "bold red"))  # fmt: skip
    if report.judge is not None:
        parts.append(_text(report.judge.summary, style="yellow"))
    overall = _gap_table(
        "every metric, all queries", "metric", [g for g in report.gaps if g.field is None], 1
    )
    parts.append(overall)
    if report.slices():
        parts.append(_gap_table(f"{report.metric} by slice", "slice", list(report.slices()), 0))
    c = report.calibrated
    if c is not None:
        when = f"of {c.calibrated_on[:10]}" if c.calibrated_on else "undated"
        stale = " [STALE]" if c.stale else ""
        parts.append(_text(f"{c.text} Real set {when}{stale}."))
        strata = Table(title=_text(f"calibrated {c.metric} by {c.by or 'stratum'}"), title_justify="left",
                       box=box.SIMPLE_HEAD, pad_edge=False)  # fmt: skip
        for column in (c.by or "stratum", *CALIBRATED_HEADER):
            strata.add_column(column, justify="left" if column in (c.by or "stratum", "figure") else "right")
        for row in calibrated_rows(c):
            strata.add_row(*_plain(*row))
        parts.append(strata)
        # Every format gives the estimate's notes (the real set re-scored on today's corpus...); those
        # already printed as warnings are not repeated.
        parts += [_text(note) for note in c.notes if note not in report.warnings]
    parts.append(_diagnostics_table(report))
    parts.append(_text(realism_line(report)))
    if report.rank_agreement is not None:
        a = report.rank_agreement
        table = Table(title=_text(f"rank agreement on {a.metric}: {agreement_line(a)}"))
        for column in AGREEMENT_HEADER:
            table.add_column(column, justify="left" if column in ("system", "tied on synthetic") else "right")
        for row in agreement_rows(a):
            table.add_row(*_plain(*row))
        parts += [table, _text(a.advice)]
    if report.answers is not None:
        grid = report.answers
        table = Table(title=_text(f"answers against evidence in the top {grid.k}"))
        table.add_column("cell")
        table.add_column("queries", justify="right")
        for cell, count in grid.counts.items():
            table.add_row(*_plain(cell, str(count)))
        parts += [table, _text(f"verdict: {grid.verdict}", style="bold")]
    return Group(*parts)


def comparison_table(report: ComparisonReport) -> RenderableType:
    """The headline, then one row per slice: means, difference with its interval, p, significance."""
    table = Table(
        title=_text(f"{report.name_b} against {report.name_a}: {report.metric} ({report.test} test)")
    )
    for column in ("slice", "n", report.name_a, report.name_b, "difference", "CI", "p", "significant"):
        table.add_column(_text(column), justify="left" if column == "slice" else "right")
    for r in report.rows:
        table.add_row(
            _text(r.label), str(r.n), figure(r.mean_a, 3), figure(r.mean_b, 3), signed(r.difference, 3),
            ci_text(r.interval, signed_values=True, digits=3), figure(r.p_value, 4),
            "yes" if r.significant else ("-" if r.note else "no"),
        )  # fmt: skip
    table.caption = _text(f"{report.test} test, alpha {report.alpha:g}; {report.unpaired_text}")
    return Group(_text(report.headline, style="bold"), table)


def _gap_table(title: str, first: str, gaps: Sequence[SliceGap], skip: int) -> Table:
    table = Table(title=_text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(first)
    for column, width in _GAP_COLUMNS:
        table.add_column(column, justify="right", min_width=width)
    for gap, row in zip(gaps, gap_rows(gaps), strict=True):
        cells = [row[1], *row[2:]] if skip else [row[0], *row[2:]]
        cells[-1] = cells[-1].replace(" to ", "..")
        table.add_row(*_plain(*cells), style="dim" if gap.n_real == 0 else None)
    return table


def _diagnostics_table(report: CalibrationReport) -> Table:
    table = Table(title="why the sets differ", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("")
    table.add_column("real", justify="right")
    table.add_column("synthetic", justify="right")
    for row in diagnostics_rows(report):
        table.add_row(*_plain(*row))
    if report.diagnostics.overlap_skipped:
        table.caption = _text(f"overlap skipped: {report.diagnostics.overlap_skipped}")
    return table


def _plain(*cells: str) -> list[Text]:
    """Cells as Text: slice values, system names and notes come from user files, never markup."""
    return [_text(cell) for cell in cells]


def _text(value: str, style: str = "") -> Text:
    """Text from data, never markup, its control characters escaped (``Text`` would drop ``\\r`` and
    ``\\x07`` unseen and send an ESC sequence to the terminal raw)."""
    return Text(printable(value), style=style)

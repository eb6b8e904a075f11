"""Rendering a calibration or comparison report: rich table, Markdown, JSON, self-contained HTML.

``FORMATS`` maps each text format to its renderer; the table format returns rich renderables that the
CLI prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.comparison import ComparisonReport
from realrecall.calibrate.report.html import HistoryRows, render_html
from realrecall.calibrate.report.json import (
    comparison_to_dict,
    render_comparison_json,
    render_json,
    report_to_dict,
)
from realrecall.calibrate.report.markdown import render_comparison_markdown, render_markdown
from realrecall.calibrate.report.table import comparison_table, report_table
from realrecall.errors import InputError
from realrecall.files import atomic_write_text

__all__ = [
    "COMPARISON_FORMATS",
    "FORMATS",
    "comparison_table",
    "comparison_to_dict",
    "render",
    "render_comparison",
    "report_table",
    "report_to_dict",
    "write_report",
]

FORMATS: Mapping[str, Callable[[CalibrationReport], str]] = {
    "markdown": render_markdown,
    "json": render_json,
    "html": render_html,
}
COMPARISON_FORMATS: Mapping[str, Callable[[ComparisonReport], str]] = {
    "markdown": render_comparison_markdown,
    "json": render_comparison_json,
}


def render(report: CalibrationReport, format: str, *, history: HistoryRows = ()) -> str:
    """The report as text in ``format`` (one of ``FORMATS``).

    ``history`` (the scheduled job's history rows, e.g. ``load_history(path)``) adds a trend chart to
    the HTML report; the text formats leave trends to ``realrecall pipeline history``.
    """
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}", hint=f"choose from table, {', '.join(FORMATS)}")
    if format == "html":
        return render_html(report, history=history)
    return FORMATS[format](report)


def render_comparison(report: ComparisonReport, format: str) -> str:
    """The comparison as text in ``format`` (one of ``COMPARISON_FORMATS``)."""
    if format not in COMPARISON_FORMATS:
        raise InputError(
            f"unknown format {format!r}", hint=f"choose from table, {', '.join(COMPARISON_FORMATS)}"
        )
    return COMPARISON_FORMATS[format](report)


def write_report(text: str, path: str | Path) -> None:
    """Write a rendered report atomically (readers see the old file or the whole new one)."""
    atomic_write_text(path, text)

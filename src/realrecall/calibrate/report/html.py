"""The calibration report as one self-contained HTML file: inline CSS and SVG, no script, no network.

Sections: the headline; recall@k for synthetic and real with interval bands; the gap per slice; the
overlap (and question-length) distributions of both sets; the per-slice table; the calibrated estimate,
rank agreement, answer grid and gates when present.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, Protocol

from realrecall.calibrate.agreement import RankAgreement
from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.report.judge import label_agreement_figures
from realrecall.calibrate.report.page import page, table
from realrecall.calibrate.report.svg import (
    Bar,
    Point,
    Series,
    confusion_matrix,
    gap_bars,
    histograms,
    line_chart,
    nice_step,
    scatter,
)
from realrecall.calibrate.report.text import (
    AGREEMENT_HEADER,
    CALIBRATED_HEADER,
    REALISM_HEADER,
    agreement_line,
    agreement_rows,
    calibrated_rows,
    diagnostics_rows,
    gap_rows,
    realism_line,
    realism_rows,
)

__all__ = ["REAL_COLOUR", "SYNTHETIC_COLOUR", "HistoryRows", "render_html"]


class _Row(Protocol):
    """A history row as ``realrecall.pipeline.history.HistoryRow`` is one (calibrate does not import it)."""

    def to_dict(self) -> dict[str, Any]: ...


HistoryRows = Sequence[Mapping[str, Any] | _Row]
"""The scheduled job's history rows: typed (``load_history``) or as their JSON objects."""

REAL_COLOUR = "#1c7ed6"
SYNTHETIC_COLOUR = "#e8590c"
_RECALL_AT = re.compile(r"^recall@(\d+)$")


def render_html(report: CalibrationReport, *, history: HistoryRows = ()) -> str:
    """One HTML document; the headline is the page title and its first visible line.

    ``history``: rows of the scheduled job's history file; with two or more, a trend chart of the
    real, synthetic and calibrated figures over runs follows the headline.
    """
    head = escape(report.headline.text)
    body = [
        f'<p class="headline" id="headline">{head}</p>',
        f"<h1>Calibration of {escape(report.retriever_name or report.retriever)}</h1>",
        *(
            [f'<p class="note">{escape(report.retriever)}</p>']
            if report.retriever_name and report.retriever != report.retriever_name
            else []
        ),
        *(f'<p class="warning">warning: {escape(w)}</p>' for w in report.warnings),
        *(
            f'<p class="{"gate-passed" if g.passed else "gate-failed"}">gate '
            f"{'passed' if g.passed else 'failed'}: {escape(g.message)}</p>"
            for g in report.gates
        ),
        *_judge(report),
        *_trend(history),
        '<div class="charts">',
        _figure(_curve(report)),
        _figure(_gaps(report)),
        *(_figure(chart) for chart in _distributions(report)),
        "</div>",
        f"<h2>{escape(report.metric)} by slice</h2>",
        _slicetable(report),
        "<h2>Every metric, all queries</h2>",
        _overalltable(report),
        *_other_metrics(report),
        *_calibrated(report),
        "<h2>Why the sets differ</h2>",
        table(["", "real", "synthetic"], diagnostics_rows(report)),
        f"<p>{escape(realism_line(report))}</p>",
        *([table(REALISM_HEADER, realism_rows(report))] if realism_rows(report) else []),
        *_agreement(report),
        *_answers(report),
        f'<p class="note">Seed {report.seed}, {report.n_resamples} bootstrap resamples, '
        f"{report.confidence * 100:g}% intervals.</p>",
    ]
    return page(report.headline.text, body)


def _trend(rows: HistoryRows) -> list[str]:
    if len(rows) < 2:
        return []
    history = [row if isinstance(row, Mapping) else row.to_dict() for row in rows]
    figures = [row.get("figures", {}) for row in history]
    metric = next((f.get("metric") for f in reversed(figures) if f.get("metric")), "figure")

    def values(name: str) -> list[float]:
        return [math.nan if f.get(name) is None else float(f[name]) for f in figures]

    bands = [f.get("real_ci") or (None, None) for f in figures]
    lows = [math.nan if low is None else float(low) for low, _ in bands]
    highs = [math.nan if high is None else float(high) for _, high in bands]
    series = [
        Series("real", REAL_COLOUR, values("real"), lows, highs),
        Series("synthetic", SYNTHETIC_COLOUR, values("synthetic")),
        Series("calibrated", "#5f3dc4", values("calibrated")),
    ]
    labels = [str(row.get("time", ""))[:10] for row in history]
    chart = line_chart(labels, [s for s in series if any(not math.isnan(v) for v in s.values)],
                       title=f"{metric} over scheduled runs (band: real CI)")  # fmt: skip
    return [f"<h2>{escape(str(metric))} over runs</h2>", f'<div class="charts">{_figure(chart)}</div>']


def _curve(report: CalibrationReport) -> str:
    ks = sorted(
        (int(m.group(1)), name) for name in report.metrics if (m := _RECALL_AT.match(name)) is not None
    )
    if not ks:
        return '<p class="note">No recall@k metric in the results: no curve.</p>'
    rows = [report.overall(name) for _, name in ks]
    series = [
        Series("synthetic", SYNTHETIC_COLOUR, [g.synthetic.value for g in rows],
               [g.synthetic.interval.low for g in rows], [g.synthetic.interval.high for g in rows]),
        Series("real", REAL_COLOUR, [g.real.value for g in rows],
               [g.real.interval.low for g in rows], [g.real.interval.high for g in rows]),
    ]  # fmt: skip
    return line_chart([f"k={k}" for k, _ in ks], series, title="recall@k, synthetic vs real (bands: CI)")


def _gaps(report: CalibrationReport) -> str:
    bars = [
        Bar(g.label, g.gap, g.gap_interval.low, g.gap_interval.high)
        for g in (report.overall(), *report.slices())
    ]
    return gap_bars(bars, title=f"gap on {report.metric} (synthetic - real), with CI")


def _distributions(report: CalibrationReport) -> list[str]:
    real, synthetic = report.diagnostics.real, report.diagnostics.synthetic
    charts = []
    if real.overlap is not None and synthetic.overlap is not None:
        charts.append(
            histograms(
                [Series("real", REAL_COLOUR, real.overlap.values),
                 Series("synthetic", SYNTHETIC_COLOUR, synthetic.overlap.values)],
                title="lexical overlap with the gold passage", low=0.0, high=1.0,
                x_label="overlap (share of the question's words)",
            )
        )  # fmt: skip
    else:
        reason = report.diagnostics.overlap_skipped or "no corpus"
        charts.append(f'<p class="note">Overlap distributions skipped: {escape(reason)}.</p>')
    longest = max([1.0, *real.question_words.values, *synthetic.question_words.values])
    # Bins of a round width (1, 2, 5, 10... words), at most ten, so every bin edge is a round number.
    width = max(1.0, nice_step(longest, 10))
    bins = max(1, math.ceil(longest / width - 1e-9))
    charts.append(
        histograms(
            [Series("real", REAL_COLOUR, real.question_words.values),
             Series("synthetic", SYNTHETIC_COLOUR, synthetic.question_words.values)],
            title="question length", low=0.0, high=bins * width, bins=bins, x_label="words",
        )
    )  # fmt: skip
    return charts


def _slicetable(report: CalibrationReport) -> str:
    slices = report.slices()
    if not slices:
        return '<p class="note">No slice fields in the per-query records.</p>'
    rows = [[row[0], *row[2:], "; ".join(g.notes)] for g, row in zip(slices, gap_rows(slices), strict=True)]
    header = ["slice", "real", "CI", "n real", "synthetic", "CI", "n synthetic", "gap", "gap CI", "notes"]
    return table(header, rows, empty=[g.n_real == 0 for g in slices], css_class="slices")


def _overalltable(report: CalibrationReport) -> str:
    overall = [g for g in report.gaps if g.field is None]
    header = ["metric", "real", "CI", "n real", "synthetic", "CI", "n synthetic", "gap", "gap CI"]
    return table(header, [row[1:] for row in gap_rows(overall)])


def _other_metrics(report: CalibrationReport) -> list[str]:
    other = [g for g in report.gaps if g.field is not None and g.metric != report.metric]
    if not other:
        return []
    header = ["slice", "metric", "real", "CI", "n real", "synthetic", "CI", "n synthetic", "gap", "gap CI"]
    return [
        "<details><summary>Every other metric by slice</summary>",
        table(header, gap_rows(other), empty=[g.n_real == 0 for g in other]),
        "</details>",
    ]


def _calibrated(report: CalibrationReport) -> list[str]:
    c = report.calibrated
    if c is None:
        return []
    when = f"of {c.calibrated_on[:10]}" if c.calibrated_on else "undated"
    text = f"{c.text} Real set {when}" + (f", {c.age_text}" if c.age_text else "") + "."
    header = [c.by or "stratum", *CALIBRATED_HEADER]
    notes = [f'<p class="warning">{escape(n)}</p>' for n in c.notes]
    return [
        "<h2>Calibrated estimate</h2>",
        f"<p>{escape(text)}</p>",
        table(header, calibrated_rows(c)),
        *notes,
    ]


def _judge(report: CalibrationReport) -> list[str]:
    a = report.judge
    if a is None:
        return []
    chart = confusion_matrix(
        [str(g) for g in a.grades], a.confusion, title="grades: people (rows) vs judge (columns)",
        row_label="human grade", column_label="judge grade",
    )  # fmt: skip
    return [
        "<h2>Judge labels</h2>",
        f'<p class="warning">{escape(a.summary)}</p>',
        f'<div class="charts">{_figure(chart)}</div>',
        table(["figure", "value"], label_agreement_figures(a)),
    ]


def _agreement(report: CalibrationReport) -> list[str]:
    a = report.rank_agreement
    if a is None:
        return []
    return [
        f"<h2>Rank agreement on {escape(a.metric)}</h2>",
        f"<p>{escape(agreement_line(a))} {escape(a.advice)}</p>",
        f'<div class="charts">{_figure(_agreement_chart(a))}</div>',
        table(AGREEMENT_HEADER, agreement_rows(a)),
    ]


def _agreement_chart(a: RankAgreement) -> str:
    floor = "" if a.real_split_half is None else f", real split-half floor {a.real_split_half:.2f}"
    return scatter(
        [Point(s.name, s.real, s.synthetic) for s in a.systems],
        title=f"{a.metric} per retriever: real vs synthetic (tau {a.tau:.2f}{floor})",
        x_label="real", y_label="synthetic",
    )  # fmt: skip


def _answers(report: CalibrationReport) -> list[str]:
    grid = report.answers
    if grid is None:
        return []
    rows = [[cell, str(count)] for cell, count in grid.counts.items()]
    return [
        f"<h2>Answers against evidence in the top {grid.k}</h2>",
        table(["cell", "queries"], rows),
        f"<p><strong>Verdict:</strong> {escape(grid.verdict)}.</p>",
    ]


def _figure(content: str) -> str:
    return f"<figure>{content}</figure>"

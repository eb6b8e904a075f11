"""A labelling plan as plain text, JSON, or an HTML page with its width-against-questions curve."""

from __future__ import annotations

import json
from html import escape

from realrecall.calibrate.plan import LabellingPlan
from realrecall.calibrate.report.page import page, table
from realrecall.calibrate.report.svg import Series, line_chart

__all__ = ["plan_chart", "render_plan"]


def render_plan(made: LabellingPlan, format: str) -> str:
    """``made`` as ``table`` (plain text), ``json`` or ``html``."""
    if format == "json":
        return json.dumps(made.to_dict(), indent=2, ensure_ascii=False) + "\n"
    rows = [
        [str(s.value), f"{s.weight:.3f}", str(s.n_now), str(s.n_more), str(s.n_total),
         "-" if s.mean != s.mean else f"{s.mean:.3f}", f"{s.spread:.3f}"]
        for s in made.strata
    ]  # fmt: skip
    header = [made.by or "stratum", "weight", "now", "more", "total", "mean", "spread"]
    if made.n_first < made.n_more:  # a rough plan: the first round's questions, then plan again
        header.insert(4, "first")
        for row, stratum in zip(rows, made.strata, strict=True):
            row.insert(4, str(stratum.first_round))
    if format == "html":
        body = [
            f'<p class="headline">{escape(made.text)}</p>',
            *(f'<p class="warning">warning: {escape(w)}</p>' for w in made.warnings),
            f'<div class="charts"><figure>{plan_chart(made)}</figure></div>',
            table(header, rows),
        ]
        return page(made.text, body)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [made.text, *(f"warning: {w}" for w in made.warnings), ""]
    lines.append(
        "  ".join(
            h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    for row in rows:
        lines.append(
            "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return "\n".join(lines) + "\n"


def plan_chart(made: LabellingPlan) -> str:
    """The predicted interval width against the number of questions labelled, with the target."""
    labels = [str(n) for n, _ in made.curve]
    widths = [w for _, w in made.curve]
    series = [
        Series("predicted width", "#1c7ed6", widths),
        Series("target", "#e8590c", [made.target_width] * len(widths)),
    ]
    return line_chart(labels, series, title=f"interval width of {made.metric} against questions labelled")

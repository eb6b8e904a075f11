"""The agreement of two query sets as plain text, JSON and a self-contained HTML page."""

from __future__ import annotations

import json
import math
from html import escape

from realrecall.calibrate.report.page import page, table
from realrecall.calibrate.report.svg import Point, scatter
from realrecall.calibrate.set_agreement import SetAgreement
from realrecall.printable import printable

__all__ = ["SET_AGREEMENT_FORMATS", "render_set_agreement"]

SET_AGREEMENT_FORMATS = ("table", "json", "html")


def render_set_agreement(agreement: SetAgreement, format: str) -> str:
    """``agreement`` as ``table`` (plain text), ``json`` or ``html``; control characters from data
    (system names) written as escapes (``realrecall.printable``)."""
    if format == "json":
        return printable(json.dumps(agreement.to_dict(), indent=2, ensure_ascii=False) + "\n")
    if format == "html":
        return _html(agreement)
    return printable(_text(agreement))


def headline(agreement: SetAgreement) -> str:
    a = agreement
    return (
        f"Kendall tau {a.tau:.4f} ({_ci(a)}) between {a.n_systems} systems' {a.measure} on A "
        f"({a.n_queries_a} queries) and B ({a.n_queries_b})"
    )


def _text(agreement: SetAgreement) -> str:
    a = agreement
    half = a.split_half_ci
    rows = [
        f"tau             {a.tau:.4f}  ({_ci(a)}, p {a.tau_p_value:.2g})",
        f"split-half tau  {_figure(a.split_half_median)}  median of {a.n_splits} splits of A "
        + (f"({half.confidence * 100:g}% of them {half.low:.4f} to {half.high:.4f})" if half.defined else ""),
        f"pairs separated A {a.separated_a:.3f}, B {a.separated_b:.3f}, A at B's size "
        f"{a.separated_a_at_b_size:.3f} ({a.n_pairs} pairs, paired t-test at {a.alpha:g})",
        "",
        a.agreement_verdict,
        a.power_verdict,
        "",
    ]
    width = max(len(name) for name in a.systems)
    order = sorted(range(a.n_systems), key=lambda i: -a.means_a[i])
    rows.append(f"{'system'.ljust(width)}  {'A':>7}  {'B':>7}")
    rows += [f"{a.systems[i].ljust(width)}  {a.means_a[i]:7.4f}  {a.means_b[i]:7.4f}" for i in order]
    return headline(a) + "\n\n" + "\n".join(rows) + "\n"


def _html(agreement: SetAgreement) -> str:
    a = agreement
    points = [Point(name, x, y) for name, x, y in zip(a.systems, a.means_a, a.means_b, strict=True)]
    floor = "" if math.isnan(a.split_half_median) else f", split-half floor {a.split_half_median:.3f}"
    chart = scatter(
        points,
        title=f"{a.measure} per system: A vs B (tau {a.tau:.3f}{floor})",
        x_label=f"A ({a.n_queries_a} queries)",
        y_label=f"B ({a.n_queries_b} queries)",
    )
    order = sorted(range(a.n_systems), key=lambda i: -a.means_a[i])
    body = [
        f'<p class="headline">{escape(headline(a))}</p>',
        f"<p>{escape(a.agreement_verdict)}</p>",
        f"<p>{escape(a.power_verdict)}</p>",
        f'<div class="charts"><figure>{chart}</figure></div>',
        table(
            ["figure", "value"],
            [
                ["tau", f"{a.tau:.4f}"],
                ["tau CI", _ci(a)],
                ["split-half tau (median)", _figure(a.split_half_median)],
                ["pairs separated, A", f"{a.separated_a:.3f}"],
                ["pairs separated, B", f"{a.separated_b:.3f}"],
                ["pairs separated, A at B's size", f"{a.separated_a_at_b_size:.3f}"],
            ],
        ),
        table(
            ["system", "A", "B"],
            [[a.systems[i], f"{a.means_a[i]:.4f}", f"{a.means_b[i]:.4f}"] for i in order],
        ),
    ]
    return page(headline(a), body)


def _ci(agreement: SetAgreement) -> str:
    ci = agreement.tau_ci
    if not ci.defined:
        return "no interval"
    return f"{ci.confidence * 100:g}% CI {ci.low:.3f} to {ci.high:.3f}"


def _figure(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.4f}"

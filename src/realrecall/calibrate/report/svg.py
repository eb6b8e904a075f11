"""Small inline-SVG charts for the HTML reports: a curve with interval bands, gap bars, histograms, a
scatter of systems on two query sets, and a confusion matrix.

Hand-drawn so the report is one self-contained file: no script, no font, no network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Bar", "Point", "Series", "confusion_matrix", "gap_bars", "histograms", "line_chart", "scatter"]

_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


@dataclass(frozen=True)
class Series:
    """One line (with an optional band ``lows``..``highs``) or one histogram's values."""

    name: str
    colour: str
    values: Sequence[float]
    lows: Sequence[float] = ()
    highs: Sequence[float] = ()


@dataclass(frozen=True)
class Bar:
    """One slice's gap and its interval."""

    label: str
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Point:
    """One labelled point of a scatter (a system's figure on set A and on set B)."""

    label: str
    x: float
    y: float


def line_chart(x_labels: Sequence[str], series: Sequence[Series], *, title: str, width: int = 560,
               height: int = 300) -> str:  # fmt: skip
    """Lines over categorical x positions, y from 0 to 1, each with its shaded interval band."""
    left, right, top, bottom = 48, 16, 28, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    count = max(1, len(x_labels) - 1)

    def x(i: int) -> float:
        return left + plot_w * (i / count if len(x_labels) > 1 else 0.5)

    def y(v: float) -> float:
        return top + plot_h * (1.0 - min(1.0, max(0.0, v)))

    parts = [_open(width, height, title), _axes_y(left, top, plot_w, plot_h)]
    # About six labels fit; the last one (the latest run, the largest k) always shows, alone at its end.
    last = len(x_labels) - 1
    step = max(1, math.ceil(len(x_labels) / 6))
    for i, label in enumerate(x_labels):
        if i != last and (i % step or last - i < step):
            continue
        # The end labels align inwards so that long ones (dates) are not cut at the edge.
        anchor = "middle" if last == 0 else "start" if i == 0 else "end" if i == last else "middle"
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 18}" text-anchor="{anchor}" {_FONT}>'
                     f"{escape(label)}</text>")  # fmt: skip
    for s in series:
        points = [(x(i), v) for i, v in enumerate(s.values) if not math.isnan(v)]
        if s.lows and s.highs:
            band = [(x(i), lo, hi) for i, (lo, hi) in enumerate(zip(s.lows, s.highs, strict=True))
                    if not (math.isnan(lo) or math.isnan(hi))]  # fmt: skip
            if band:
                outline = [f"{px:.1f},{y(hi):.1f}" for px, _, hi in band]
                outline += [f"{px:.1f},{y(lo):.1f}" for px, lo, _ in reversed(band)]
                parts.append(f'<polygon class="band" points="{" ".join(outline)}" fill="{s.colour}" '
                             'fill-opacity="0.18" stroke="none"/>')  # fmt: skip
        if points:
            path = " ".join(f"{px:.1f},{y(v):.1f}" for px, v in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{s.colour}" stroke-width="2.5"/>')
            parts += [f'<circle cx="{px:.1f}" cy="{y(v):.1f}" r="3.5" fill="{s.colour}">'
                      f"<title>{escape(s.name)} {v:.3f}</title></circle>" for px, v in points]  # fmt: skip
    # Curves rise with k, so the lower right is the emptiest corner.
    parts.append(_legend(series, left + plot_w - 110, top + plot_h - 16 * len(series) - 8))
    return "".join(parts) + "</svg>"


def gap_bars(bars: Sequence[Bar], *, title: str, width: int = 560) -> str:
    """Horizontal bars of the gap (synthetic minus real) per slice, centred on zero, with CI whiskers."""
    row, label_w, top = 26, 150, 28
    height = top + row * max(1, len(bars)) + 30
    plot_w = width - label_w - 20
    finite = [abs(v) for b in bars for v in (b.value, b.low, b.high) if not math.isnan(v)]
    # The axis ends at a round value, ticked every round step (as the histograms are), never at the
    # widest whisker's own value (-0.62 / +0.62).
    step = nice_step(max([0.1, *finite]), 2)
    extent = step * math.ceil(max([0.1, *finite]) / step - 1e-9)

    def x(v: float) -> float:
        return label_w + plot_w * (0.5 + 0.5 * v / extent)

    parts = [_open(width, height, title)]
    parts.append(f'<line x1="{x(0):.1f}" y1="{top - 4}" x2="{x(0):.1f}" y2="{height - 26}" stroke="#555"/>')
    for i, b in enumerate(bars):
        cy = top + row * i + row / 2
        parts.append(
            f'<text x="{label_w - 8}" y="{cy + 4:.1f}" text-anchor="end" {_FONT}>{escape(b.label)}</text>'
        )
        if math.isnan(b.value):
            parts.append(
                f'<text x="{x(0) + 6:.1f}" y="{cy + 4:.1f}" {_FONT} fill="#888">no gap (missing set)</text>'
            )
            continue
        colour = "#d9480f" if b.value > 0 else "#1c7ed6"
        x0, x1 = sorted((x(0), x(b.value)))
        parts.append(f'<rect class="gap-bar" x="{x0:.1f}" y="{cy - 8:.1f}" width="{max(1.0, x1 - x0):.1f}" '
                     f'height="16" fill="{colour}" fill-opacity="0.75"><title>{escape(b.label)} gap '
                     f"{b.value:+.3f}</title></rect>")  # fmt: skip
        if not (math.isnan(b.low) or math.isnan(b.high)):
            parts.append(f'<line x1="{x(b.low):.1f}" y1="{cy:.1f}" x2="{x(b.high):.1f}" y2="{cy:.1f}" '
                         'stroke="#222" stroke-width="1.5"/>')  # fmt: skip
    for v in nice_ticks(-extent, extent, round(2 * extent / step)):
        label = "0" if v == 0 else f"{v:+g}"
        parts.append(f'<text x="{x(v):.1f}" y="{height - 8}" text-anchor="middle" {_FONT}>{label}</text>')
    return "".join(parts) + "</svg>"


def nice_step(span: float, count: int = 5) -> float:
    """The round step (1, 2 or 5 times a power of ten) that parts ``span`` in at most about ``count``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    power = 10.0 ** math.floor(math.log10(span / count))
    return next(m * power for m in (1, 2, 5, 10) if span / (m * power) <= count)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Axis ticks at round values (multiples of :func:`nice_step`) from ``low`` to ``high``."""
    step = nice_step(high - low, count)
    digits = max(0, -math.floor(math.log10(step)))
    first = math.ceil(low / step - 1e-9)
    ticks = []
    for n in range(first, first + count * 3):
        value = round(n * step, digits)
        if value > high + step * 1e-9:
            break
        ticks.append(value)
    return ticks


def histograms(series: Sequence[Series], *, title: str, low: float, high: float, bins: int = 10,
               x_label: str = "", width: int = 560, height: int = 240) -> str:  # fmt: skip
    """Overlaid histograms (share of each set per bin) of values between ``low`` and ``high``."""
    left, right, top, bottom = 48, 16, 28, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    step = (high - low) / bins
    shares: list[list[float]] = []
    for s in series:
        counts = [0] * bins
        for v in s.values:
            counts[min(bins - 1, max(0, int((v - low) / step)))] += 1
        total = max(1, len(s.values))
        shares.append([c / total for c in counts])
    peak = max([0.05, *(v for row in shares for v in row)])
    bar_w = plot_w / bins / max(1, len(series))
    parts = [_open(width, height, title), _axes_y(left, top, plot_w, plot_h, peak)]
    for j, (s, row) in enumerate(zip(series, shares, strict=True)):
        for i, share in enumerate(row):
            h = plot_h * share / peak
            bx = left + plot_w * i / bins + bar_w * j
            parts.append(
                f'<rect class="hist-bar" x="{bx:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 1:.1f}" '
                f'height="{h:.1f}" fill="{s.colour}" fill-opacity="0.8"/>'
            )
    for tick in nice_ticks(low, high):
        parts.append(f'<text x="{left + plot_w * (tick - low) / (high - low):.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle" {_FONT}>{tick:g}</text>')  # fmt: skip
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" {_FONT}>'
                 f"{escape(x_label)}</text>")  # fmt: skip
    parts.append(_legend(series, width - right - 200, 4, across=True))
    return "".join(parts) + "</svg>"


def scatter(points: Sequence[Point], *, title: str, x_label: str, y_label: str, width: int = 560,
            height: int = 420) -> str:  # fmt: skip
    """Points over a shared square range with the line y = x: points on it score alike on both axes."""
    left, right, top, bottom = 56, 16, 28, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    finite = [v for p in points for v in (p.x, p.y) if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    margin = max(0.02, (high - low) * 0.05)
    low, high = low - margin, high + margin

    def x(v: float) -> float:
        return left + plot_w * (v - low) / (high - low)

    def y(v: float) -> float:
        return top + plot_h * (1.0 - (v - low) / (high - low))

    parts = [_open(width, height, title)]
    for i in range(5):
        value = low + (high - low) * i / 4
        parts.append(f'<line x1="{left}" y1="{y(value):.1f}" x2="{left + plot_w}" y2="{y(value):.1f}" '
                     'stroke="#e5e5e5"/>')  # fmt: skip
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end" {_FONT}>'
                     f"{value:.2f}</text>")  # fmt: skip
        parts.append(f'<text x="{x(value):.1f}" y="{top + plot_h + 16}" text-anchor="middle" {_FONT}>'
                     f"{value:.2f}</text>")  # fmt: skip
    parts.append(f'<line class="diagonal" x1="{x(low):.1f}" y1="{y(low):.1f}" x2="{x(high):.1f}" '
                 f'y2="{y(high):.1f}" stroke="#999" stroke-dasharray="4 3"/>')  # fmt: skip
    for p in points:
        if not (math.isfinite(p.x) and math.isfinite(p.y)):
            continue
        parts.append(f'<circle class="point" cx="{x(p.x):.1f}" cy="{y(p.y):.1f}" r="4" fill="#1c7ed6" '
                     f'fill-opacity="0.75"><title>{escape(p.label)}: {p.x:.3f}, {p.y:.3f}</title>'
                     "</circle>")  # fmt: skip
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" {_FONT}>'
                 f"{escape(x_label)}</text>")  # fmt: skip
    parts.append(f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" {_FONT} '
                 f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(y_label)}</text>')  # fmt: skip
    return "".join(parts) + "</svg>"


def confusion_matrix(labels: Sequence[str], counts: Sequence[Sequence[int]], *, title: str, row_label: str,
                     column_label: str, cell: int = 56) -> str:  # fmt: skip
    """A grid of counts, rows one labelling and columns the other, shaded by the share of the row."""
    left, top = 120, 64
    size = len(labels)
    width, height = left + cell * size + 16, top + cell * size + 16
    parts = [_open(width, height, title)]
    parts.append(f'<text x="{left + cell * size / 2:.1f}" y="38" text-anchor="middle" {_FONT}>'
                 f"{escape(column_label)}</text>")  # fmt: skip
    parts.append(f'<text x="8" y="{top - 8}" {_FONT}>{escape(row_label)}</text>')
    for j, label in enumerate(labels):
        parts.append(f'<text x="{left + cell * j + cell / 2:.1f}" y="{top - 8}" text-anchor="middle" '
                     f"{_FONT}>{escape(label)}</text>")  # fmt: skip
    for i, label in enumerate(labels):
        total = max(1, sum(counts[i]))
        cy = top + cell * i
        parts.append(f'<text x="{left - 8}" y="{cy + cell / 2 + 4:.1f}" text-anchor="end" {_FONT}>'
                     f"{escape(label)}</text>")  # fmt: skip
        for j in range(size):
            share = counts[i][j] / total
            colour = "#2b8a3e" if i == j else "#c92a2a"
            parts.append(f'<rect class="cell" x="{left + cell * j}" y="{cy}" width="{cell - 2}" '
                         f'height="{cell - 2}" fill="{colour}" fill-opacity="{0.08 + 0.8 * share:.2f}">'
                         f"<title>{escape(label)} / {escape(labels[j])}: {counts[i][j]}</title>"
                         "</rect>")  # fmt: skip
            parts.append(f'<text x="{left + cell * j + cell / 2 - 1:.1f}" y="{cy + cell / 2 + 4:.1f}" '
                         f'text-anchor="middle" {_FONT}>{counts[i][j]}</text>')  # fmt: skip
    return "".join(parts) + "</svg>"


def _open(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}"><title>{escape(title)}</title>'
            f'<text x="8" y="16" {_FONT} font-weight="600">{escape(title)}</text>')  # fmt: skip


def _axes_y(left: int, top: int, plot_w: float, plot_h: float, peak: float = 1.0) -> str:
    parts = []
    for i in range(5):
        value = peak * i / 4
        gy = top + plot_h * (1 - i / 4)
        parts.append(
            f'<line x1="{left}" y1="{gy:.1f}" x2="{left + plot_w:.1f}" y2="{gy:.1f}" stroke="#e5e5e5"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{gy + 4:.1f}" text-anchor="end" {_FONT}>{value:.2f}</text>')
    return "".join(parts)


def _legend(series: Sequence[Series], x: float, y: float, *, across: bool = False) -> str:
    parts = []
    for i, s in enumerate(series):
        lx, ly = (x + 100 * i, y) if across else (x, y + 16 * i)
        parts.append(f'<rect x="{lx:.1f}" y="{ly:.1f}" width="12" height="12" fill="{s.colour}"/>')
        parts.append(f'<text x="{lx + 18:.1f}" y="{ly + 10:.1f}" {_FONT}>{escape(s.name)}</text>')
    return "".join(parts)

"""The history of scheduled runs: one JSON line per run, so a drop is seen the day it happens."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import AppendLog, iter_jsonl

__all__ = ["HistoryTrend", "TrendRow", "append_history", "history_trend", "load_history"]

# A change of the quoted figure smaller than this is noise on any gold set a team can afford.
DROP_THRESHOLD = 0.02


def append_history(path: str | Path, row: Mapping[str, Any]) -> None:
    """Append one run's row (fsynced: a killed job never leaves a torn history)."""
    with AppendLog(path) as log:
        log.append(row)


def load_history(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a history file, oldest first; a missing file is an empty history.

    A row whose figures are not numbers (a hand edit, another tool's file) is an InputError naming
    its line: the trend and the HTML chart would otherwise fail on it, or draw it as a figure.
    """
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return []
    rows = []
    for number, record in iter_jsonl(p, what="history row"):
        _check_row(record, p, number)
        rows.append(record)
    return rows


_FIGURES = ("real", "synthetic", "calibrated", "gap")


def _check_row(row: Mapping[str, Any], path: Path, line: int) -> None:
    hint = "history files are written by `realrecall run`; fix or remove this line"
    if not isinstance(row.get("time", ""), str):
        raise InputError('"time" must be a string', path=path, line=line, hint=hint)
    figures = row.get("figures", {})
    if not isinstance(figures, Mapping):
        raise InputError('"figures" must be an object', path=path, line=line, hint=hint)
    if not isinstance(figures.get("metric", ""), str):
        raise InputError('"figures.metric" must be a string', path=path, line=line, hint=hint)
    for name in _FIGURES:
        value = figures.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
        ):
            raise InputError(
                f'"figures.{name}" must be a number or null, got {json.dumps(value)}',
                path=path,
                line=line,
                hint=hint,
            )


@dataclass(frozen=True)
class TrendRow:
    """One run in the trend; ``change`` is how far the quoted figure moved since the run before."""

    time: str
    metric: str
    real: float | None
    synthetic: float | None
    calibrated: float | None
    gap: float | None
    unchanged: bool
    change: float | None
    drop: bool


@dataclass(frozen=True)
class HistoryTrend:
    rows: tuple[TrendRow, ...]

    @property
    def drops(self) -> tuple[TrendRow, ...]:
        return tuple(row for row in self.rows if row.drop)


def history_trend(rows: Sequence[Mapping[str, Any]]) -> HistoryTrend:
    """The quoted figure of each run and its change since the run before, flagging drops."""
    trend: list[TrendRow] = []
    previous: float | None = None
    for row in rows:
        figures = row.get("figures", {})
        quoted = figures.get("real") if figures.get("real") is not None else figures.get("calibrated")
        change = None if quoted is None or previous is None else quoted - previous
        trend.append(
            TrendRow(
                time=str(row.get("time", "")),
                metric=str(figures.get("metric", "")),
                real=figures.get("real"),
                synthetic=figures.get("synthetic"),
                calibrated=figures.get("calibrated"),
                gap=figures.get("gap"),
                unchanged=bool(row.get("unchanged", False)),
                change=change,
                drop=change is not None and change < -DROP_THRESHOLD,
            )
        )
        previous = quoted if quoted is not None else previous
    return HistoryTrend(tuple(trend))

"""The history of scheduled runs: one JSON line per run, so a drop is seen the day it happens.

Each line is a :class:`HistoryRow`; ``HistoryRow.to_dict`` writes it and ``HistoryRow.from_dict``
reads it back, checking every field. Rows written by older versions lack some keys (for example
``figures.calibrated_stale``): those read as None, or as zero counts, so an old history still loads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from realrecall.errors import InputError
from realrecall.files import AppendLog, iter_jsonl

__all__ = [
    "GateRecord",
    "GenerationCounts",
    "HistoryFigures",
    "HistoryRow",
    "HistoryTrend",
    "TrendRow",
    "append_history",
    "history_trend",
    "load_history",
]

# A change of the quoted figure smaller than this is noise on any gold set a team can afford.
DROP_THRESHOLD = 0.02

_HINT = "history files are written by `realrecall run`; fix or remove this line"


class _Fields:
    """Reads one object of a history row, raising a one-line InputError that names the key."""

    def __init__(self, record: Any, where: str, path: Path | None, line: int | None) -> None:
        self.where, self.path, self.line = where, path, line
        if not isinstance(record, Mapping):
            self.fail("must be an object")
        self.record: Mapping[str, Any] = record

    def fail(self, what: str, key: str | None = None) -> NoReturn:
        name = ".".join(part for part in (self.where, key) if part)
        subject = f'"{name}"' if name else "the row"
        raise InputError(f"{subject} {what}", path=self.path, line=self.line, hint=_HINT)

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.record.get(key, default)
        if value is not None and not isinstance(value, str):
            self.fail("must be a string", key)
        return value

    def number(self, key: str) -> float | None:
        value = self.record.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(f"must be a number or null, got {json.dumps(value)}", key)
        return float(value)

    def count(self, key: str, default: int | None = None) -> int | None:
        value = self.record.get(key, default)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(f"must be a whole number, got {json.dumps(value)}", key)
        return value

    def flag(self, key: str, default: bool | None = None) -> bool | None:
        value = self.record.get(key, default)
        if value is not None and not isinstance(value, bool):
            self.fail(f"must be true or false, got {json.dumps(value)}", key)
        return value

    def nested(self, key: str, default: Any) -> Any:
        return self.record.get(key, default)


@dataclass(frozen=True)
class HistoryFigures:
    """The quoted figures of one run (``metric`` is the metric they are of); None: not computed."""

    metric: str = ""
    real: float | None = None
    real_ci: tuple[float, float] | None = None
    synthetic: float | None = None
    gap: float | None = None
    calibrated: float | None = None
    calibrated_on: str | None = None
    calibrated_stale: bool | None = None
    n_real: int | None = None
    n_synthetic: int | None = None
    drifted: bool | None = None
    """Recent traffic tested as drifted from the real set (None: no traffic given)."""
    drift_auc: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "real": self.real,
            "real_ci": None if self.real_ci is None else list(self.real_ci),
            "synthetic": self.synthetic,
            "gap": self.gap,
            "calibrated": self.calibrated,
            "calibrated_on": self.calibrated_on,
            "calibrated_stale": self.calibrated_stale,
            "n_real": self.n_real,
            "n_synthetic": self.n_synthetic,
            "drifted": self.drifted,
            "drift_auc": self.drift_auc,
        }

    @classmethod
    def from_dict(cls, record: Any, *, path: Path | None = None, line: int | None = None) -> HistoryFigures:
        fields = _Fields(record, "figures", path, line)
        return cls(
            metric=fields.text("metric", "") or "",
            real=fields.number("real"),
            real_ci=_interval(fields),
            synthetic=fields.number("synthetic"),
            gap=fields.number("gap"),
            calibrated=fields.number("calibrated"),
            calibrated_on=fields.text("calibrated_on"),
            calibrated_stale=fields.flag("calibrated_stale"),
            n_real=fields.count("n_real"),
            n_synthetic=fields.count("n_synthetic"),
            drifted=fields.flag("drifted"),
            drift_auc=fields.number("drift_auc"),
        )


def _interval(fields: _Fields) -> tuple[float, float] | None:
    value = fields.nested("real_ci", None)
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in value)
    ):
        fields.fail(f"must be [low, high] or null, got {json.dumps(value)}", "real_ci")
    return (float(value[0]), float(value[1]))


@dataclass(frozen=True)
class GenerationCounts:
    """What the run's generate step did: records added, kept and removed, requests and tokens."""

    added: int = 0
    kept: int = 0
    removed: int = 0
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "added": self.added,
            "kept": self.kept,
            "removed": self.removed,
            "requests": self.requests,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
        }

    @classmethod
    def from_dict(cls, record: Any, *, path: Path | None = None, line: int | None = None) -> GenerationCounts:
        fields = _Fields(record, "generation", path, line)
        names = ("added", "kept", "removed", "requests", "tokens_in", "tokens_out")
        return cls(**{name: fields.count(name, 0) or 0 for name in names})


@dataclass(frozen=True)
class GateRecord:
    """One quality gate of the run and whether it passed."""

    gate: str
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"gate": self.gate, "passed": self.passed}

    @classmethod
    def from_dict(cls, record: Any, *, path: Path | None = None, line: int | None = None) -> GateRecord:
        fields = _Fields(record, "gates[]", path, line)
        return cls(gate=fields.text("gate", "") or "", passed=bool(fields.flag("passed", False)))


@dataclass(frozen=True)
class HistoryRow:
    """One scheduled run, as one line of the history file.

    ``unchanged``: the run's fingerprint (inputs' hashes, generator, retriever, settings) equals the
    run before's and nothing was sent or changed. ``overall``: per gold set, its overall metrics.
    """

    time: str
    figures: HistoryFigures
    unchanged: bool = False
    fingerprint: str | None = None
    corpus_sha256: str | None = None
    prompt_sha256: str | None = None
    model: str | None = None
    retriever: str | None = None
    overall: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    generation: GenerationCounts = field(default_factory=GenerationCounts)
    gates: tuple[GateRecord, ...] = ()
    headline: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON line (keys and order as every version wrote them)."""
        return {
            "time": self.time,
            "unchanged": self.unchanged,
            "fingerprint": self.fingerprint,
            "corpus_sha256": self.corpus_sha256,
            "prompt_sha256": self.prompt_sha256,
            "model": self.model,
            "retriever": self.retriever,
            "figures": self.figures.to_dict(),
            "overall": {name: dict(metrics) for name, metrics in self.overall.items()},
            "generation": self.generation.to_dict(),
            "gates": [gate.to_dict() for gate in self.gates],
            "headline": self.headline,
        }

    @classmethod
    def from_dict(cls, record: Any, *, path: Path | None = None, line: int | None = None) -> HistoryRow:
        """A row read back, every field checked: a wrong one is an InputError naming it (and the line)."""
        fields = _Fields(record, "", path, line)
        if "time" not in fields.record:
            # Every version wrote the time: without it the row is another file's (a gold set given as
            # the history), which the table showed as one row of dashes per record.
            raise InputError(
                'not a history row: it has no "time"',
                path=path,
                line=line,
                hint="give the pipeline.toml or the history file `realrecall run` writes ([output] history)",
            )
        gates = fields.nested("gates", [])
        if not isinstance(gates, list):
            fields.fail("must be a list", "gates")
        return cls(
            time=fields.text("time", "") or "",
            figures=HistoryFigures.from_dict(fields.nested("figures", {}), path=path, line=line),
            unchanged=bool(fields.flag("unchanged", False)),
            fingerprint=fields.text("fingerprint"),
            corpus_sha256=fields.text("corpus_sha256"),
            prompt_sha256=fields.text("prompt_sha256"),
            model=fields.text("model"),
            retriever=fields.text("retriever"),
            overall=_overall(fields),
            generation=GenerationCounts.from_dict(fields.nested("generation", {}), path=path, line=line),
            gates=tuple(GateRecord.from_dict(gate, path=path, line=line) for gate in gates),
            headline=fields.text("headline"),
        )


def _overall(fields: _Fields) -> dict[str, dict[str, float | None]]:
    """Each gold set's overall metrics, as results.json had them (a figure not computed is null)."""
    value = fields.nested("overall", {})
    if not isinstance(value, Mapping):
        fields.fail("must be an object", "overall")
    overall: dict[str, dict[str, float | None]] = {}
    for name, metrics in value.items():
        inner = _Fields(metrics, f"overall.{name}", fields.path, fields.line)
        for metric, number in inner.record.items():
            if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
                inner.fail(f"must be a number or null, got {json.dumps(number)}", metric)
        overall[name] = dict(inner.record)
    return overall


def append_history(path: str | Path, row: HistoryRow) -> None:
    """Append one run's row (fsynced: a killed job never leaves a torn history)."""
    with AppendLog(path) as log:
        log.append(row.to_dict())


def load_history(path: str | Path) -> list[HistoryRow]:
    """Every row of a history file, oldest first; a missing file is an empty history.

    A row whose fields have the wrong type (a hand edit, another tool's file) is an InputError naming
    its line: the trend and the HTML chart would otherwise fail on it, or draw it as a figure.
    """
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return []
    return [
        HistoryRow.from_dict(record, path=p, line=number)
        for number, record in iter_jsonl(p, what="history row")
    ]


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


def history_trend(rows: Sequence[HistoryRow]) -> HistoryTrend:
    """The quoted figure of each run and its change since the run before, flagging drops."""
    trend: list[TrendRow] = []
    previous: float | None = None
    for row in rows:
        figures = row.figures
        quoted = figures.real if figures.real is not None else figures.calibrated
        change = None if quoted is None or previous is None else quoted - previous
        trend.append(
            TrendRow(
                time=row.time,
                metric=figures.metric,
                real=figures.real,
                synthetic=figures.synthetic,
                calibrated=figures.calibrated,
                gap=figures.gap,
                unchanged=row.unchanged,
                change=change,
                drop=change is not None and change < -DROP_THRESHOLD,
            )
        )
        previous = quoted if quoted is not None else previous
    return HistoryTrend(tuple(trend))

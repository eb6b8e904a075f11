"""What a run did, per stage (generation, judge): requests, retries, failures, tokens and cost."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "GenerateProgress",
    "GenerateSummary",
    "StageCounter",
    "StageSummary",
    "cost",
    "dropped_warning",
    "earlier_runs",
    "run_spend",
    "total_spend",
]


def cost(tokens_in: int, tokens_out: int, price_in: float | None, price_out: float | None) -> float | None:
    """Cost in the user's currency at prices per million tokens; None unless both prices are given."""
    if price_in is None or price_out is None:
        return None
    return (tokens_in * price_in + tokens_out * price_out) / 1_000_000


@dataclass(frozen=True)
class StageSummary:
    """One stage's figures. ``requests`` were sent; ``cached`` answers were read from the cache.

    ``retries`` are the client's own retries (429, 5xx, timeouts) beyond the first attempt of each
    request; ``regenerations`` are new questions asked because an answer was invalid or filtered out.
    Tokens count only answers received in this run (cached answers cost nothing now). ``dropped``
    counts the answers used (live or cached) that were made without a parameter the endpoint refused
    (``temperature``, ``max_tokens``, ``seed``), by parameter.
    """

    name: str
    requests: int = 0
    cached: int = 0
    retries: int = 0
    regenerations: int = 0
    failures: Mapping[str, int] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    dropped: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cached": self.cached,
            "retries": self.retries,
            "regenerations": self.regenerations,
            "failures": dict(sorted(self.failures.items())),
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": self.cost,
            "dropped_parameters": dict(sorted(self.dropped.items())),
        }


class StageCounter:
    """The running figures of one stage (mutable; frozen into a StageSummary at the end)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests = 0
        self.cached = 0
        self.retries = 0
        self.regenerations = 0
        self.failures: Counter[str] = Counter()
        self.tokens_in = 0
        self.tokens_out = 0
        self.dropped: Counter[str] = Counter()
        self.dropped_by_slot: dict[str, frozenset[str]] = {}

    def note_dropped(self, slot_key: str, dropped: frozenset[str]) -> None:
        """Note that an answer for ``slot_key`` was made without the refused parameters ``dropped``."""
        if not dropped:
            return
        self.dropped.update(dropped)
        self.dropped_by_slot[slot_key] = self.dropped_by_slot.get(slot_key, frozenset()) | dropped

    def freeze(self, price_in: float | None, price_out: float | None) -> StageSummary:
        return StageSummary(
            name=self.name,
            requests=self.requests,
            cached=self.cached,
            retries=self.retries,
            regenerations=self.regenerations,
            failures=dict(self.failures),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost=cost(self.tokens_in, self.tokens_out, price_in, price_out),
            dropped=dict(self.dropped),
        )


@dataclass(frozen=True)
class GenerateProgress:
    """Handed to the progress callback after each question slot is settled."""

    done: int
    total: int
    kept: int
    failed: int
    requests: int
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class GenerateSummary:
    """The outcome of ``generate``.

    ``planned`` question slots over ``chunks`` chunks; of the records now in the output, ``kept``
    were there before and ``added`` are new; ``removed`` records belonged to chunks deleted or changed
    (or to other parameters). ``filtered`` counts candidate questions rejected per filter (``overlap``,
    ``near_duplicate``, ``unanswerable``) and per invalid answer reason; ``shortfall`` maps a chunk id
    to how many of its questions are missing once the retry budget was spent or the endpoint failed.
    ``generator`` describes what wrote the questions (backend, model, prompt hashes, parameters, style
    example ids): the description that is part of every slot key, as the summary file records it.
    """

    output_path: Path
    backend: str
    chunks: int
    planned: int
    added: int
    kept: int
    removed: int
    filtered: Mapping[str, int]
    shortfall: Mapping[str, int]
    stages: tuple[StageSummary, ...]
    failures_path: Path
    cache_path: Path
    summary_path: Path
    style_example_ids: tuple[str, ...] = ()
    elapsed: float = 0.0
    warnings: tuple[str, ...] = ()  # e.g. the corpus-order rewrite left for the next run (no room)
    generator: Mapping[str, Any] = field(default_factory=dict)
    screened: Mapping[str, str] = field(default_factory=dict)
    """Chunk id -> why the chunk was skipped before any question (``generate.screening``)."""
    pairs: Mapping[str, Any] = field(default_factory=dict)
    """Questions over two chunks (``multi_chunk``): drawn, planned, made and why not
    (``generate.pairs.pair_counts``); empty without ``multi_chunk``."""

    @property
    def total(self) -> int:
        """Records in the output after the run."""
        return self.kept + self.added

    @property
    def missing(self) -> int:
        return sum(self.shortfall.values())

    @property
    def screened_reasons(self) -> dict[str, int]:
        """How many chunks were skipped, by reason (the model screen's reasons counted as one)."""
        return dict(sorted(Counter(reason.split(":")[0] for reason in self.screened.values()).items()))

    def stage(self, name: str) -> StageSummary | None:
        return next((stage for stage in self.stages if stage.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "generator": dict(self.generator),
            "output": str(self.output_path),
            "backend": self.backend,
            "chunks": self.chunks,
            "planned": self.planned,
            "records": self.total,
            "added": self.added,
            "kept": self.kept,
            "removed": self.removed,
            "missing": self.missing,
            "filtered": dict(sorted(self.filtered.items())),
            "screened": self.screened_reasons,
            "screened_chunks": dict(self.screened),
            "shortfall_by_chunk": dict(sorted(self.shortfall.items())),
            "stages": {stage.name: stage.to_dict() for stage in self.stages},
            "style_example_ids": list(self.style_example_ids),
            "elapsed_seconds": round(self.elapsed, 3),
            "warnings": list(self.warnings),
            **({"pairs": dict(self.pairs)} if self.pairs else {}),
        }


def dropped_warning(counters: Iterable[StageCounter]) -> str | None:
    """What the endpoint refused and how many answers were made without it, or None (nothing refused)."""
    dropped: Counter[str] = Counter()
    for counter in counters:
        dropped.update(counter.dropped)
    if not dropped:
        return None
    named = ", ".join(
        f"{name} ({count} answer{'' if count == 1 else 's'})" for name, count in sorted(dropped.items())
    )
    return (
        f"the endpoint refused {named}: those answers were made without it, with the endpoint's own "
        "default; their provenance records what was really sent (dropped_parameters, temperature null "
        "when temperature was refused)"
    )


_SPEND_FIELDS = ("requests", "tokens_in", "tokens_out")


def run_spend(stages: Sequence[StageSummary], created: str) -> dict[str, Any]:
    """One run's spend, as the summary file's ``runs`` keeps it: when, requests, tokens, cost, by stage."""
    by_stage = {
        stage.name: {**{name: getattr(stage, name) for name in _SPEND_FIELDS}, "cost": stage.cost}
        for stage in stages
    }
    return {"created": created, **_summed(by_stage.values()), "stages": by_stage}


def earlier_runs(summary_path: Path) -> list[dict[str, Any]]:
    """The spend of the runs an existing summary file records (none when there is no readable file).

    A file written before runs were kept stands for one run: its own stages.
    """
    try:
        record = json.loads(summary_path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    if not isinstance(record, dict):
        return []
    runs = record.get("runs")
    if isinstance(runs, list):
        return [run for run in runs if isinstance(run, dict)]
    stages = record.get("stages")
    if not isinstance(stages, dict):
        return []
    by_stage = {
        str(name): {
            **{field_name: _count(stage.get(field_name)) for field_name in _SPEND_FIELDS},
            "cost": _price(stage.get("cost")),
        }
        for name, stage in stages.items()
        if isinstance(stage, dict)
    }
    created = record.get("created")
    return [
        {
            "created": created if isinstance(created, str) else None,
            **_summed(by_stage.values()),
            "stages": by_stage,
        }
    ]


def total_spend(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The spend of ``runs`` together: their number, requests, tokens and cost."""
    return {"runs": len(runs), **_summed(runs)}


def _summed(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Requests and tokens added up; the cost too, None when a part that sent something has no price
    (a part that sent nothing cost nothing, priced or not)."""
    parts = list(parts)
    totals: dict[str, Any] = {name: sum(_count(part.get(name)) for part in parts) for name in _SPEND_FIELDS}
    total_cost: float | None = 0.0
    for part in parts:
        price = _price(part.get("cost"))
        if price is not None and total_cost is not None:
            total_cost += price
        elif any(_count(part.get(name)) for name in _SPEND_FIELDS):
            total_cost = None
    totals["cost"] = total_cost
    return totals


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _price(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

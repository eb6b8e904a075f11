"""What a run did, per stage (generation, judge): requests, retries, failures, tokens and cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GenerateProgress", "GenerateSummary", "StageCounter", "StageSummary", "cost"]


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
    Tokens count only answers received in this run (cached answers cost nothing now).
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
        }

"""``JudgeSettings``: every option of the LLM judge, declared once.

``realrecall judge``'s options and the keyword arguments of ``curate.judge.judge_pool`` are its fields
(``realrecall.settings`` derives the command line's options from the declarations below), the Batch
API's (``BatchSettings``: ``batch``, ``poll_interval``, ``batch_timeout``) among them. Kept free of
heavy imports: the CLI reads it at start-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated

from realrecall.errors import SettingError
from realrecall.settings import BatchSettings, Flag, StageSettings

__all__ = ["JudgeSettings"]


@dataclass(frozen=True, kw_only=True)
class JudgeSettings(StageSettings):
    """How the judge grades the pooled pairs: its model, the pool's depth, the requests and their cost."""

    model: Annotated[str | None, "Model name at the OpenAI-compatible endpoint."] = None
    k: Annotated[int, "Pool depth: each retriever's top k."] = 10
    concurrency: Annotated[int, "Requests in flight at once."] = 8
    price_in: Annotated[float | None, "Price per million input tokens (cost summary)."] = None
    price_out: Annotated[float | None, "Price per million output tokens."] = None
    request_timeout: Annotated[float, "Seconds to wait for one answer.", Flag("--timeout")] = 60.0
    batch_settings: BatchSettings = field(default_factory=BatchSettings)
    """Whether the pairs are graded through the Batch API and how it is polled; set by its fields'
    names (``batch``, ``poll_interval``, ``batch_timeout``); ``judge_pool`` makes the run's
    ``BatchOptions`` from them."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.model is not None and not self.model.strip():
            raise SettingError("model", "must name a model, got ''", hint="e.g. gpt-4o-mini")
        for name, example in (("k", 10), ("concurrency", 8)):
            value = getattr(self, name)
            if value < 1:
                raise SettingError(
                    name, f"must be a whole number >= 1, got {value!r}", hint=f"e.g. {example}"
                )
        for name in ("price_in", "price_out"):
            price = getattr(self, name)
            # NaN or infinity would reach the summary as a cost that is not valid JSON.
            if price is not None and not (math.isfinite(price) and price >= 0):
                raise SettingError(name, f"must be a number >= 0, got {price!r}")
        if not (math.isfinite(self.request_timeout) and self.request_timeout > 0):
            raise SettingError(
                "request_timeout", f"must be a positive number of seconds, got {self.request_timeout!r}"
            )

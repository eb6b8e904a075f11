"""``--batch``: the answers a run needs, asked through the OpenAI Batch API instead of live requests.

A batch run goes in rounds. Each round replays the run in memory against the cache, with a
``RequestCollector`` in place of the client: every slot whose answers are all cached settles, the
others stop at their first missing answer, and those requests are sent as one batch (upload, create,
poll, download). The answers go into the same cache as live answers, so the next round gets further
(a filtered question asks for its next attempt, a kept one for its judge verdict). When a round
collects nothing, the real run replays everything from the cache and writes the output.

An item that failed for a reason another try cannot fix (a 4xx other than 408, 409 and 429: the
request itself is refused) is not submitted again in a later round, each of which can take 24 hours:
its question fails with the batch's reason, as a live request refused that way does. Other failures
(5xx, rate limits, an expired batch) are asked again in the next round.

A batch in flight is written to ``synthetic.batch.json`` (its id and what each request was for)
before polling starts; a run killed while waiting, or stopped by ``timeout``, resumes that batch
when started again instead of submitting a new one. The state is first written without an id,
before anything is submitted: a disk too full to hold it stops the run before a batch is paid for.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall import llm
from realrecall.errors import BatchUnanswered, InputError, LLMCallError, LLMError, SettingError
from realrecall.files import atomic_write_text
from realrecall.generate.asking import RequestCollector, cache_entry
from realrecall.generate.store import GenerationStore
from realrecall.llm import (
    BatchItemError,
    BatchStatus,
    ChatRequest,
    ChatResult,
    LLMConfig,
)
from realrecall.settings import BatchSettings

__all__ = [
    "BatchOptions",
    "BatchTotals",
    "LeftoverClient",
    "answer_in_batches",
    "batch_endpoint",
    "batch_state_path",
    "refuse_batch_options",
    "retryable",
]


@dataclass(frozen=True)
class BatchOptions:
    """Where the Batch API is (``llm``), how often to poll, and how long to wait in this process.

    With ``timeout`` set, a batch still running after that many seconds stops the run with an
    LLMError saying so; the batch id stays in the state file and the next run resumes it.
    """

    llm: LLMConfig = field(default_factory=LLMConfig)
    poll_interval: float = 30.0
    timeout: float | None = None
    on_status: Callable[[BatchStatus], None] | None = None  # told at every poll (the CLI prints it)

    def __post_init__(self) -> None:
        BatchSettings(poll_interval=self.poll_interval, batch_timeout=self.timeout)  # the rules, once

    @classmethod
    def from_settings(
        cls,
        settings: BatchSettings,
        llm: LLMConfig,
        *,
        on_status: Callable[[BatchStatus], None] | None = None,
    ) -> BatchOptions:
        """The options of a run whose ``settings`` ask for the Batch API, at the endpoint ``llm`` names."""
        return cls(
            llm=llm, poll_interval=settings.poll_interval, timeout=settings.batch_timeout, on_status=on_status
        )


def refuse_batch_options(options: Mapping[str, object], *, what: str, settings: str) -> None:
    """``batch=BatchOptions(...)``, how a Batch API run was asked of ``what`` before ``batch`` became
    a setting, gets a line saying what replaced it (``settings``: the other settings of the run's batches)."""
    if isinstance(options.get("batch"), BatchOptions):
        raise SettingError(
            "batch",
            f"is a setting now, true or false: BatchOptions are no longer passed to {what}",
            hint=f"give batch=True, with {settings} as settings (or client= realrecall's client for its "
            "endpoint), and batch_status= to see each poll",
        )


def batch_endpoint(client: object, default: LLMConfig, *, default_named: str) -> LLMConfig:
    """Where a run's batches go: where realrecall's own ``client`` sends (its address, key variable and
    retries), else ``default``, the endpoint of the run's settings (``default_named``: its address as
    the user sets it). The batches are sent by realrecall itself, so any other client names no endpoint
    it could use."""
    from realrecall.llm import DeferredChatClient, OpenAIChatClient

    if client is None:
        return default
    if isinstance(client, OpenAIChatClient):
        return client.resolved_config()
    if isinstance(client, DeferredChatClient):
        return client.config
    raise InputError(
        f"the Batch API is asked at an endpoint, and a {type(client).__name__} names none",
        hint=f"leave client out (the batches go to {default_named}), or give realrecall's OpenAIChatClient",
    )


class LeftoverClient:
    """The client of the final pass after the batches: anything still uncached is a failure.

    ``refused``: the items a batch refused for good, by request fingerprint, so that their questions
    fail with the batch's own reason.
    """

    def __init__(self, refused: Mapping[str, BatchItemError] | None = None) -> None:
        self.refused = dict(refused or {})

    async def complete(self, request: ChatRequest) -> ChatResult:
        error = self.refused.get(request.fingerprint())
        if error is not None:
            raise LLMCallError(
                f"the batch refused this request ({error.status_code}: {error.code}): {error.message}",
                reason=f"batch_{error.code}",
                attempts=1,
                status=error.status_code,
            )
        raise BatchUnanswered("the batches returned no answer for this request")


def retryable(error: BatchItemError) -> bool:
    """Whether another batch could answer an item that failed: not when the request itself was
    refused (a 4xx other than 408 timeout, 409 conflict and 429 rate limit), as for live requests."""
    status = error.status_code
    return status is None or not 400 <= status < 500 or status in (408, 409, 429)


@dataclass
class BatchTotals:
    """What the batches cost, per stage (``generate``, ``judge``), to add to the run's summary."""

    batch_ids: list[str] = field(default_factory=list)
    requests: Counter[str] = field(default_factory=Counter)
    tokens_in: Counter[str] = field(default_factory=Counter)
    tokens_out: Counter[str] = field(default_factory=Counter)
    failures: dict[str, Counter[str]] = field(default_factory=dict)
    refused: dict[str, BatchItemError] = field(default_factory=dict)
    """Items refused for good, by custom id (the request's cache key): never submitted again."""
    refused_requests: dict[str, BatchItemError] = field(default_factory=dict)
    """The same, by request fingerprint, for the final pass (``LeftoverClient``)."""


def batch_state_path(store: GenerationStore) -> Path:
    return store.batch_path


async def answer_in_batches(
    store: GenerationStore,
    options: BatchOptions,
    collect: Callable[[], Awaitable[RequestCollector]],
    *,
    max_rounds: int,
) -> BatchTotals:
    """Send batches until a replay needs no uncached answer (or ``max_rounds`` batches were sent)."""
    totals = BatchTotals()
    state_path = batch_state_path(store)
    if state_path.exists():
        state = _read_state(state_path)
        if state["batch_id"] is not None:
            await _finish(store, options, state, totals, state_path)
        else:
            # The run stopped before (or while) submitting: the rounds below ask for these again.
            state_path.unlink(missing_ok=True)
    for _ in range(max_rounds):
        collector = await collect()
        for key in [key for key in collector.pending if key in totals.refused]:
            _, _, request = collector.pending.pop(key)
            totals.refused_requests[request.fingerprint()] = totals.refused[key]
        if not collector.pending:
            break
        requests = {key: request for key, (_, _, request) in collector.pending.items()}
        state = {
            "batch_id": None,
            "requests": {
                key: {"slot": slot, "stage": stage} for key, (slot, stage, _) in collector.pending.items()
            },
        }
        atomic_write_text(state_path, json.dumps(state, indent=1) + "\n")
        batch_id = await llm.submit_batch(options.llm, requests)
        state["batch_id"] = batch_id
        try:
            atomic_write_text(state_path, json.dumps(state, indent=1) + "\n")
        except InputError as exc:
            raise type(exc)(
                f"batch {batch_id} was submitted but its id could not be saved: {exc.message}",
                path=exc.path,
                hint=f"{exc.hint or 'free some space'}; the next run submits its requests again",
            ) from exc
        await _finish(store, options, state, totals, state_path)
    return totals


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"unreadable batch state ({exc})", path=path, hint="delete it to start over"
        ) from exc
    if not isinstance(state, dict) or not isinstance(state.get("batch_id", 0), str | None):
        raise InputError("batch state has no batch_id", path=path, hint="delete it to start over")
    return state


async def _wait(options: BatchOptions, batch_id: str) -> BatchStatus:
    """Poll until the batch is terminal or ``timeout`` has passed; the last status seen."""
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    while True:
        status = await llm.get_batch(options.llm, batch_id)
        if options.on_status is not None:
            options.on_status(status)
        if status.is_terminal or (
            deadline is not None and time.monotonic() + options.poll_interval > deadline
        ):
            return status
        await asyncio.sleep(options.poll_interval)


async def _finish(
    store: GenerationStore,
    options: BatchOptions,
    state: dict[str, Any],
    totals: BatchTotals,
    state_path: Path,
) -> None:
    """Wait for the batch, put its answers into the cache, count its costs, forget its state."""
    batch_id = state["batch_id"]
    status = await _wait(options, batch_id)
    if not status.is_terminal:
        raise LLMError(
            f"batch {batch_id} is still {status.status} "
            f"({status.counts.completed}/{status.counts.total} done); run the same command again to resume it"
        )
    totals.batch_ids.append(batch_id)
    results: dict[str, ChatResult | BatchItemError] = {}
    if status.output_file_id is not None or status.error_file_id is not None:
        results = await llm.download_batch_results(options.llm, status)
    for key, meta in state["requests"].items():
        stage = meta["stage"]
        totals.requests[stage] += 1
        result = results.get(key)
        if isinstance(result, ChatResult):
            store.add_cache(cache_entry(key, meta["slot"], stage, result))
            totals.tokens_in[stage] += result.usage.prompt_tokens
            totals.tokens_out[stage] += result.usage.completion_tokens
        else:
            code = result.code if isinstance(result, BatchItemError) else status.status
            totals.failures.setdefault(stage, Counter())[f"batch_{code}"] += 1
            if isinstance(result, BatchItemError) and not retryable(result):
                totals.refused[key] = result
    # The answers must be on disk before the batch id is forgotten: a full disk now keeps the state,
    # and the next run downloads them again instead of paying for a new batch.
    await asyncio.to_thread(store.flush)
    state_path.unlink(missing_ok=True)

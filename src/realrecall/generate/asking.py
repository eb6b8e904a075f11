"""Asking the endpoint through the answer cache: every model answer of a run goes through ``ask``.

An answer whose request key is cached is replayed without a request, so a rerun, a resumed run or a
run with tightened filters pays for nothing twice. While a batch is prepared a ``RequestCollector``
stands in for the client (``generate.batch``): it notes each request the cache cannot answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn

from realrecall.errors import Deferred, LLMError
from realrecall.llm.types import ChatClient, ChatRequest, ChatResult, Usage

if TYPE_CHECKING:
    from realrecall.generate.store import GenerationStore
    from realrecall.generate.summary import StageCounter

__all__ = ["RequestCollector", "ask", "cache_entry", "derive_seed", "recorded_dropped", "recorded_usage"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def derive_seed(*parts: object) -> int:
    """A request's ``seed``: a 31-bit number fixed by ``parts`` (the run's seed, the slot, the attempt...)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


class RequestCollector:
    """Stands in for the chat client while a batch is prepared: notes each request not in the cache.

    A run with a collector settles every slot whose answers are all cached and stops the others at
    their first missing answer (``Deferred``); the notes become the next batch's requests.
    """

    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, str, ChatRequest]] = {}

    def defer(self, key: str, slot_key: str, stage: str, request: ChatRequest) -> NoReturn:
        self.pending[key] = (slot_key, stage, request)
        raise Deferred(key)


def cache_entry(key: str, slot_key: str, stage: str, result: ChatResult) -> dict[str, Any]:
    """The cache record of one answer (live or from a batch); refusals and cut answers are failures.

    ``dropped`` (only when the endpoint refused some) names the parameters the answer was made without.
    """
    failure = None
    if result.refusal:
        failure = "refusal"
    elif result.finish_reason == "length":
        failure = "truncated"
    entry: dict[str, Any] = {
        "key": key,
        "slot": slot_key,
        "stage": stage,
        "text": result.text or "",
        "failure": failure,
        "finish_reason": result.finish_reason,
        "model": result.model,
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
        },
        "time": _now(),
    }
    if result.dropped:
        entry["dropped"] = sorted(result.dropped)
    return entry


def recorded_dropped(entry: Mapping[str, Any]) -> frozenset[str]:
    """The request parameters a cache entry's answer was made without (none for an older entry)."""
    dropped = entry.get("dropped")
    if not isinstance(dropped, list):
        return frozenset()
    return frozenset(name for name in dropped if isinstance(name, str))


def recorded_usage(entry: Mapping[str, Any]) -> Usage:
    """The token usage a cache entry recorded (0 for an entry without one)."""
    usage = entry.get("usage")
    if not isinstance(usage, Mapping):
        return Usage(0, 0)
    counts = [usage.get(name) for name in ("prompt_tokens", "completion_tokens")]
    prompt, completion = (
        c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else 0 for c in counts
    )
    return Usage(prompt, completion)


async def ask(
    client: ChatClient | RequestCollector | None,
    store: GenerationStore,
    counter: StageCounter,
    request: ChatRequest,
    *,
    key: str,
    slot_key: str,
    stage: str,
) -> tuple[str, str | None, Usage, str]:
    """``(text, failure, usage, model)`` for ``request``, from the cache or the endpoint.

    ``usage`` is what the answer cost when it was asked: a replayed answer brings its recorded cost
    (the run's counters, which say what this run paid, count only live requests). The parameters the
    endpoint refused for the answer (live or replayed) are noted on ``counter`` under ``slot_key``.

    Raises LLMError when the endpoint fails for good (not cached: the next run asks again), and
    Deferred when a batch is being collected.
    """
    cached = store.cache.get(key)
    if cached is not None:
        counter.cached += 1
        counter.note_dropped(slot_key, recorded_dropped(cached))
        usage = recorded_usage(cached)
        return cached["text"], cached.get("failure"), usage, cached.get("model") or request.model
    if isinstance(client, RequestCollector):
        client.defer(key, slot_key, stage, request)
    if client is None:
        raise LLMError("a request is needed but no chat client was given")
    counter.requests += 1
    result: ChatResult = await client.complete(request)
    counter.retries += max(0, result.attempts - 1)
    counter.tokens_in += result.usage.prompt_tokens
    counter.tokens_out += result.usage.completion_tokens
    entry = cache_entry(key, slot_key, stage, result)
    counter.note_dropped(slot_key, result.dropped)
    store.add_cache(entry)
    return result.text or "", entry["failure"], result.usage, result.model or request.model

"""The model screen (``--screen``): after the rules of ``generate.screening``, one cheap request per
chunk that passed them, asking whether a real user would search for something the chunk answers
(strict schema ``{"askable": boolean, "reason": string}``, temperature 0, cached like the questions).
A chunk it skips is counted by the model's reason in the summary; a chunk whose screen fails is kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from realrecall.corpus import Chunk
from realrecall.errors import InputError, LLMError
from realrecall.generate.answers import _json_object
from realrecall.generate.asking import cache_entry
from realrecall.generate.templates import PromptTemplate, delimit_data, render
from realrecall.llm.types import ChatClient, ChatRequest

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.summary import StageCounter

__all__ = [
    "SCREEN_SCHEMA",
    "ScreenVerdict",
    "cached_screen",
    "model_screen",
    "parse_screen_verdict",
    "screen_key",
    "screen_messages",
]


SCREEN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "askable": {
            "type": "boolean",
            "description": "true if a real user would search for something this passage answers",
        },
        "reason": {"type": "string", "description": "one short sentence"},
    },
    "required": ["askable", "reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ScreenVerdict:
    """The model screen's answer for one chunk."""

    askable: bool
    reason: str


def parse_screen_verdict(text: str) -> tuple[ScreenVerdict | None, str | None]:
    """``(verdict, None)`` for a valid screen answer, ``(None, reason)`` otherwise."""
    value, failure = _json_object(text)
    if value is None:
        return None, failure
    if set(value) != {"askable", "reason"} or not isinstance(value.get("askable"), bool):
        return None, "schema_mismatch"
    if not isinstance(value.get("reason"), str):
        return None, "schema_mismatch"
    return ScreenVerdict(value["askable"], " ".join(value["reason"].split())), None


def screen_messages(template: PromptTemplate, chunk: Chunk) -> tuple[dict[str, str], ...]:
    """The model screen's request for ``chunk`` (its text delimited as data)."""
    return render(template, {"passage": delimit_data(chunk.text, "passage")})


def screen_key(template: PromptTemplate, model: str, chunk: Chunk, attempt: int) -> str:
    """The cache key of the model screen's answer number ``attempt`` about ``chunk``."""
    identity = json.dumps([template.sha256, model, chunk.content_hash])
    return hashlib.sha256(f"screen\x1f{identity}\x1f{attempt}".encode()).hexdigest()


def cached_screen(
    chunks: Sequence[Chunk],
    cache: Mapping[str, Mapping[str, Any]],
    template: PromptTemplate,
    config: GenerateConfig,
) -> tuple[list[Chunk], dict[str, str]]:
    """What ``model_screen`` would do before asking anything: ``(chunks it would send a request for,
    {chunk id: model's reason} of the chunks the cached verdicts skip)``. For the dry run."""
    to_ask: list[Chunk] = []
    skipped: dict[str, str] = {}
    for chunk in chunks:
        for attempt in range(config.max_attempts):
            cached = cache.get(screen_key(template, config.model, chunk, attempt))
            if cached is None:
                to_ask.append(chunk)
                break
            verdict = None
            if cached.get("failure") is None:
                verdict, _ = parse_screen_verdict(str(cached.get("text") or ""))
            if verdict is not None:
                if not verdict.askable:
                    skipped[chunk.id] = verdict.reason or "model_screen"
                break
    return to_ask, skipped


async def model_screen(
    chunks: Sequence[Chunk],
    *,
    client: ChatClient | None,
    cache: Mapping[str, Mapping[str, Any]],
    template: PromptTemplate,
    config: GenerateConfig,
    counter: StageCounter,
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Ask the model about each chunk: ``({chunk id: model's reason} of the chunks it skips, new
    cache entries)``.

    Answers are read from ``cache`` first (key: the screen prompt, the model and the chunk's content,
    and the attempt), so a rerun asks nothing again; the new entries are for the caller to append once
    the store is open. A chunk whose screen fails (invalid answers, the endpoint failing for good) is
    kept and the failure counted: a screen never drops a chunk without a verdict.
    """
    entries: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    limit = asyncio.Semaphore(config.concurrency)

    async def screen_one(chunk: Chunk) -> None:
        messages = screen_messages(template, chunk)
        for attempt in range(config.max_attempts):
            key = screen_key(template, config.model, chunk, attempt)
            cached = cache.get(key)
            if cached is not None:
                counter.cached += 1
                text, failure = str(cached.get("text") or ""), cached.get("failure")
            else:
                if client is None:
                    raise InputError(
                        "the model screen (--screen) needs live requests; it does not go through --batch",
                        hint="run once with --screen and without --batch (its verdicts are cached), "
                        "or leave --screen out",
                    )
                request = ChatRequest(
                    messages=messages,
                    model=config.model,
                    temperature=0.0,
                    max_tokens=100,
                    json_schema=SCREEN_SCHEMA,
                    schema_name="screen",
                    seed=attempt,
                )
                try:
                    async with limit:
                        counter.requests += 1
                        result = await client.complete(request)
                except LLMError as exc:
                    counter.failures[getattr(exc, "reason", None) or "llm_error"] += 1
                    return
                counter.retries += max(0, result.attempts - 1)
                counter.tokens_in += result.usage.prompt_tokens
                counter.tokens_out += result.usage.completion_tokens
                entry = cache_entry(key, f"screen:{chunk.content_hash}", "screen", result)
                entries.append(entry)
                text, failure = entry["text"], entry["failure"]
            verdict = None
            if failure is None:
                verdict, failure = parse_screen_verdict(text)
            if verdict is not None:
                if not verdict.askable:
                    skipped[chunk.id] = verdict.reason or "model_screen"
                return
            counter.failures[failure or "invalid"] += 1
            if attempt + 1 < config.max_attempts:
                counter.regenerations += 1

    await asyncio.gather(*(screen_one(chunk) for chunk in chunks))
    return skipped, entries

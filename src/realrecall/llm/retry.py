"""The retry policy every call to the endpoint shares: what counts as a fault, how long to wait, counters.

Retried: 429, 408, 409, 5xx, timeouts, connection errors, and 200 answers that are unusable (a body
that is not JSON, no choices). Not retried: any other 4xx, which says the request itself is wrong.
Waits grow exponentially with jitter (tenacity's ``wait_exponential_jitter``); when the server sends
``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` the wait is at least that long. No wait
exceeds ``max_wait``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_exponential_jitter

from realrecall.errors import EmptyResponse, GaveUp, LLMCallError, MalformedResponse
from realrecall.llm.endpoint import redact
from realrecall.llm.types import UNANSWERED, LLMConfig, LLMStats

__all__ = [
    "Fault",
    "Sleep",
    "StatsRecorder",
    "call_with_retries",
    "classify",
    "gave_up_error",
    "parse_retry_after",
]

T = TypeVar("T")

_DETAIL_LIMIT = 300


@dataclass(frozen=True)
class Fault:
    """What went wrong in one attempt, in the terms the policy and the error message need."""

    reason: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    detail: str = ""
    param: str | None = None  # the request parameter an error body names (``error.param``)


_DESCRIPTIONS = {
    "rate_limited": "rate limited",
    "server_error": "server error",
    "timeout": "timed out",
    "connection": "connection failed",
    "conflict": "conflict",
    "malformed_response": "malformed response",
    "empty_response": "empty response (no choices)",
    "bad_request": "bad request",
    "response_format_rejected": "response_format rejected",
    "invalid_schema": "invalid schema",
    "auth": "authentication failed",
    "permission": "permission denied",
    "not_found": "not found",
    "client_error": "client error",
}


def classify(exc: BaseException) -> Fault | None:
    """The fault ``exc`` stands for, or None when it is not the endpoint's doing (a bug: let it rise)."""
    if isinstance(exc, openai.APITimeoutError):
        return Fault("timeout", True, detail="no answer within the timeout")
    if isinstance(exc, openai.APIConnectionError):
        return Fault("connection", True, detail=str(exc))
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc)
    if isinstance(exc, openai.APIResponseValidationError | MalformedResponse):
        return Fault("malformed_response", True, detail=str(exc))
    if isinstance(exc, json.JSONDecodeError):
        # The SDK lets the decoder's error through when a 200 body is not JSON.
        return Fault("malformed_response", True, detail=f"body is not valid JSON ({exc.msg})")
    if isinstance(exc, EmptyResponse):
        return Fault("empty_response", True, detail=str(exc))
    return None


def _classify_status(exc: openai.APIStatusError) -> Fault:
    status = exc.status_code
    detail = _server_message(exc)
    retry_after = parse_retry_after(exc.response.headers)
    if status == 429:
        return Fault("rate_limited", True, status, retry_after, detail)
    if status >= 500:
        return Fault("server_error", True, status, retry_after, detail)
    if status == 408:
        return Fault("timeout", True, status, retry_after, detail)
    if status == 409:
        return Fault("conflict", True, status, retry_after, detail)
    if status == 400 and "invalid schema" in detail.lower():
        # The endpoint supports the format but the caller's schema breaks its rules: a bug to fix,
        # not a reason to fall back to a weaker format and hide it.
        return Fault("invalid_schema", False, status, None, detail)
    if status == 400 and _mentions_response_format(exc, detail):
        return Fault("response_format_rejected", False, status, None, detail)
    reason = {400: "bad_request", 401: "auth", 403: "permission", 404: "not_found"}.get(
        status, "client_error"
    )
    param = exc.param if isinstance(exc.param, str) else None
    return Fault(reason, False, status, None, detail, param)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str):
            return message
    return exc.message


def _mentions_response_format(exc: openai.APIStatusError, detail: str) -> bool:
    text = f"{detail} {exc.param or ''}".lower()
    return "response_format" in text or "json_schema" in text or "response format" in text


def parse_retry_after(headers: object) -> float | None:
    """Seconds the server asks for, from ``retry-after-ms`` or ``Retry-After``; None if absent."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# Waits between attempts: asyncio.sleep, or in tests a recorder that returns at once.
Sleep = Callable[[float], Awaitable[None]]


class _RetryAfterWait(wait_base):
    """Exponential backoff with jitter, raised to the server's Retry-After, capped at ``max_wait``."""

    def __init__(self, config: LLMConfig) -> None:
        self._max_wait = config.max_wait
        self._backoff = wait_exponential_jitter(
            multiplier=config.initial_wait or 1e-3,
            max=config.max_wait,
            jitter=config.initial_wait,
        )

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self._backoff(retry_state)
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        fault = classify(exc) if exc is not None else None
        if fault is not None and fault.retry_after is not None:
            wait = max(wait, fault.retry_after)
        return min(wait, self._max_wait)


def _is_retryable(exc: BaseException) -> bool:
    fault = classify(exc)
    return fault is not None and fault.retryable


class StatsRecorder:
    """Counters of one client instance; thread-safe, since a sync embedder may be called from threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = 0
        self._retries: Counter[str] = Counter()
        self._failures: Counter[str] = Counter()
        self._fallbacks: Counter[str] = Counter()
        self._prompt_tokens = 0
        self._completion_tokens = 0

    def request(self) -> None:
        with self._lock:
            self._requests += 1

    def retry(self, reason: str) -> None:
        with self._lock:
            self._retries[reason] += 1

    def failure(self, reason: str) -> None:
        with self._lock:
            self._failures[reason] += 1

    def fallback(self, to: str) -> None:
        with self._lock:
            self._fallbacks[to] += 1

    def tokens(self, prompt: int, completion: int) -> None:
        with self._lock:
            self._prompt_tokens += prompt
            self._completion_tokens += completion

    def snapshot(self) -> LLMStats:
        with self._lock:
            return LLMStats(
                requests=self._requests,
                retries=dict(self._retries),
                failures=dict(self._failures),
                fallbacks=dict(self._fallbacks),
                prompt_tokens=self._prompt_tokens,
                completion_tokens=self._completion_tokens,
            )


async def call_with_retries(
    send: Callable[[], Awaitable[T]],
    *,
    config: LLMConfig,
    stats: StatsRecorder,
    sleep: Sleep = asyncio.sleep,
) -> tuple[T, int]:
    """Await ``send()`` until it succeeds or the budget is spent; returns the result and the attempts made.

    ``sleep`` waits between attempts; tests pass one that records the waits instead of taking them.

    Each attempt is one HTTP request (the SDK's own retries are off). Raises GaveUp on a
    non-retryable fault or after ``config.max_attempts`` attempts; anything that is not an endpoint
    fault (a bug) rises unchanged at once.
    """
    attempts = 0

    async def attempt() -> T:
        nonlocal attempts
        attempts += 1
        stats.request()
        return await send()

    # The first attempt runs without tenacity: setting its machinery up costs more than most calls
    # that succeed at once. A fault is handed to it as the first attempt's outcome (replayed, not
    # sent again), so waits, counters and the budget are exactly those of a call made through it.
    try:
        return await attempt(), attempts
    except Exception as exc:
        fault = classify(exc)
        if fault is None:
            raise
        if not fault.retryable or config.max_attempts <= 1:
            raise GaveUp(fault, attempts) from None
        first: Exception | None = exc

    async def replay_then_attempt() -> T:
        nonlocal first
        if first is not None:
            exc, first = first, None
            raise exc
        return await attempt()

    def before_sleep(retry_state: RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        fault = classify(exc) if exc is not None else None
        stats.retry(fault.reason if fault is not None else "unknown")

    retrying = AsyncRetrying(
        stop=stop_after_attempt(config.max_attempts),
        wait=_RetryAfterWait(config),
        retry=retry_if_exception(_is_retryable),
        before_sleep=before_sleep,
        reraise=True,
        sleep=sleep,
    )
    try:
        result: T = await retrying(replay_then_attempt)
    except Exception as exc:
        fault = classify(exc)
        if fault is None:
            raise
        raise GaveUp(fault, attempts) from None
    return result, attempts


def gave_up_error(
    gave_up: GaveUp, *, secret: str, attempts: int | None = None, what: str = "", server: str | None = None
) -> LLMCallError:
    """The user-facing error for a call that gave up, e.g. ``rate limited (429) after 6 attempts: ...``.

    A call the endpoint never answered (timed out, no connection) names ``server``, the endpoint's URL:
    ``timed out after 6 attempts at http://127.0.0.1:8000/v1: Request timed out.``
    """
    fault = gave_up.fault
    count = gave_up.attempts if attempts is None else attempts
    description = _DESCRIPTIONS.get(fault.reason, fault.reason.replace("_", " "))
    if fault.status is not None:
        description += f" ({fault.status})"
    message = f"{what}{description} after {count} attempt{'' if count == 1 else 's'}"
    if server is not None and fault.reason in UNANSWERED:
        message += f" at {server}"
    detail = redact(" ".join(fault.detail.split()), secret)
    if detail:
        if len(detail) > _DETAIL_LIMIT:
            detail = detail[: _DETAIL_LIMIT - 3] + "..."
        message += f": {detail}"
    return LLMCallError(message, reason=fault.reason, attempts=count, status=fault.status)

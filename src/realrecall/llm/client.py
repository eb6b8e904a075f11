"""OpenAIChatClient: chat completions from any OpenAI-compatible endpoint, with retries and structured output.

Structured output is asked for as Structured Outputs (``response_format`` json_schema, strict). An
endpoint that rejects that with a 400 naming response_format gets JSON mode next, then no
response_format at all (the schema then travels as a system message); the client remembers the
weakest format that worked, so later calls do not pay for the rejected ones again.

``max_tokens``, ``temperature`` and ``seed`` are sent when the request sets them; an endpoint that
refuses one as unsupported (reasoning models take neither of the first two, some servers no seed)
gets the request again without it, and the client remembers, so later calls leave it out from the
start. Each answer says which it was made without (``ChatResult.dropped``).

An endpoint nobody answers at (connection refused, no route, a wrong port) is given up on after
``LLMConfig.max_connection_failures`` attempts in a row without a connection, over all calls: the
calls then fail at once with reason ``unreachable``, naming the server, instead of each spending its
whole retry budget.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from realrecall.errors import EmptyResponse, GaveUp, LLMCallError, MalformedResponse, Unreachable
from realrecall.llm.endpoint import open_sdk_client, redact, redact_result, resolve_endpoint
from realrecall.llm.retry import (
    Fault,
    Sleep,
    StatsRecorder,
    call_with_retries,
    gave_up_error,
)
from realrecall.llm.types import (
    RESPONSE_FORMATS,
    ChatRequest,
    ChatResult,
    LLMConfig,
    LLMStats,
    ResponseFormat,
    Usage,
)

__all__ = ["OpenAIChatClient", "answer_result", "chat_result", "first_choice"]


class OpenAIChatClient:
    """A ChatClient over ``/v1/chat/completions``. Safe for many concurrent ``complete`` calls in one loop.

    The key is read from the environment now (InputError if it is needed and missing). An SDK client
    is opened lazily for each event loop the client is used from, so ``asyncio.run`` may be called
    more than once with the same instance.
    """

    def __init__(self, config: LLMConfig, *, sleep: Sleep = asyncio.sleep) -> None:
        self.config = config
        self._sleep = sleep  # between retries; injectable so tests never wait real seconds
        self._endpoint = resolve_endpoint(config)
        self._stats = StatsRecorder()
        self._response_format: ResponseFormat = "json_schema"
        self._dropped: set[str] = set()  # parameters the endpoint refused (see the module doc)
        self._unconnected = 0  # attempts in a row, over all calls, that made no connection
        self._last_connection_error = ""
        self._sdk: openai.AsyncOpenAI | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAIChatClient(base_url={self._endpoint.base_url!r})"

    def resolved_config(self) -> LLMConfig:
        """The config with the endpoint this client resolved (``OPENAI_BASE_URL`` as read when it was
        made), so that a client made elsewhere from it (in a Ray actor) asks the same endpoint."""
        return dataclasses.replace(self.config, base_url=self._endpoint.base_url)

    @property
    def stats(self) -> LLMStats:
        """Requests sent, retries and failures by reason, response_format fallbacks, tokens in and out."""
        return self._stats.snapshot()

    @property
    def response_format(self) -> ResponseFormat:
        """The strongest response_format this endpoint has not rejected so far."""
        return self._response_format

    @property
    def dropped_parameters(self) -> frozenset[str]:
        """The optional parameters (``max_tokens``, ``temperature``, ``seed``) the endpoint refused so far."""
        return frozenset(self._dropped)

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Send ``request``, retrying faults and falling back on a rejected response_format or an
        unsupported ``max_tokens``/``temperature``/``seed``.

        Raises LLMCallError when the budget is spent, the request is refused for good, or the endpoint
        is unreachable (reason ``unreachable``, see the module doc).
        """
        mode: ResponseFormat = self._response_format if request.json_schema is not None else "none"
        attempts = 0
        while True:
            body = request.to_body(response_format=mode)
            left_out = frozenset(name for name in self._dropped if name in body)
            for name in left_out:
                del body[name]
            try:
                if self._unconnected >= self.config.max_connection_failures:
                    raise Unreachable
                answer, used = await call_with_retries(
                    functools.partial(self._send, body),
                    config=self.config,
                    stats=self._stats,
                    sleep=self._sleep,
                )
            except Unreachable:
                self._stats.failure("unreachable")
                raise self._unreachable_error(attempts) from None
            except GaveUp as gave_up:
                attempts += gave_up.attempts
                if gave_up.fault.reason == "response_format_rejected" and mode != "none":
                    mode = RESPONSE_FORMATS[RESPONSE_FORMATS.index(mode) + 1]
                    self._remember(mode)
                    self._stats.fallback(mode)
                    continue
                refused = _refused_parameter(gave_up.fault, body)
                if refused is not None:
                    self._dropped.add(refused)
                    continue
                self._stats.failure(gave_up.fault.reason)
                raise gave_up_error(
                    gave_up, secret=self._endpoint.api_key, attempts=attempts, server=self._endpoint.name
                ) from None
            attempts += used
            result = answer_result(answer, attempts=attempts, response_format=mode, dropped=left_out)
            # What the endpoint wrote is stored (cache, gold set): a key it echoes is blanked here.
            result = redact_result(result, self._endpoint.api_key)
            self._stats.tokens(result.usage.prompt_tokens, result.usage.completion_tokens)
            return result

    async def aclose(self) -> None:
        """Close the SDK client of the current loop (open connections); the client stays usable."""
        sdk, loop = self._sdk, self._sdk_loop
        self._sdk, self._sdk_loop = None, None
        # A pool opened in another (finished) loop cannot be closed from this one: just drop it.
        if sdk is not None and loop is asyncio.get_running_loop():
            await sdk.close()

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _remember(self, mode: ResponseFormat) -> None:
        # Only ever weaker: concurrent calls may learn the same thing in any order.
        if RESPONSE_FORMATS.index(mode) > RESPONSE_FORMATS.index(self._response_format):
            self._response_format = mode

    def _sdk_client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            # A pooled connection belongs to the loop that opened it; a new loop needs a new pool.
            self._sdk = open_sdk_client(self._endpoint)
            self._sdk_loop = loop
        return self._sdk

    async def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        # Not ``chat.completions.create``: that walks the body against the SDK's TypedDicts and builds
        # pydantic models of the answer, over a third of the client's CPU a request. The body is plain
        # JSON already (``ChatRequest.to_body``), so it is posted as it is and the answer read here;
        # the SDK still owns the connection pool, the headers and key, timeouts and status errors.
        if self._unconnected >= self.config.max_connection_failures:
            raise Unreachable  # another call found the endpoint unreachable while this one waited
        try:
            text = await self._sdk_client().post("/chat/completions", body=body, cast_to=str)
        except openai.APITimeoutError:
            raise  # connected (or tried to) and heard nothing: a silent server, not an absent one
        except openai.APIConnectionError as exc:
            self._unconnected += 1
            self._last_connection_error = " ".join(str(exc).split())
            raise
        except openai.APIStatusError:
            self._unconnected = 0
            raise
        self._unconnected = 0
        return first_choice(text)

    def _unreachable_error(self, attempts: int) -> LLMCallError:
        count = self.config.max_connection_failures
        detail = redact(self._last_connection_error, self._endpoint.api_key)
        return LLMCallError(
            f"no connection to {self._endpoint.name} in {count} attempt{'' if count == 1 else 's'} in a "
            f"row{f' ({detail})' if detail else ''}: check that the endpoint is running and that "
            "OPENAI_BASE_URL (--base-url) names it",
            reason="unreachable",
            attempts=attempts,
        )


# The optional parameters dropped when refused, and the words endpoints refuse them with:
# "Unsupported parameter: 'max_tokens' is not supported with this model", "Unsupported value:
# 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.",
# "Unrecognized request argument supplied: seed", "Extra inputs are not permitted" (param: seed).
_OPTIONAL_PARAMETERS = ("max_tokens", "temperature", "seed")
_REFUSAL_WORDS = (
    "unsupported",
    "not supported",
    "does not support",
    "only the default",
    "unrecognized",
    "unknown parameter",
    "extra inputs are not permitted",
    "not permitted",
)


def _refused_parameter(fault: Fault, body: dict[str, Any]) -> str | None:
    """The optional parameter a 400 refuses as unsupported, if it is one this body sends."""
    if fault.status not in (400, 422) or fault.reason not in ("bad_request", "client_error"):
        return None
    text = fault.detail.lower()
    if not any(words in text for words in _REFUSAL_WORDS):
        return None
    named = (name for name in _OPTIONAL_PARAMETERS if name in body and (name in text or fault.param == name))
    return next(named, None)


def chat_result(completion: ChatCompletion, *, attempts: int, response_format: ResponseFormat) -> ChatResult:
    """The ChatResult of a chat completion's first choice (shared by live calls and batch output)."""
    choice = completion.choices[0]
    message = choice.message
    usage = completion.usage
    return ChatResult(
        text=message.content or "",
        finish_reason=choice.finish_reason or "unknown",
        usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage is not None else Usage(),
        model=completion.model,
        attempts=attempts,
        refusal=getattr(message, "refusal", None),
        response_format_used=response_format,
    )


def first_choice(text: str) -> dict[str, Any]:
    """The chat completion in ``text`` (a 200 answer's body), checked as far as ``answer_result`` reads it.

    Raises json.JSONDecodeError (a body that is not JSON), MalformedResponse (JSON of another shape)
    or EmptyResponse (no choices): faults worth another try (``retry.classify``).
    """
    completion = json.loads(text)
    if not isinstance(completion, dict):
        raise MalformedResponse(f"expected a chat completion, got a JSON {type(completion).__name__}")
    choices = completion.get("choices")
    if not choices:
        raise EmptyResponse("the answer has no choices")
    choice = choices[0] if isinstance(choices, list) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("the answer's first choice has no message")
    for name in ("content", "refusal"):
        if not isinstance(message.get(name), str | None):
            raise MalformedResponse(f"the answer's message.{name} is not a string")
    return completion


def answer_result(
    completion: dict[str, Any],
    *,
    attempts: int,
    response_format: ResponseFormat,
    dropped: frozenset[str] = frozenset(),
) -> ChatResult:
    """The ChatResult of a chat completion checked by ``first_choice`` (a plain JSON object)."""
    choice = completion["choices"][0]
    message = choice["message"]
    usage = completion.get("usage")
    tokens = [
        usage.get(name) if isinstance(usage, dict) else 0 for name in ("prompt_tokens", "completion_tokens")
    ]
    prompt, completion_tokens = (n if isinstance(n, int) and not isinstance(n, bool) else 0 for n in tokens)
    model = completion.get("model")
    finish_reason = choice.get("finish_reason")
    return ChatResult(
        text=message.get("content") or "",
        finish_reason=finish_reason if isinstance(finish_reason, str) and finish_reason else "unknown",
        usage=Usage(prompt, completion_tokens),
        model=model if isinstance(model, str) else "",
        attempts=attempts,
        refusal=message.get("refusal"),
        response_format_used=response_format,
        dropped=dropped,
    )

"""The values that cross the LLM boundary: configuration, requests, results, and the chat protocol.

Nothing here imports openai, so the generator, the retrievers and their tests can use these types
(and fake the protocols) without the SDK.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from realrecall.errors import InputError

__all__ = [
    "BASE_URL_HINT",
    "RESPONSE_FORMATS",
    "UNANSWERED",
    "BatchCounts",
    "BatchItemError",
    "BatchStatus",
    "ChatClient",
    "ChatRequest",
    "ChatResult",
    "LLMConfig",
    "LLMStats",
    "ResponseFormat",
    "Usage",
    "base_url_problem",
]

ResponseFormat = Literal["json_schema", "json_object", "none"]

UNANSWERED = frozenset({"timeout", "connection", "unreachable"})
"""Failure reasons (``LLMCallError.reason``) of a call the endpoint never answered: it timed out, or no
connection was made. A run stops once too many in a row end so (the endpoint is down or silent)."""

# Strongest first: a client that falls back moves right along this tuple and never back.
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "none")

# Without json_schema the model never sees the schema, so the request carries it in a system message.
SCHEMA_INSTRUCTION = "Reply with one JSON object, and nothing else, that matches this JSON Schema:\n"

_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the rule the Chat Completions API applies


BASE_URL_HINT = "give the API root, e.g. http://127.0.0.1:8000/v1"


def base_url_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be an endpoint's address (None: it can): the one rule of an address,
    given as a setting (``generate``'s ``base_url``) or in ``OPENAI_BASE_URL``."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http(s) URL"
    return None


@dataclass(frozen=True)
class LLMConfig:
    """Where the endpoint is and how hard to try.

    ``base_url`` None means the ``OPENAI_BASE_URL`` environment variable (and, without it, the SDK's
    default). The key is read from the environment variable named by ``api_key_env`` when a client is
    made, never stored here. ``max_attempts`` counts HTTP requests per call, the first one included;
    waits between them grow from ``initial_wait`` with jitter and never exceed ``max_wait``.
    ``max_connection_failures`` attempts in a row, over all of a client's calls, that made no
    connection at all (no answer of any kind between them) mean the endpoint is unreachable: every
    call then fails at once (``LLMCallError`` reason ``unreachable``) instead of spending its retries.
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_attempts: int = 6
    max_wait: float = 60.0
    initial_wait: float = 0.5
    max_connection_failures: int = 12

    def __post_init__(self) -> None:
        # NaN fails this too; infinity would wait forever on a hung endpoint.
        if not (isinstance(self.timeout, int | float) and math.isfinite(self.timeout) and self.timeout > 0):
            raise InputError(f"timeout must be a number of seconds > 0, got {self.timeout!r}", hint="e.g. 30")
        if self.max_attempts < 1:
            raise InputError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.max_connection_failures < 1:
            raise InputError(
                f"max_connection_failures must be at least 1, got {self.max_connection_failures}"
            )
        if self.max_wait < 0 or self.initial_wait < 0:
            raise InputError("max_wait and initial_wait must be >= 0 seconds")
        if not self.api_key_env:
            raise InputError("api_key_env must name an environment variable")


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask for; ``to_body()`` is the exact JSON the endpoint receives.

    With ``json_schema`` set the request asks for Structured Outputs (``strict: true``); the schema
    must then follow the strict-mode rules (every property required, ``additionalProperties: false``).
    """

    messages: tuple[dict[str, str], ...]
    model: str
    temperature: float = 0.7
    max_tokens: int | None = None
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    seed: int | None = None

    def __post_init__(self) -> None:
        # Copies, so a caller that later mutates its own dicts cannot change a request already made.
        messages = tuple(dict(message) for message in self.messages)
        object.__setattr__(self, "messages", messages)
        if not messages:
            raise InputError("a chat request needs at least one message")
        for number, message in enumerate(messages, start=1):
            if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), str):
                raise InputError(f"message {number} needs a string 'role' and a string 'content'")
        if not self.model:
            raise InputError("a chat request needs a model name")
        if not 0.0 <= self.temperature <= 2.0:
            raise InputError(f"temperature must be within [0, 2], got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InputError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if not _SCHEMA_NAME.fullmatch(self.schema_name):
            raise InputError(
                f"schema_name {self.schema_name!r} is not allowed",
                hint="use 1 to 64 letters, digits, '_' or '-'",
            )

    def to_body(self, *, response_format: ResponseFormat = "json_schema") -> dict[str, Any]:
        """The chat.completions JSON body, without any batch ``custom_id``.

        ``response_format`` picks how a schema is asked for: Structured Outputs, JSON mode, or only the
        instruction in a system message (the last two for endpoints that reject the stronger one).
        Without a schema it has no effect.
        """
        messages = [dict(message) for message in self.messages]
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        if self.json_schema is None:
            return body
        schema = _plain(self.json_schema)
        if response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": self.schema_name, "strict": True, "schema": schema},
            }
            return body
        instruction = SCHEMA_INSTRUCTION + json.dumps(schema, ensure_ascii=False, sort_keys=True)
        messages.append({"role": "system", "content": instruction})
        if response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def fingerprint(self) -> str:
        """Hex SHA-256 of the canonical JSON body: equal requests, equal fingerprints (a cache key)."""
        canonical = json.dumps(self.to_body(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def __hash__(self) -> int:
        # The generated hash would fail on the message dicts; the body's digest is stable and equal-safe.
        return hash(self.fingerprint())


def _plain(value: Any) -> Any:
    """Deep copy into dicts and lists, so read-only mappings and tuples serialise as JSON."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True)
class Usage:
    """Tokens billed for one call, or summed over many with ``+``."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ChatResult:
    """What came back: the text (empty when refused), why it stopped, and how it was obtained.

    ``finish_reason`` "length" means the text was cut by ``max_tokens`` and is likely not valid JSON.
    ``attempts`` counts HTTP requests, fallbacks included; ``response_format_used`` tells whether
    the schema was enforced by the endpoint ("json_schema") or only asked for. ``dropped`` names the
    request's parameters the endpoint refused (``temperature``, ``max_tokens``, ``seed``), left out
    of the request that got this answer: the endpoint's own defaults applied instead.
    """

    text: str
    finish_reason: str
    usage: Usage
    model: str
    attempts: int
    refusal: str | None
    response_format_used: ResponseFormat
    dropped: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LLMStats:
    """Counters of one client or embedder since it was made (a snapshot; later calls do not change it)."""

    requests: int = 0
    retries: Mapping[str, int] = field(default_factory=dict)
    failures: Mapping[str, int] = field(default_factory=dict)
    fallbacks: Mapping[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def usage(self) -> Usage:
        return Usage(self.prompt_tokens, self.completion_tokens)


@dataclass(frozen=True)
class BatchCounts:
    total: int
    completed: int
    failed: int


@dataclass(frozen=True)
class BatchStatus:
    """One look at a Batch API job. ``status`` is the API's own word (validating, in_progress, ...)."""

    id: str
    status: str
    output_file_id: str | None
    error_file_id: str | None
    counts: BatchCounts
    errors: tuple[str, ...] = ()

    @property
    def is_terminal(self) -> bool:
        """True once the batch will not change any more (its result files, if any, are final)."""
        return self.status in ("completed", "failed", "expired", "cancelled")


@dataclass(frozen=True)
class BatchItemError:
    """One batch request that did not produce an answer; ``status_code`` None when none was made."""

    custom_id: str
    status_code: int | None
    code: str
    message: str


@runtime_checkable
class ChatClient(Protocol):
    async def complete(self, request: ChatRequest) -> ChatResult: ...


# The Embedder protocol is the retrievers' (realrecall.evaluate.retrievers.Embedder): they are what
# takes any embedder; OpenAIEmbedder (realrecall.llm.embeddings) is one of its implementations.

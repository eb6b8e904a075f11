"""TEMPORARY copy of the interface in COMMON.md (dataclasses + Protocols, no openai).

The llm branch owns this module; on merge its version replaces this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["ChatClient", "ChatRequest", "ChatResult", "Embedder", "LLMConfig", "Usage"]


@dataclass(frozen=True)
class LLMConfig:
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_attempts: int = 6
    max_wait: float = 60.0


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    model: str
    temperature: float = 0.7
    max_tokens: int | None = None
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    seed: int | None = None

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        if self.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": self.schema_name, "schema": dict(self.json_schema), "strict": True},
            }
        return body


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class ChatResult:
    text: str
    finish_reason: str | None
    usage: Usage
    model: str
    attempts: int = 1
    refusal: str | None = None
    response_format_used: str | None = None


class ChatClient(Protocol):
    async def complete(self, request: ChatRequest) -> ChatResult: ...


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

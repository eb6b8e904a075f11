"""DeferredChatClient: an OpenAIChatClient made at the first request, so that a run answered wholly from
its cache never loads the openai SDK (about a third of a cached rerun's CPU).

The endpoint and key are checked when it is made, as OpenAIChatClient does (InputError at once for a
bad URL or a needed key that is missing); only the SDK waits.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from realrecall.llm.endpoint import resolve_endpoint
from realrecall.llm.types import ChatRequest, ChatResult, LLMConfig, LLMStats

if TYPE_CHECKING:
    from realrecall.llm.client import OpenAIChatClient
    from realrecall.llm.retry import Sleep

__all__ = ["DeferredChatClient"]


class DeferredChatClient:
    """A ChatClient that makes its ``OpenAIChatClient(config)`` when the first request is sent."""

    def __init__(self, config: LLMConfig, *, sleep: Sleep | None = None) -> None:
        self.config = config
        self._endpoint = resolve_endpoint(config)  # the same checks, now, without the SDK
        self._sleep = sleep
        self._client: OpenAIChatClient | None = None

    def __repr__(self) -> str:
        return f"DeferredChatClient(base_url={self._endpoint.base_url!r})"

    @property
    def client(self) -> OpenAIChatClient:
        """The client itself (made now if no request made it yet)."""
        if self._client is None:
            from realrecall.llm.client import OpenAIChatClient

            self._client = OpenAIChatClient(self.config, sleep=self._sleep or asyncio.sleep)
        return self._client

    @property
    def stats(self) -> LLMStats:
        """The client's counters (all zero before the first request)."""
        return LLMStats() if self._client is None else self._client.stats

    @property
    def dropped_parameters(self) -> frozenset[str]:
        return frozenset() if self._client is None else self._client.dropped_parameters

    async def complete(self, request: ChatRequest) -> ChatResult:
        return await self.client.complete(request)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

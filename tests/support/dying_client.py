"""A chat client that kills its own process once, for the Ray engine's tests (sent to each actor).

It is realrecall's OpenAI client (made in the actor, on first use), except that the process holding it
exits on its ``die_at``-th request, before sending it, when ``marker`` does not exist yet (it creates
the marker first, so only one actor of the pool dies, once). The request in hand is lost with the
actor, as a request is when a machine of a cluster goes down, but the endpoint never saw it: Ray must
restart the actor and send it again, and the endpoint then counts each request once.
"""

from __future__ import annotations

import os
from pathlib import Path

from realrecall.llm import LLMConfig, OpenAIChatClient
from realrecall.llm.types import ChatRequest, ChatResult


class DyingChatClient:
    def __init__(self, config: LLMConfig, *, marker: Path, die_at: int) -> None:
        self.config = config
        self.marker = str(marker)
        self.die_at = die_at
        self.calls = 0
        self._client: OpenAIChatClient | None = None

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.calls += 1
        if self.calls == self.die_at and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()), encoding="utf-8")
            os._exit(1)
        if self._client is None:
            self._client = OpenAIChatClient(self.config)
        return await self._client.complete(request)


class AlwaysDyingChatClient:
    """Exits its process on every request: an actor that dies however often it is restarted."""

    async def complete(self, request: ChatRequest) -> ChatResult:
        os._exit(1)

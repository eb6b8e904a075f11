"""Test doubles of the generate tests: an in-process fake chat client and a small corpus."""

from __future__ import annotations

import errno
import json
import os
import re
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import LLMError
from realrecall.generate import store as store_module
from realrecall.llm.types import ChatRequest, ChatResult, Usage
from support.questions import is_situation_request, question_for_seed, situation_answer

Answer = str | Exception | ChatResult
Handler = Callable[[ChatRequest], Answer]


class FakeLLMError(LLMError):
    """An endpoint failure as the real client raises it: with a reason code."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def passage_of(request: ChatRequest) -> str:
    """The chunk text the prompt shows between <passage> tags."""
    for message in request.messages:
        match = re.search(r"<passage>\n(.*)\n</passage>", message["content"], re.DOTALL)
        if match:
            return match.group(1)
    return ""


def paraphrase(request: ChatRequest) -> str:
    """A valid answer of the in-process fake client, different for each request seed (a situation
    when step 1 of situation-first generation asks for one)."""
    if is_situation_request(request.messages):
        return situation_answer(request.seed or 0, request.messages)
    return json.dumps({"question": question_for_seed(request.seed or 0)})


class FakeChatClient:
    """A ChatClient with scripted answers (strings, ChatResults or exceptions), then a handler."""

    def __init__(self, handler: Handler = paraphrase) -> None:
        self.handler = handler
        self.script: deque[Answer] = deque()
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        answer = self.script.popleft() if self.script else self.handler(request)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, ChatResult):
            return answer
        return ChatResult(
            text=answer,
            finish_reason="stop",
            usage=Usage(prompt_tokens=100, completion_tokens=10),
            model=request.model,
            attempts=1,
            refusal=None,
            response_format_used="json_schema" if request.json_schema else None,
        )

    def generation_requests(self) -> list[ChatRequest]:
        return [r for r in self.requests if r.schema_name == "question"]


def make_corpus(n: int = 6, *, documents: int = 2) -> Corpus:
    chunks = [
        Chunk(
            id=f"c{i}",
            text=(
                f"Topic{i} configuration lives in settings file number {i}. "
                f"Restart the service after changing value{i}. Backups run nightly at {i} o'clock."
            ),
            title=f"Section {i}",
            metadata={"document": f"doc{i % documents}"},
        )
        for i in range(n)
    ]
    return Corpus(tuple(chunks), path="memory")


def fill_disk_at(monkeypatch: pytest.MonkeyPatch, path: Path, *, limit: int) -> None:
    """Appends to ``path`` fail like a full disk once it holds ``limit`` bytes: a short write of what
    still fits, then ENOSPC, as the system call does."""
    real = store_module._write

    def write(fd: int, data: memoryview) -> int:
        if os.path.samestat(os.fstat(fd), os.stat(path)):
            room = limit - os.fstat(fd).st_size
            if room <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd, data[:room])
        return real(fd, data)

    monkeypatch.setattr(store_module, "_write", write)

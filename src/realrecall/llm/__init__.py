"""The one package that talks to an OpenAI-compatible endpoint, and the one importing openai and tenacity.

    client = OpenAIChatClient(LLMConfig(base_url="http://127.0.0.1:8000/v1"))
    result = await client.complete(ChatRequest(messages=({"role": "user", "content": "..."},), model="m"))

Chat (``client``), embeddings (``embeddings``), the Batch API (``batch``); retries live in ``retry``,
endpoint and key resolution in ``endpoint``, and the plain types other packages use in ``types``.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr
from realrecall.errors import LLMCallError, LLMError
from realrecall.llm.types import (
    BatchCounts,
    BatchItemError,
    BatchStatus,
    ChatClient,
    ChatRequest,
    ChatResult,
    LLMConfig,
    LLMStats,
    ResponseFormat,
    Usage,
)

# The clients import openai and tenacity (about a second): loaded on first use, so that code which
# only needs the plain types (the generator, the CLI's other commands) starts fast.
_LAZY = {
    "OpenAIChatClient": "realrecall.llm.client",
    "OpenAIEmbedder": "realrecall.llm.embeddings",
    "download_batch_results": "realrecall.llm.batch",
    "get_batch": "realrecall.llm.batch",
    "poll_batch": "realrecall.llm.batch",
    "submit_batch": "realrecall.llm.batch",
    "write_batch_input": "realrecall.llm.batch",
}

if _typing.TYPE_CHECKING:
    from realrecall.llm.batch import (
        download_batch_results,
        get_batch,
        poll_batch,
        submit_batch,
        write_batch_input,
    )
    from realrecall.llm.client import OpenAIChatClient
    from realrecall.llm.embeddings import OpenAIEmbedder


__getattr__ = _lazy_getattr("realrecall.llm", _LAZY)


__all__ = [
    "BatchCounts",
    "BatchItemError",
    "BatchStatus",
    "ChatClient",
    "ChatRequest",
    "ChatResult",
    "LLMCallError",
    "LLMConfig",
    "LLMError",
    "LLMStats",
    "OpenAIChatClient",
    "OpenAIEmbedder",
    "ResponseFormat",
    "Usage",
    "download_batch_results",
    "get_batch",
    "poll_batch",
    "submit_batch",
    "write_batch_input",
]

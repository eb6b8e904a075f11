"""The one package that talks to an OpenAI-compatible endpoint, and the one importing openai and tenacity.

    client = OpenAIChatClient(LLMConfig(base_url="http://127.0.0.1:8000/v1"))
    result = await client.complete(ChatRequest(messages=({"role": "user", "content": "..."},), model="m"))

Chat (``client``), embeddings (``embeddings``), the Batch API (``batch``); retries live in ``retry``,
endpoint and key resolution in ``endpoint``, and the plain types other packages use in ``types``.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# The clients import openai and tenacity (about a second): loaded on first use, so that code which
# only needs the plain types (the generator, the CLI's other commands) starts fast.
if _typing.TYPE_CHECKING:
    from realrecall.errors import LLMCallError as LLMCallError
    from realrecall.errors import LLMError as LLMError
    from realrecall.llm.batch import download_batch_results as download_batch_results
    from realrecall.llm.batch import get_batch as get_batch
    from realrecall.llm.batch import poll_batch as poll_batch
    from realrecall.llm.batch import submit_batch as submit_batch
    from realrecall.llm.batch import write_batch_input as write_batch_input
    from realrecall.llm.client import OpenAIChatClient as OpenAIChatClient
    from realrecall.llm.deferred import DeferredChatClient as DeferredChatClient
    from realrecall.llm.embeddings import OpenAIEmbedder as OpenAIEmbedder
    from realrecall.llm.types import BatchCounts as BatchCounts
    from realrecall.llm.types import BatchItemError as BatchItemError
    from realrecall.llm.types import BatchStatus as BatchStatus
    from realrecall.llm.types import ChatClient as ChatClient
    from realrecall.llm.types import ChatRequest as ChatRequest
    from realrecall.llm.types import ChatResult as ChatResult
    from realrecall.llm.types import LLMConfig as LLMConfig
    from realrecall.llm.types import LLMStats as LLMStats
    from realrecall.llm.types import ResponseFormat as ResponseFormat
    from realrecall.llm.types import Usage as Usage

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

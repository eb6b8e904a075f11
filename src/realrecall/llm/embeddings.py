"""OpenAIEmbedder: vectors from ``/v1/embeddings``, batched and concurrent, with the shared retry policy."""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import functools
from collections.abc import Sequence
from typing import Literal

import numpy as np
import openai

from realrecall.errors import GaveUp, InputError, LLMError, MalformedResponse
from realrecall.llm.endpoint import open_sdk_client, resolve_endpoint
from realrecall.llm.retry import (
    Sleep,
    StatsRecorder,
    call_with_retries,
    gave_up_error,
)
from realrecall.llm.types import LLMConfig, LLMStats

__all__ = ["OpenAIEmbedder"]

Encoding = Literal["base64", "float"]


class OpenAIEmbedder:
    """An Embedder over an OpenAI-compatible ``/v1/embeddings``: rows in input order, float32.

    Texts go ``batch_size`` to a request, at most ``concurrency`` requests at a time. ``embed`` is
    synchronous (it runs its own event loop, in a worker thread when the caller already runs one);
    ``aembed`` is the same for async callers.
    """

    def __init__(
        self,
        model: str,
        config: LLMConfig,
        *,
        batch_size: int = 128,
        concurrency: int = 4,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not model:
            raise InputError("an embedder needs a model name")
        if batch_size < 1 or concurrency < 1:
            raise InputError(
                f"batch_size and concurrency must be at least 1, got {batch_size} and {concurrency}"
            )
        self.model = model
        self.name = f"openai:{model}"
        self.config = config
        self.batch_size = batch_size
        self.concurrency = concurrency
        self._endpoint = resolve_endpoint(config)
        self._sleep = sleep  # between retries; injectable so tests never wait real seconds
        self._stats = StatsRecorder()
        # base64 moves a quarter of the bytes and skips parsing a float list per vector (several times
        # faster on large runs); a server that rejects it switches this embedder to "float".
        self._encoding: Encoding = "base64"

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, base_url={self._endpoint.base_url!r})"

    @property
    def stats(self) -> LLMStats:
        return self._stats.snapshot()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``: shape (len(texts), d), float32; (0, 0) for no text."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aembed(texts))
        # Called from async code: asyncio.run cannot nest, so run the loop in a thread of its own.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self.aembed(texts)).result()

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """The async form of ``embed``."""
        items = _checked(texts)
        if not items:
            return np.zeros((0, 0), dtype=np.float32)
        batches = [items[start : start + self.batch_size] for start in range(0, len(items), self.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)
        sdk = open_sdk_client(self._endpoint)
        try:

            async def run(batch: list[str]) -> list[np.ndarray]:
                async with gate:
                    return await self._embed_batch(sdk, batch)

            parts = await asyncio.gather(*(run(batch) for batch in batches))
        finally:
            await sdk.close()
        rows = [row for part in parts for row in part]
        widths = {row.shape[0] for row in rows}
        if len(widths) != 1:
            raise LLMError(f"embeddings: the endpoint returned vectors of different sizes {sorted(widths)}")
        return np.stack(rows).astype(np.float32, copy=False)

    async def _embed_batch(self, sdk: openai.AsyncOpenAI, batch: list[str]) -> list[np.ndarray]:
        while True:
            encoding = self._encoding
            try:
                rows, _ = await call_with_retries(
                    functools.partial(self._send, sdk, batch, encoding),
                    config=self.config,
                    stats=self._stats,
                    sleep=self._sleep,
                )
            except GaveUp as gave_up:
                fault = gave_up.fault
                if encoding == "base64" and fault.status == 400 and "encoding_format" in fault.detail.lower():
                    # A server without base64 support: floats from now on, for this embedder.
                    self._encoding = "float"
                    self._stats.fallback("float")
                    continue
                self._stats.failure(fault.reason)
                raise gave_up_error(
                    gave_up, secret=self._endpoint.api_key, what="embeddings: ", server=self._endpoint.name
                ) from None
            return rows

    async def _send(self, sdk: openai.AsyncOpenAI, batch: list[str], encoding: Encoding) -> list[np.ndarray]:
        response = await sdk.embeddings.create(model=self.model, input=batch, encoding_format=encoding)
        data = list(getattr(response, "data", None) or [])
        if len(data) != len(batch):
            raise MalformedResponse(f"asked for {len(batch)} vectors, got {len(data)}")
        # The API numbers each vector; the list order itself is not promised.
        data.sort(key=lambda item: item.index)
        if [item.index for item in data] != list(range(len(batch))):
            raise MalformedResponse("vector indexes do not match the inputs")
        usage = getattr(response, "usage", None)
        if usage is not None:
            self._stats.tokens(usage.prompt_tokens, 0)
        return [_vector(item.embedding) for item in data]


def _vector(value: object) -> np.ndarray:
    """One embedding as float32, from base64 (little-endian float32 bytes) or a list of numbers."""
    try:
        if isinstance(value, str):
            return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4")
        return np.asarray(value, dtype=np.float32).reshape(-1)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise MalformedResponse(f"an embedding is neither base64 nor a list of numbers ({exc})") from None


def _checked(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InputError("embed() takes a sequence of texts, got a single string", hint="wrap it in a list")
    items = list(texts)
    for index, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"text {index} is a {type(text).__name__}, not a string")
        if not text:
            # The embeddings API rejects an empty input with a 400; say which one here instead.
            raise InputError(f"text {index} is empty", hint="drop empty texts before embedding")
    return items

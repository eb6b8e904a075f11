"""OpenAIEmbedder against the real HTTP fake: order, batching, retries, sync use from threads and loops."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from realrecall.errors import InputError, LLMCallError
from realrecall.evaluate.retrievers import Embedder
from realrecall.llm import LLMConfig, OpenAIEmbedder
from support.fake_openai import FakeOpenAI, fake_embedding

TEXTS = [f"text number {i} about topic {i % 3}" for i in range(10)]


def test_rows_are_float32_in_input_order_even_when_the_server_reorders(
    fake_openai: FakeOpenAI, config: LLMConfig
) -> None:
    fake_openai.reverse_embedding_order = True
    embedder = OpenAIEmbedder("text-embedding-3-small", config, batch_size=3)

    vectors = embedder.embed(TEXTS)

    assert vectors.dtype == np.float32
    assert vectors.shape == (10, 256)
    np.testing.assert_allclose(vectors, np.stack([fake_embedding(t) for t in TEXTS]), atol=1e-6)
    assert embedder.name == "openai:text-embedding-3-small"
    assert isinstance(embedder, Embedder)


def test_texts_go_in_batches_of_batch_size(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    OpenAIEmbedder("m", config, batch_size=4, concurrency=2).embed(TEXTS)

    bodies = fake_openai.bodies("embeddings")
    assert sorted(len(body["input"]) for body in bodies) == [2, 4, 4]
    assert sorted(t for body in bodies for t in body["input"]) == sorted(TEXTS)
    assert all(body["model"] == "m" and body["encoding_format"] == "base64" for body in bodies)


def test_server_without_base64_gets_floats_from_then_on(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    fake_openai.supports_base64_embeddings = False
    embedder = OpenAIEmbedder("m", config, batch_size=5, concurrency=1)

    vectors = embedder.embed(TEXTS)

    np.testing.assert_allclose(vectors, np.stack([fake_embedding(t) for t in TEXTS]), atol=1e-6)
    assert [body["encoding_format"] for body in fake_openai.bodies("embeddings")] == [
        "base64",
        "float",
        "float",
    ]
    assert embedder.stats.fallbacks == {"float": 1}


def test_embeddings_share_the_retry_policy(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    fake_openai.inject_fault("429", endpoint="embeddings")
    fake_openai.inject_fault("malformed", endpoint="embeddings")
    embedder = OpenAIEmbedder("m", config)

    vectors = embedder.embed(TEXTS)

    assert vectors.shape == (10, 256)
    assert fake_openai.count("embeddings") == 3
    assert embedder.stats.retries == {"rate_limited": 1, "malformed_response": 1}


def test_spent_budget_raises_llm_error(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    fake_openai.inject_fault("503", times=3, endpoint="embeddings")
    with pytest.raises(LLMCallError, match=r"^embeddings: server error \(503\) after 3 attempts"):
        OpenAIEmbedder("m", config).embed(TEXTS)


def test_embed_works_from_a_thread_and_from_inside_an_event_loop(
    fake_openai: FakeOpenAI, config: LLMConfig
) -> None:
    embedder = OpenAIEmbedder("m", config)
    from_thread: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: from_thread.append(embedder.embed(["alpha beta"])))
    worker.start()
    worker.join(timeout=30)

    async def inside_a_loop() -> np.ndarray:
        return embedder.embed(["alpha beta"])

    from_loop = asyncio.run(inside_a_loop())
    from_async = asyncio.run(embedder.aembed(["alpha beta"]))

    np.testing.assert_array_equal(from_thread[0], from_loop)
    np.testing.assert_array_equal(from_loop, from_async)


def test_no_text_gives_an_empty_array_without_a_request(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    assert OpenAIEmbedder("m", config).embed([]).shape == (0, 0)
    assert fake_openai.count("embeddings") == 0


@pytest.mark.parametrize(
    ("texts", "message"), [("one string", "single string"), (["ok", ""], "text 1 is empty")]
)
def test_bad_input_is_refused_before_any_request(
    fake_openai: FakeOpenAI, config: LLMConfig, texts: object, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        OpenAIEmbedder("m", config).embed(texts)  # type: ignore[arg-type]
    assert fake_openai.count("embeddings") == 0


def test_an_embeddings_endpoint_that_never_answers_is_named(config: LLMConfig) -> None:
    from dataclasses import replace

    from support.silent_server import SilentServer

    with SilentServer() as server:
        silent = replace(config, base_url=f"{server.url}/v1", timeout=0.3, max_attempts=1)
        with pytest.raises(LLMCallError) as caught:
            OpenAIEmbedder("m", silent).embed(TEXTS[:2])

    assert str(caught.value).startswith(f"embeddings: timed out after 1 attempt at {server.url}/v1")


def test_store_queries_are_embedded_with_the_runs_request_timeout() -> None:
    """RunSettings.request_timeout (--request-timeout) is the timeout of the endpoint that embeds a
    store's queries (and the dense retriever's, made the same way); nothing is sent here."""
    from realrecall.evaluate.retrievers import DenseOptions, RunSettings
    from realrecall.evaluate.retrievers import dense as dense_module
    from realrecall.evaluate.retrievers.store_common import query_embedder

    settings = RunSettings(request_timeout=7.5, use_cache=False)
    embedder = query_embedder(
        embedder=None, embed_model="m", base_url="http://127.0.0.1:9/v1", llm_config=None, settings=settings
    )
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.config.timeout == 7.5
    dense_options = DenseOptions(embed_model="m", base_url="http://127.0.0.1:9/v1")
    dense_embedder = dense_module._openai_embedder(dense_options, settings)
    assert isinstance(dense_embedder, OpenAIEmbedder)
    assert dense_embedder.config.timeout == 7.5

"""``dense`` through the OpenAI-compatible embedder against the HTTP fake on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from realrecall.corpus import Corpus
from realrecall.evaluate.retrievers import RunSettings, build_retriever
from support import fake_openai


def test_dense_embeds_through_the_endpoint_once_and_then_from_the_cache(
    pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with fake_openai.FakeOpenAI() as server:
        options = {"embed_model": "text-embedding-3-small", "base_url": server.base_url}
        settings = RunSettings(cache_dir=tmp_path)
        first = build_retriever("dense", pets_corpus, options=options, settings=settings).search(
            ["parrots mimic speech"], 2
        )
        assert first[0][0] == "birds"
        sent = server.count("embeddings")
        assert sent >= 1
        inputs = [body["input"] for body in server.bodies("embeddings")]
        embedded = [text for item in inputs for text in ([item] if isinstance(item, str) else item)]
        assert sorted(embedded) == sorted(
            [chunk.searchable_text() for chunk in pets_corpus] + ["parrots mimic speech"]
        )

        again = build_retriever("dense", pets_corpus, options=options, settings=settings).search(
            ["parrots mimic speech"], 2
        )
        assert again == first
        assert server.count("embeddings") == sent

"""The on-disk embedding cache: reruns embed nothing, damaged entries are recomputed, never fatal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import CachedEmbedder, DenseOptions, RunSettings, build_retriever
from realrecall.evaluate.retrievers.embedding_cache import text_key


def test_rerun_over_the_same_corpus_and_queries_embeds_nothing(pets_corpus: Corpus, tmp_path: Path) -> None:
    first = HashingEmbedder()
    settings = RunSettings(cache_dir=tmp_path)
    options = DenseOptions(embedder=first)
    expected = build_retriever("dense", pets_corpus, options=options, settings=settings).search(
        ["cats purr"], 3
    )
    assert len(first.texts_seen) == 6  # five chunks and one query

    second = HashingEmbedder()
    options = DenseOptions(embedder=second)
    assert (
        build_retriever("dense", pets_corpus, options=options, settings=settings).search(["cats purr"], 3)
        == expected
    )
    assert second.calls == 0


def test_only_new_texts_are_embedded_and_duplicates_once(tmp_path: Path) -> None:
    inner = HashingEmbedder()
    cache = CachedEmbedder(inner, tmp_path)
    cache.embed(["alpha", "beta"])
    vectors = cache.embed(["beta", "gamma", "gamma", "alpha"])
    assert inner.texts_seen == ["alpha", "beta", "gamma"]
    assert cache.misses == 3
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(["beta", "gamma", "gamma", "alpha"]))
    assert vectors.dtype == np.float32


def test_embedders_with_different_names_do_not_share_entries(tmp_path: Path) -> None:
    CachedEmbedder(HashingEmbedder("model-a"), tmp_path).embed(["alpha"])
    other = HashingEmbedder("model-b")
    CachedEmbedder(other, tmp_path).embed(["alpha"])
    assert other.texts_seen == ["alpha"]


def test_a_corrupt_entry_is_recomputed_and_repaired(tmp_path: Path) -> None:
    CachedEmbedder(HashingEmbedder(), tmp_path).embed(["alpha", "beta"])
    with sqlite3.connect(tmp_path / "embeddings.sqlite3") as connection:
        connection.execute(
            "UPDATE embeddings SET vector = ? WHERE text_sha256 = ?", (b"\x00\x01", text_key("alpha"))
        )
    inner = HashingEmbedder()
    vectors = CachedEmbedder(inner, tmp_path).embed(["alpha", "beta"])
    assert inner.texts_seen == ["alpha"]
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(["alpha", "beta"]))
    again = HashingEmbedder()
    CachedEmbedder(again, tmp_path).embed(["alpha", "beta"])
    assert again.calls == 0


def test_a_cache_file_that_is_not_a_database_is_moved_aside(tmp_path: Path) -> None:
    (tmp_path / "embeddings.sqlite3").write_bytes(b"this is not sqlite" * 100)
    inner = HashingEmbedder()
    vectors = CachedEmbedder(inner, tmp_path).embed(["alpha"])
    assert vectors.shape == (1, 64)
    assert inner.texts_seen == ["alpha"]
    assert [p.name.startswith("embeddings.sqlite3.corrupt-") for p in tmp_path.glob("*.corrupt-*")] == [True]
    again = HashingEmbedder()
    CachedEmbedder(again, tmp_path).embed(["alpha"])
    assert again.calls == 0


def test_an_unwritable_cache_folder_falls_back_to_embedding(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    inner = HashingEmbedder()
    vectors = CachedEmbedder(inner, blocker / "cache").embed(["alpha", "beta"])
    assert vectors.shape == (2, 64)
    assert inner.texts_seen == ["alpha", "beta"]


def test_use_cache_off_writes_nothing(pets_corpus: Corpus, tmp_path: Path) -> None:
    settings = RunSettings(cache_dir=tmp_path, use_cache=False)
    build_retriever(
        "dense", pets_corpus, options=DenseOptions(embedder=HashingEmbedder()), settings=settings
    ).search(["cats"], 1)
    assert list(tmp_path.iterdir()) == []


def test_embedding_nothing_returns_an_empty_array_without_asking(tmp_path: Path) -> None:
    inner = HashingEmbedder()
    assert CachedEmbedder(inner, tmp_path).embed([]).shape == (0, 0)
    assert inner.calls == 0


def test_concurrent_writers_share_one_cache_without_losing_entries(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"text number {i}" for i in range(40)]

    def fill(offset: int) -> np.ndarray:
        # Each worker has its own connection, as separate processes would.
        return CachedEmbedder(HashingEmbedder(), tmp_path).embed(texts[offset:] + texts[:offset])

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(fill, [0, 10, 20, 30]))
    assert all(result.shape == (40, 64) for result in results)
    after = HashingEmbedder()
    CachedEmbedder(after, tmp_path).embed(texts)
    assert after.calls == 0


def test_a_cache_folder_the_user_named_that_is_a_file_is_refused_not_silently_unused(
    pets_corpus: Corpus, tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "gold.jsonl"
    not_a_folder.write_text("{}\n")
    options = DenseOptions(embedder=HashingEmbedder())
    with pytest.raises(InputError, match=r"gold\.jsonl: the embedding cache folder is a file"):
        build_retriever("dense", pets_corpus, options=options, settings=RunSettings(cache_dir=not_a_folder))
    assert not_a_folder.read_text() == "{}\n"

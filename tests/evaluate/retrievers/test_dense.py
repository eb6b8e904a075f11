"""Dense retrieval over a deterministic fake embedder: cosine ranking, ties, errors, the cache in the path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import DenseOptions, DenseRetriever, RunSettings, build_retriever
from realrecall.evaluate.retrievers.dense import normalise_rows


class FixedEmbedder:
    """Maps each known text to a given vector, so cosine similarities can be worked out by hand."""

    name = "fixed"

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self.vectors[text] for text in texts], dtype=np.float32)


def test_ranks_by_cosine_similarity_not_by_length() -> None:
    corpus = Corpus((Chunk("long", "L"), Chunk("aligned", "A"), Chunk("opposite", "O")))
    embedder = FixedEmbedder({"L": [10.0, 10.0], "A": [1.0, 0.1], "O": [-1.0, 0.0], "q": [1.0, 0.0]})
    assert DenseRetriever(corpus, embedder).search(["q"], 3) == [["aligned", "long", "opposite"]]


def test_equal_similarities_keep_corpus_order_and_k_is_capped_at_the_corpus() -> None:
    corpus = Corpus((Chunk("z", "same"), Chunk("a", "same2"), Chunk("m", "other")))
    embedder = FixedEmbedder({"same": [1, 0], "same2": [2, 0], "other": [0, 1], "q": [1, 0]})
    assert DenseRetriever(corpus, embedder).search(["q"], 50) == [["z", "a", "m"]]


def test_zero_vectors_score_zero_instead_of_nan() -> None:
    rows = normalise_rows(np.array([[0.0, 0.0], [3.0, 4.0]]))
    assert rows.tolist() == [[0.0, 0.0], [pytest.approx(0.6), pytest.approx(0.8)]]


def test_the_chunk_sharing_words_with_the_query_ranks_first(pets_corpus: Corpus, tmp_path: Path) -> None:
    options = DenseOptions(embedder=HashingEmbedder())
    retriever = build_retriever(
        "dense", pets_corpus, options=options, settings=RunSettings(cache_dir=tmp_path)
    )
    assert retriever.name == "dense"
    ranked = retriever.search(["parrots mimic speech", "goldfish water bowls"], 2)
    assert [ids[0] for ids in ranked] == ["birds", "fish"]
    assert all(len(ids) == 2 for ids in ranked)
    assert "fake-hashing-64" in retriever.description


def test_corpus_is_embedded_in_slices_and_a_query_batch_in_one_call(pets_corpus: Corpus) -> None:
    embedder = HashingEmbedder()
    retriever = DenseRetriever(pets_corpus, embedder, slice_size=2)
    assert embedder.calls == 3
    assert len(embedder.texts_seen) == 5
    retriever.search(["a", "b", "c"], 1)
    assert embedder.calls == 4


def test_index_progress_reports_each_embedded_slice(pets_corpus: Corpus, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    DenseRetriever(
        pets_corpus, HashingEmbedder(), slice_size=2, progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    settings = RunSettings(cache_dir=tmp_path, index_progress=lambda done, total: seen.append((done, total)))
    seen.clear()
    build_retriever("dense", pets_corpus, options={"embedder": HashingEmbedder()}, settings=settings)
    assert seen == [(0, 5), (5, 5)]


def test_dense_without_an_embedding_model_says_how_to_give_one(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError, match="needs an embedding model; pass --embed-model"):
        build_retriever("dense", pets_corpus)


def test_an_embedder_changing_dimension_between_chunks_and_queries_is_an_input_error() -> None:
    corpus = Corpus((Chunk("a", "A"),))
    embedder = FixedEmbedder({"A": [1.0, 0.0], "q": [1.0, 0.0, 0.0]})
    with pytest.raises(InputError, match="dimension 3 but chunks dimension 2"):
        DenseRetriever(corpus, embedder).search(["q"], 1)


def test_empty_query_text_is_an_input_error(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError, match="query 1 of the batch has no text"):
        DenseRetriever(pets_corpus, HashingEmbedder()).search([""], 1)


def test_embeddings_made_elsewhere_for_the_same_chunks_are_searched_without_embedding_the_corpus(
    pets_corpus: Corpus,
) -> None:
    # The Ray engine's retrieval actors: the corpus embedded by its pool, each actor embeds its queries.
    from realrecall.evaluate.retrievers.dense import embed_corpus
    from realrecall.evaluate.retrievers.options import CorpusEmbeddings

    rows = embed_corpus(pets_corpus, HashingEmbedder())
    embedder = HashingEmbedder()
    given = CorpusEmbeddings(embedder.name, tuple(pets_corpus.ids), rows)
    retriever = DenseRetriever(pets_corpus, embedder, embedded=given)
    assert embedder.texts_seen == []
    queries = ["my cat", "a dog barking"]
    assert retriever.search(queries, 3) == DenseRetriever(pets_corpus, HashingEmbedder()).search(queries, 3)
    assert embedder.texts_seen == queries


def test_embeddings_made_by_another_embedder_or_of_other_chunks_are_not_used(pets_corpus: Corpus) -> None:
    from realrecall.evaluate.retrievers.options import CorpusEmbeddings

    zeros = np.zeros((len(pets_corpus), 4), dtype=np.float32)
    for given in (
        CorpusEmbeddings("another-model", tuple(pets_corpus.ids), zeros),
        CorpusEmbeddings("fake-hashing-64", tuple(reversed(pets_corpus.ids)), zeros),
    ):
        embedder = HashingEmbedder()
        DenseRetriever(pets_corpus, embedder, embedded=given)
        assert len(embedder.texts_seen) == len(pets_corpus)


class CallRecorder(HashingEmbedder):
    """Keeps each call's texts: the calls, not only the texts, decide a local model's rows."""

    def __init__(self) -> None:
        super().__init__()
        self.each: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.each.append(list(texts))
        return super().embed(texts)


# Duplicate texts within a slice and across slices, lengths that reorder them when sorted by length.
REPEATS = Corpus(
    tuple(
        Chunk(f"c{i}", text)
        for i, text in enumerate(
            ["a b", "c d e f", "a b", "g", "h i j", "c d e f", "k l m n o p", "g", "q r", "s t u v w"]
        )
    )
)


@pytest.mark.parametrize("length_sorted", [True, False])
@pytest.mark.parametrize("use_cache", [True, False])
def test_embedding_at_once_makes_the_calls_and_rows_of_embedding_slice_after_slice(
    tmp_path: Path, length_sorted: bool, use_cache: bool
) -> None:
    # The Ray engine's embedding actors get every call at once: the very calls, through a cache that
    # already holds some texts, so the very rows (a local model's depend on a call's other texts).
    from realrecall.evaluate.retrievers.dense import embed_corpus, embed_corpus_at_once
    from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder

    folders = {"here": tmp_path / "here", "at_once": tmp_path / "at_once"}
    for folder in folders.values():
        CachedEmbedder(HashingEmbedder(), folder).embed(["g", "q r", "unrelated"])
    settings = RunSettings(cache_dir=folders["at_once"], use_cache=use_cache)
    here = CallRecorder()
    inner: Any = CachedEmbedder(here, folders["here"]) if use_cache else here
    expected = embed_corpus(REPEATS, inner, slice_size=3, length_sorted=length_sorted)

    elsewhere = CallRecorder()
    batches: list[list[list[str]]] = []
    seen: list[tuple[int, int]] = []

    def embed_calls(calls: list[list[str]], progress: Any, arrived: Any) -> list[np.ndarray]:
        batches.append(calls)
        made = [elsewhere.embed(call) for call in calls]
        for index, rows in enumerate(made):
            arrived(index, rows)
        return made

    rows = embed_corpus_at_once(
        REPEATS,
        elsewhere.name,
        embed_calls,
        settings,
        slice_size=3,
        length_sorted=length_sorted,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(batches) == 1  # every call at once
    assert elsewhere.each == here.each
    assert np.array_equal(rows, expected)
    assert seen[-1] == (len(REPEATS), len(REPEATS))
    if use_cache:
        assert sum(map(len, here.each)) == 5  # the cache and the repeats spared 5 of the 10 texts
        again = CallRecorder()
        assert np.array_equal(
            embed_corpus(REPEATS, CachedEmbedder(again, folders["at_once"]), length_sorted=length_sorted),
            expected,
        )
        assert again.each == []  # the rows made at once were cached


def test_embedding_at_once_keeps_each_calls_rows_in_the_cache_as_they_come_back(tmp_path: Path) -> None:
    # Ctrl-C while the Ray engine's actors embed a corpus: the calls already back are in the cache, as
    # embed_corpus keeps each slice it finished; a rerun sends only the others.
    from realrecall.evaluate.retrievers.dense import embed_corpus, embed_corpus_at_once
    from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder

    elsewhere = CallRecorder()

    def interrupted(calls: list[list[str]], progress: Any, arrived: Any) -> list[np.ndarray]:
        arrived(1, elsewhere.embed(calls[1]))  # the second call came back first
        raise KeyboardInterrupt

    settings = RunSettings(cache_dir=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        embed_corpus_at_once(REPEATS, elsewhere.name, interrupted, settings, slice_size=3)
    rerun = CallRecorder()
    rows = embed_corpus(REPEATS, CachedEmbedder(rerun, tmp_path), slice_size=3)
    assert sum(map(len, rerun.each)) == len({chunk.text for chunk in REPEATS}) - len(set(elsewhere.each[0]))
    assert not set(elsewhere.each[0]) & {text for call in rerun.each for text in call}
    assert np.array_equal(rows, embed_corpus(REPEATS, HashingEmbedder(), slice_size=3))

"""Reciprocal rank fusion on hand-computed ranks, and the hybrid retriever built from its parts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import (
    HybridOptions,
    HybridRetriever,
    RunSettings,
    build_retriever,
    reciprocal_rank_fusion,
)


class ListRetriever:
    """Always answers the same ranked list, cut to k; records the k it was asked for."""

    def __init__(self, name: str, ranking: list[str]) -> None:
        self.name = name
        self.description = f"fixed {name}"
        self.ranking = ranking
        self.asked_k: list[int] = []

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        self.asked_k.append(k)
        return [self.ranking[:k] for _ in queries]


def test_rrf_scores_match_the_formula_worked_by_hand() -> None:
    # a: ranks 1 and 3 -> 1/61 + 1/63;  b: ranks 2 and 1 -> 1/62 + 1/61;  c: rank 3 only -> 1/63;
    # d: rank 2 only -> 1/62.
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]], rrf_k=60)
    assert [chunk_id for chunk_id, _ in fused] == ["b", "a", "d", "c"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(1 / 63)
    assert scores["d"] == pytest.approx(1 / 62)


def test_rrf_with_rrf_k_zero_weighs_a_single_top_rank_as_two_second_ranks() -> None:
    # With rrf_k=0, rank 1 in one list (1/1) is worth rank 2 in both (1/2 + 1/2): w, x and y tie at 1 and
    # fall back to corpus order (y has no position, so it comes last of the three); z has 1/3 + 1/3.
    fused = reciprocal_rank_fusion([["x", "y", "z"], ["w", "y", "z"]], rrf_k=0, order={"w": 0, "x": 1})
    assert [chunk_id for chunk_id, _ in fused] == ["w", "x", "y", "z"]
    assert dict(fused)["y"] == pytest.approx(1.0)


def test_rrf_ties_follow_corpus_order_then_id() -> None:
    fused = reciprocal_rank_fusion([["p"], ["q"], ["r"]], order={"r": 0, "q": 1})
    assert [chunk_id for chunk_id, _ in fused] == ["r", "q", "p"]


def test_hybrid_fuses_deeper_lists_than_k_and_cuts_to_k() -> None:
    corpus = Corpus(tuple(Chunk(name, name) for name in "abcdef"))
    lexical = ListRetriever("lexical", ["a", "b", "c", "d"])
    semantic = ListRetriever("semantic", ["c", "e", "b", "f"])
    hybrid = HybridRetriever(corpus, [lexical, semantic], fusion_depth=4)
    # b: 1/62 + 1/63, c: 1/63 + 1/61 -> c first; then b; then a (1/61) beats e (1/62).
    assert hybrid.search(["query"], 3) == [["c", "b", "a"]]
    assert lexical.asked_k == semantic.asked_k == [4]
    assert "rrf_k=60" in hybrid.description
    assert "fixed lexical" in hybrid.description


def test_hybrid_needs_two_components() -> None:
    corpus = Corpus((Chunk("a", "a"),))
    with pytest.raises(InputError, match="at least two"):
        HybridRetriever(corpus, [ListRetriever("one", ["a"])])


def test_hybrid_by_name_fuses_bm25_with_the_dense_component(pets_corpus: Corpus, tmp_path: Path) -> None:
    options = HybridOptions(embedder=HashingEmbedder(), rrf_k=10, dense_component="dense")
    retriever = build_retriever(
        "hybrid", pets_corpus, options=options, settings=RunSettings(cache_dir=tmp_path)
    )
    assert retriever.name == "hybrid"
    assert retriever.search(["do dogs bark at strangers"], 2)[0][0] == "dogs"
    assert "bm25s" in retriever.description
    assert "dense: cosine" in retriever.description
    assert "rrf_k=10" in retriever.description


def test_hybrid_rejects_an_unknown_dense_component(pets_corpus: Corpus) -> None:
    with pytest.raises(
        InputError, match="unknown dense component 'sparse' for hybrid; choose from local-dense, dense"
    ):
        build_retriever("hybrid", pets_corpus, options={"dense_component": "sparse"})


ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10)


@given(rankings=st.lists(ids, min_size=1, max_size=4), rrf_k=st.integers(min_value=0, max_value=100))
def test_rrf_ranks_every_retrieved_id_once_best_score_first(rankings: list[list[str]], rrf_k: int) -> None:
    fused = reciprocal_rank_fusion(rankings, rrf_k=rrf_k)
    assert sorted(chunk_id for chunk_id, _ in fused) == sorted({i for ranking in rankings for i in ranking})
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)


@given(ranking=ids.filter(bool), copies=st.integers(min_value=1, max_value=4))
def test_rrf_of_identical_rankings_keeps_their_order(ranking: list[str], copies: int) -> None:
    fused = reciprocal_rank_fusion([ranking] * copies)
    assert [chunk_id for chunk_id, _ in fused] == ranking

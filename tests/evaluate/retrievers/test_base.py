"""Shared behaviour: deterministic top-k, the retrieve() driver, options validation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from realrecall.errors import InputError
from realrecall.evaluate.retrievers import (
    HybridOptions,
    LocalDenseOptions,
    RunSettings,
    default_cache_dir,
    retrieve,
    top_k_indices,
)


class EchoRetriever:
    """Returns the query text as its only id, and records each batch it was asked."""

    name = "echo"
    description = "echo"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        self.batches.append(list(queries))
        return [[query] for query in queries]


def test_top_k_orders_by_score_then_corpus_position() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9], dtype=np.float32)
    assert top_k_indices(scores, 5).tolist() == [1, 4, 0, 2, 3]


def test_top_k_settles_ties_at_the_cut_by_corpus_position() -> None:
    scores = np.array([0.3, 0.7, 0.7, 0.7, 0.7, 0.2])
    assert top_k_indices(scores, 2).tolist() == [1, 2]
    assert top_k_indices(scores, 3).tolist() == [1, 2, 3]


def test_top_k_larger_than_the_corpus_returns_everything() -> None:
    assert top_k_indices(np.array([0.1, 0.3]), 10).tolist() == [1, 0]


def test_top_k_with_minimum_drops_scores_not_above_it() -> None:
    assert top_k_indices(np.array([0.0, 2.0, 0.0, 1.0]), 10, minimum=0.0).tolist() == [1, 3]
    assert top_k_indices(np.zeros(4), 3, minimum=0.0).tolist() == []


def test_top_k_matches_a_full_stable_sort_on_random_scores() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        scores = rng.integers(0, 5, size=40).astype(np.float64)  # many ties on purpose
        k = int(rng.integers(1, 45))
        expected = sorted(range(40), key=lambda i: (-scores[i], i))[:k]
        assert top_k_indices(scores, k).tolist() == expected


def test_retrieve_asks_in_batches_and_reports_progress() -> None:
    retriever = EchoRetriever()
    queries = {f"q{i}": f"text {i}" for i in range(5)}
    seen: list[tuple[int, int]] = []
    ranked = retrieve(
        retriever, queries, 3, batch_size=2, progress=lambda done, total: seen.append((done, total))
    )
    assert [len(batch) for batch in retriever.batches] == [2, 2, 1]
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    assert ranked == {query_id: [text] for query_id, text in queries.items()}
    assert list(ranked) == list(queries)


def test_retrieve_names_the_query_with_empty_text_before_searching() -> None:
    retriever = EchoRetriever()
    with pytest.raises(InputError, match="query 'q2' has no text"):
        retrieve(retriever, {"q1": "fine", "q2": "   "}, 10)
    assert retriever.batches == []


@pytest.mark.parametrize("k", [0, -1, True, 2.5])
def test_retrieve_rejects_a_k_that_is_not_a_positive_integer(k: object) -> None:
    with pytest.raises(InputError, match="k must be a positive integer"):
        retrieve(EchoRetriever(), {"q": "x"}, k)  # type: ignore[arg-type]


def test_retrieve_rejects_a_retriever_that_loses_queries() -> None:
    class Lossy(EchoRetriever):
        def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
            return []

    with pytest.raises(InputError, match="answered 0 queries for a batch of 1"):
        retrieve(Lossy(), {"q": "x"}, 5)


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        (HybridOptions, "rrf_k", 0),
        (RunSettings, "workers", -2),
        (LocalDenseOptions, "batch_size", 0),
        (HybridOptions, "batch_size", 0),
        (HybridOptions, "fusion_depth", 1.5),
    ],
)
def test_options_reject_non_positive_integers(kind: type, field: str, value: object) -> None:
    with pytest.raises(InputError, match=field):
        kind(**{field: value})


def test_options_cache_dir_defaults_under_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "realrecall" / "embeddings"
    assert RunSettings().resolved_cache_dir == tmp_path / "realrecall" / "embeddings"
    assert RunSettings(cache_dir=tmp_path / "x").resolved_cache_dir == tmp_path / "x"

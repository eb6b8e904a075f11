"""``hybrid``: BM25 and a dense retriever fused by reciprocal rank fusion (RRF).

RRF (Cormack, Clarke and Büttcher, SIGIR 2009) scores each chunk by its ranks alone::

    score(d) = sum over component rankings r containing d of  1 / (rrf_k + rank_r(d))

with ``rank_r(d)`` 1-based and ``rrf_k`` = 60 as in the paper. A chunk missing from a ranking adds
nothing for it. Each component is asked for ``max(k, fusion_depth)`` ids so that a chunk ranked just
below k by both can still rise into the fused top k. Equal fused scores are ordered by corpus position,
so a run is reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Retriever, RetrieverOptions, check_k, check_queries

__all__ = ["HybridRetriever", "reciprocal_rank_fusion"]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, rrf_k: int = 60, order: Mapping[str, int] | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked id lists by RRF: ``(id, score)`` best first, ties by ``order`` (then by id).

    ``order`` maps an id to its corpus position; ids not in it sort after those that are.
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (rrf_k + rank)
    position = order or {}
    unknown = len(position)
    return sorted(scores.items(), key=lambda item: (-item[1], position.get(item[0], unknown), item[0]))


class HybridRetriever:
    """Several retrievers fused by reciprocal rank fusion (see the module docstring)."""

    name = "hybrid"

    def __init__(
        self, corpus: Corpus, components: Sequence[Retriever], *, rrf_k: int = 60, fusion_depth: int = 100
    ) -> None:
        if len(components) < 2:
            raise InputError("hybrid retrieval needs at least two component retrievers")
        self._components = tuple(components)
        self._order = {chunk_id: position for position, chunk_id in enumerate(corpus.ids)}
        self._rrf_k = rrf_k
        self._depth = fusion_depth
        parts = "; ".join(f"[{component.description}]" for component in components)
        self.description = f"hybrid: reciprocal rank fusion (rrf_k={rrf_k}, depth {fusion_depth}) of {parts}"

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        depth = max(k, self._depth)
        per_component = [component.search(queries, depth) for component in self._components]
        fused = []
        for rankings in zip(*per_component, strict=True):
            ranked = reciprocal_rank_fusion(rankings, rrf_k=self._rrf_k, order=self._order)
            fused.append([chunk_id for chunk_id, _ in ranked[:k]])
        return fused


DENSE_COMPONENTS = ("local-dense", "dense")


def build_hybrid(corpus: Corpus, options: RetrieverOptions) -> HybridRetriever:
    """``hybrid``: BM25 fused with ``options.dense_component`` (``local-dense`` or ``dense``)."""
    from realrecall.evaluate.retrievers.bm25 import BM25Retriever
    from realrecall.evaluate.retrievers.dense import build_dense
    from realrecall.evaluate.retrievers.local_dense import build_local_dense

    if options.dense_component not in DENSE_COMPONENTS:
        raise InputError(
            f"unknown dense component {options.dense_component!r} for hybrid",
            hint=f"choose from {', '.join(DENSE_COMPONENTS)}",
        )
    dense = build_local_dense if options.dense_component == "local-dense" else build_dense
    components: list[Retriever] = [BM25Retriever.from_options(corpus, options), dense(corpus, options)]
    return HybridRetriever(corpus, components, rrf_k=options.rrf_k, fusion_depth=options.fusion_depth)

"""``hybrid``: BM25 and a dense retriever fused by reciprocal rank fusion (RRF).

RRF (Cormack, Clarke and Büttcher, SIGIR 2009) scores each chunk by its ranks alone::

    score(d) = sum over component rankings r containing d of  1 / (rrf_k + rank_r(d))

with ``rank_r(d)`` 1-based and ``rrf_k`` = 60 as in the paper. A chunk missing from a ranking adds
nothing for it. Each component is asked for ``max(k, fusion_depth)`` ids so that a chunk ranked just
below k by both can still rise into the fused top k. Equal fused scores are ordered by corpus position,
so a run is reproducible.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, TypeVar

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Retriever, check_k, check_queries
from realrecall.evaluate.retrievers.bm25 import BM25Options, BM25Retriever
from realrecall.evaluate.retrievers.dense import DenseOptions, build_dense
from realrecall.evaluate.retrievers.local_dense import LocalDenseOptions, build_local_dense
from realrecall.evaluate.retrievers.options import RetrieverSpec, RunSettings

__all__ = ["RETRIEVER", "HybridOptions", "HybridRetriever", "reciprocal_rank_fusion"]

DENSE_COMPONENTS = ("local-dense", "dense")


# Hybrid takes its components' options too (k1=1.2, embed_model=...), flat as the command line gives
# them, so it inherits their fields rather than nesting them; build_hybrid splits them up again.
@dataclass(frozen=True, kw_only=True)
class HybridOptions(BM25Options, DenseOptions, LocalDenseOptions):
    """The options of ``hybrid``: its own three, then every option of bm25, dense and local-dense."""

    dense_component: Annotated[str, "the dense half: local-dense or dense (--hybrid-dense)"] = "local-dense"
    rrf_k: Annotated[int, "the RRF constant; smaller values favour top ranks more"] = 60
    fusion_depth: Annotated[int, "each component returns max(k, fusion_depth) ids before fusion"] = 100

    def __post_init__(self) -> None:
        BM25Options.__post_init__(self)
        LocalDenseOptions.__post_init__(self)
        if self.dense_component not in DENSE_COMPONENTS:
            raise InputError(
                f"unknown dense component {self.dense_component!r} for hybrid",
                hint=f"choose from {', '.join(DENSE_COMPONENTS)}",
            )
        for name in ("rrf_k", "fusion_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")


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


Part = TypeVar("Part")


def part(options: HybridOptions, kind: type[Part]) -> Part:
    """The options of one component, taken from the hybrid's."""
    names = [item.name for item in dataclasses.fields(kind)]  # type: ignore[arg-type]
    return kind(**{name: getattr(options, name) for name in names})


def build_hybrid(corpus: Corpus, options: HybridOptions, settings: RunSettings) -> HybridRetriever:
    """``hybrid``: BM25 fused with ``options.dense_component`` (``local-dense`` or ``dense``)."""
    bm25 = BM25Retriever.from_options(corpus, part(options, BM25Options))
    dense = (
        build_local_dense(corpus, part(options, LocalDenseOptions), settings)
        if options.dense_component == "local-dense"
        else build_dense(corpus, part(options, DenseOptions), settings)
    )
    components: list[Retriever] = [bm25, dense]
    return HybridRetriever(corpus, components, rrf_k=options.rrf_k, fusion_depth=options.fusion_depth)


RETRIEVER = RetrieverSpec(
    name="hybrid",
    options=HybridOptions,
    build=build_hybrid,
    summary="bm25 and a dense retriever fused by reciprocal rank fusion",
    libraries=("bm25s", "PyStemmer", "sentence-transformers", "torch", "openai"),
)

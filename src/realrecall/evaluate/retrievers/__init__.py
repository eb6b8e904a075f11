"""The retrievers ``realrecall evaluate --retriever`` scores: bm25, dense, local-dense, hybrid, your own.

Build one by name with ``build_retriever("bm25", corpus, options={"k1": 1.2})`` and run it over
queries with ``retrieve(retriever, {query_id: text}, k)``. Each retriever module declares its options
dataclass (``BM25Options``...) and a ``RetrieverSpec``; ``RETRIEVERS`` maps names to them. Anything
with a ``name``, a ``description`` and a ``search(queries, k)`` method is a ``Retriever``; a plain
function ``f(query, k)`` becomes one through ``FunctionRetriever``.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr

# Exported lazily: the CLI reads a run's options (``options``) without loading every retriever module
# (bm25, the stores, the embedding cache: about 20 ms of each evaluate process that scores a run).
_LAZY = {
    "Embedder": "realrecall.evaluate.retrievers.base",
    "Retriever": "realrecall.evaluate.retrievers.base",
    "retrieve": "realrecall.evaluate.retrievers.base",
    "top_k_indices": "realrecall.evaluate.retrievers.base",
    "BM25Options": "realrecall.evaluate.retrievers.bm25",
    "BM25Retriever": "realrecall.evaluate.retrievers.bm25",
    "CustomOptions": "realrecall.evaluate.retrievers.custom",
    "FunctionRetriever": "realrecall.evaluate.retrievers.function",
    "load_function": "realrecall.evaluate.retrievers.custom",
    "DenseOptions": "realrecall.evaluate.retrievers.dense",
    "DenseRetriever": "realrecall.evaluate.retrievers.dense",
    "CachedEmbedder": "realrecall.evaluate.retrievers.embedding_cache",
    "HybridOptions": "realrecall.evaluate.retrievers.hybrid",
    "HybridRetriever": "realrecall.evaluate.retrievers.hybrid",
    "reciprocal_rank_fusion": "realrecall.evaluate.retrievers.hybrid",
    "LocalDenseOptions": "realrecall.evaluate.retrievers.local_dense",
    "RetrieverSpec": "realrecall.evaluate.retrievers.options",
    "RunSettings": "realrecall.evaluate.retrievers.options",
    "default_cache_dir": "realrecall.evaluate.retrievers.options",
    "make_options": "realrecall.evaluate.retrievers.options",
    "parse_option_assignments": "realrecall.evaluate.retrievers.options",
    "RETRIEVERS": "realrecall.evaluate.retrievers.registry",
    "build_retriever": "realrecall.evaluate.retrievers.registry",
    "choices": "realrecall.evaluate.retrievers.registry",
    "find_spec": "realrecall.evaluate.retrievers.registry",
    "register": "realrecall.evaluate.retrievers.registry",
    "unregister": "realrecall.evaluate.retrievers.registry",
}

if _typing.TYPE_CHECKING:
    from realrecall.evaluate.retrievers.base import Embedder, Retriever, retrieve, top_k_indices
    from realrecall.evaluate.retrievers.bm25 import BM25Options, BM25Retriever
    from realrecall.evaluate.retrievers.custom import CustomOptions, load_function
    from realrecall.evaluate.retrievers.dense import DenseOptions, DenseRetriever
    from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder
    from realrecall.evaluate.retrievers.function import FunctionRetriever
    from realrecall.evaluate.retrievers.hybrid import HybridOptions, HybridRetriever, reciprocal_rank_fusion
    from realrecall.evaluate.retrievers.local_dense import LocalDenseOptions
    from realrecall.evaluate.retrievers.options import (
        RetrieverSpec,
        RunSettings,
        default_cache_dir,
        make_options,
        parse_option_assignments,
    )
    from realrecall.evaluate.retrievers.registry import (
        RETRIEVERS,
        build_retriever,
        choices,
        find_spec,
        register,
        unregister,
    )

__getattr__ = _lazy_getattr("realrecall.evaluate.retrievers", _LAZY)

__all__ = [
    "RETRIEVERS",
    "BM25Options",
    "BM25Retriever",
    "CachedEmbedder",
    "CustomOptions",
    "DenseOptions",
    "DenseRetriever",
    "Embedder",
    "FunctionRetriever",
    "HybridOptions",
    "HybridRetriever",
    "LocalDenseOptions",
    "Retriever",
    "RetrieverSpec",
    "RunSettings",
    "build_retriever",
    "choices",
    "default_cache_dir",
    "find_spec",
    "load_function",
    "make_options",
    "parse_option_assignments",
    "reciprocal_rank_fusion",
    "register",
    "retrieve",
    "top_k_indices",
    "unregister",
]

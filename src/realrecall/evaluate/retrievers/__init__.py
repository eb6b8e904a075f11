"""The retrievers ``realrecall evaluate --retriever`` scores: bm25, dense, local-dense, hybrid, your own.

Build one by name with ``build_retriever("bm25", corpus, options={"k1": 1.2})`` and run it over
queries with ``retrieve(retriever, {query_id: text}, k)``. Each retriever module declares its options
dataclass (``BM25Options``...) and a ``RetrieverSpec``; ``RETRIEVERS`` maps names to them. Anything
with a ``name``, a ``description`` and a ``search(queries, k)`` method is a ``Retriever``; a plain
function ``f(query, k)`` becomes one through ``FunctionRetriever``.
"""

from __future__ import annotations

from realrecall.evaluate.retrievers.base import Embedder, Retriever, retrieve, top_k_indices
from realrecall.evaluate.retrievers.bm25 import BM25Options, BM25Retriever
from realrecall.evaluate.retrievers.custom import CustomOptions, FunctionRetriever, load_function
from realrecall.evaluate.retrievers.dense import DenseOptions, DenseRetriever
from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder
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

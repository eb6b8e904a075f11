"""The retrievers ``realrecall evaluate --retriever`` scores: bm25, dense, local-dense, hybrid, your own.

Build one by name with ``build_retriever("bm25", corpus)`` and run it over queries with
``retrieve(retriever, {query_id: text}, k)``. Anything with a ``name``, a ``description`` and a
``search(queries, k)`` method is a ``Retriever``; a plain function ``f(query, k)`` becomes one through
``FunctionRetriever``.
"""

from __future__ import annotations

from realrecall.evaluate.retrievers.base import (
    Embedder,
    Retriever,
    RetrieverOptions,
    default_cache_dir,
    retrieve,
    top_k_indices,
)
from realrecall.evaluate.retrievers.bm25 import BM25Retriever
from realrecall.evaluate.retrievers.custom import FunctionRetriever, load_function
from realrecall.evaluate.retrievers.dense import DenseRetriever
from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder
from realrecall.evaluate.retrievers.hybrid import HybridRetriever, reciprocal_rank_fusion
from realrecall.evaluate.retrievers.registry import RETRIEVERS, build_retriever

__all__ = [
    "RETRIEVERS",
    "BM25Retriever",
    "CachedEmbedder",
    "DenseRetriever",
    "Embedder",
    "FunctionRetriever",
    "HybridRetriever",
    "Retriever",
    "RetrieverOptions",
    "build_retriever",
    "default_cache_dir",
    "load_function",
    "reciprocal_rank_fusion",
    "retrieve",
    "top_k_indices",
]

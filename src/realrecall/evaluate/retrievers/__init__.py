"""The retrievers ``realrecall evaluate --retriever`` scores: bm25, dense, local-dense, hybrid, your own.

Build one by name with ``build_retriever("bm25", corpus, options={"k1": 1.2})`` and run it over
queries with ``retrieve(retriever, {query_id: text}, k)``. Each retriever module declares its options
dataclass (``BM25Options``...) and a ``RetrieverSpec``; ``RETRIEVERS`` maps names to them. Anything
with a ``name``, a ``description`` and a ``search(queries, k)`` method is a ``Retriever``; a plain
function ``f(query, k)`` becomes one through ``FunctionRetriever``.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# Exported lazily: the CLI reads a run's options (``options``) without loading every retriever module
# (bm25, the stores, the embedding cache: about 20 ms of each evaluate process that scores a run).
if _typing.TYPE_CHECKING:
    from realrecall.evaluate.retrievers.base import Embedder as Embedder
    from realrecall.evaluate.retrievers.base import Retriever as Retriever
    from realrecall.evaluate.retrievers.base import retrieve as retrieve
    from realrecall.evaluate.retrievers.base import top_k_indices as top_k_indices
    from realrecall.evaluate.retrievers.bm25 import BM25Options as BM25Options
    from realrecall.evaluate.retrievers.bm25 import BM25Retriever as BM25Retriever
    from realrecall.evaluate.retrievers.custom import CustomOptions as CustomOptions
    from realrecall.evaluate.retrievers.custom import load_function as load_function
    from realrecall.evaluate.retrievers.dense import DenseOptions as DenseOptions
    from realrecall.evaluate.retrievers.dense import DenseRetriever as DenseRetriever
    from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder as CachedEmbedder
    from realrecall.evaluate.retrievers.function import FunctionRetriever as FunctionRetriever
    from realrecall.evaluate.retrievers.hybrid import HybridOptions as HybridOptions
    from realrecall.evaluate.retrievers.hybrid import HybridRetriever as HybridRetriever
    from realrecall.evaluate.retrievers.hybrid import reciprocal_rank_fusion as reciprocal_rank_fusion
    from realrecall.evaluate.retrievers.local_dense import LocalDenseOptions as LocalDenseOptions
    from realrecall.evaluate.retrievers.options import RetrieverSpec as RetrieverSpec
    from realrecall.evaluate.retrievers.options import RunSettings as RunSettings
    from realrecall.evaluate.retrievers.options import default_cache_dir as default_cache_dir
    from realrecall.evaluate.retrievers.options import make_options as make_options
    from realrecall.evaluate.retrievers.options import parse_option_assignments as parse_option_assignments
    from realrecall.evaluate.retrievers.registry import RETRIEVERS as RETRIEVERS
    from realrecall.evaluate.retrievers.registry import build_retriever as build_retriever
    from realrecall.evaluate.retrievers.registry import choices as choices
    from realrecall.evaluate.retrievers.registry import find_spec as find_spec
    from realrecall.evaluate.retrievers.registry import register as register
    from realrecall.evaluate.retrievers.registry import retriever_inputs as retriever_inputs
    from realrecall.evaluate.retrievers.registry import unregister as unregister

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

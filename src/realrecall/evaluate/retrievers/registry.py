"""From a name on the command line (or a function in Python) to a ready retriever.

``RETRIEVERS`` maps each built-in name to a factory ``(corpus, options) -> Retriever``; anything with a
colon is a user's ``module:function``. Factories import their heavy dependencies (openai,
sentence-transformers) only when called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Retriever, RetrieverOptions
from realrecall.evaluate.retrievers.custom import FunctionRetriever, SearchFunction, load_function

__all__ = ["RETRIEVERS", "build_retriever"]

Factory = Callable[[Corpus, RetrieverOptions], Retriever]


def _bm25(corpus: Corpus, options: RetrieverOptions) -> Retriever:
    from realrecall.evaluate.retrievers.bm25 import BM25Retriever

    return BM25Retriever.from_options(corpus, options)


def _dense(corpus: Corpus, options: RetrieverOptions) -> Retriever:
    from realrecall.evaluate.retrievers.dense import build_dense

    return build_dense(corpus, options)


def _local_dense(corpus: Corpus, options: RetrieverOptions) -> Retriever:
    from realrecall.evaluate.retrievers.local_dense import build_local_dense

    return build_local_dense(corpus, options)


def _hybrid(corpus: Corpus, options: RetrieverOptions) -> Retriever:
    from realrecall.evaluate.retrievers.hybrid import build_hybrid

    return build_hybrid(corpus, options)


RETRIEVERS: Mapping[str, Factory] = MappingProxyType(
    {"bm25": _bm25, "dense": _dense, "local-dense": _local_dense, "hybrid": _hybrid}
)


def build_retriever(
    spec: str | SearchFunction, corpus: Corpus, *, options: RetrieverOptions | None = None
) -> Retriever:
    """The retriever ``spec`` names, over ``corpus``.

    ``spec`` is a registry name (bm25, dense, local-dense, hybrid), ``module:function``,
    ``path/to/file.py:function``, or in Python a function ``f(query, k)`` itself.
    """
    options = options if options is not None else RetrieverOptions()
    if callable(spec):
        return FunctionRetriever(spec, workers=options.workers, query_timeout=options.query_timeout)
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"no retriever given ({spec!r}); choose from {choices()}")
    spec = spec.strip()
    factory = RETRIEVERS.get(spec)
    if factory is not None:
        return factory(corpus, options)
    if ":" in spec:
        return FunctionRetriever(
            load_function(spec), name=spec, workers=options.workers, query_timeout=options.query_timeout
        )
    raise InputError(f"unknown retriever {spec!r}; choose from {choices()}")


def choices() -> str:
    return ", ".join([*RETRIEVERS, "or module:function"])

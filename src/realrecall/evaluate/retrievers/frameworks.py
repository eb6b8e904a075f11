"""LangChain and LlamaIndex objects as retrievers, without importing either framework.

``--retriever module:object`` (or ``path/to/file.py:object``, or the object itself in Python) may name:

- a LangChain vector store (anything with ``similarity_search``): asked ``similarity_search(query, k=k)``;
- a LangChain retriever (``invoke``): a ``VectorStoreRetriever`` is asked for ``k`` documents
  (``invoke(query, k=k)``, its other ``search_kwargs`` such as a filter kept); any other retriever
  returns what it returns, cut to ``k``;
- a LlamaIndex retriever (``retrieve``), or a LlamaIndex index (``as_retriever``), from which a
  retriever with ``similarity_top_k=k`` is made once per ``k``.

An object is recognised by the modules of its classes (``langchain*``, ``llama_index*``), so nothing
of the frameworks is imported here: their own code is loaded only by the user's module that builds the
object. Each hit becomes a chunk id through ``normalise_hits``: a Document's ``id``, a node's
``node_id``, or with ``id_field`` the metadata field that holds the chunk id. A retriever whose own
depth (its ``k`` or ``similarity_top_k``) is smaller than the depth asked is refused before any query:
it would make recall@k look worse than it is.

An object over a vector store says, as the store retrievers do, when its search is approximate:
``store_index`` finds the store's own client object among the attributes of the framework's vector
store (a Chroma collection under LangChain's ``Chroma`` or LlamaIndex's ``ChromaVectorStore``, a
LanceDB table under either's LanceDB store, a ``QdrantClient`` under either's Qdrant store) and reads
how it searches (Chroma: HNSW, always; LanceDB: through a vector index when the table has one, else
every row; a Qdrant server: HNSW; Qdrant's local mode: every point) and what identifies its index (a
Chroma collection's id, a LanceDB table's version), which go into results.json and the fingerprint.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import library_version
from realrecall.evaluate.retrievers.chroma import collection_index
from realrecall.evaluate.retrievers.function import FunctionRetriever
from realrecall.evaluate.retrievers.lancedb import table_index

__all__ = [
    "EXTRAS",
    "FrameworkRetriever",
    "FrameworkSearch",
    "extra_for_module",
    "framework_of",
    "framework_retriever",
    "store_index",
]

# Framework -> (the distribution whose version is recorded, the extra that installs it).
EXTRAS: dict[str, tuple[str, str]] = {
    "langchain": ("langchain-core", "realrecall[langchain]"),
    "llamaindex": ("llama-index-core", "realrecall[llamaindex]"),
}

# The top-level package names of each framework's modules (the module a class is defined in).
_PACKAGES = {"langchain": ("langchain",), "llamaindex": ("llama_index",)}


def framework_of(target: object) -> str | None:
    """``"langchain"``, ``"llamaindex"`` or None: which framework defines ``target``'s class.

    Read from the modules of its classes, so a user's subclass of a framework's retriever counts too.
    """
    for cls in type(target).__mro__:
        framework = extra_for_module(cls.__module__)
        if framework is not None:
            return framework
    return None


def extra_for_module(module: str) -> str | None:
    """The framework a module belongs to (``langchain_core.documents`` -> ``"langchain"``), or None."""
    top = module.partition(".")[0]
    for framework, packages in _PACKAGES.items():
        if top.startswith(packages):
            return framework
    return None


class FrameworkSearch:
    """``f(query, k)`` over a framework object: returns its Documents or nodes, best first.

    ``kind`` says which method is called (see the module docstring).
    """

    def __init__(self, target: object, framework: str) -> None:
        self.target = target
        self.framework = framework
        self.kind = _kind(target, framework)
        self._by_depth: dict[int, Any] = {}  # a LlamaIndex index's retriever for each k
        self._lock = threading.Lock()

    def __call__(self, query: str, k: int) -> Any:
        target: Any = self.target
        if self.kind == "vector store":
            return target.similarity_search(query, k=k)
        if self.kind == "vector store retriever":
            return target.invoke(query, k=k)
        if self.kind == "retriever":
            return target.invoke(query)
        if self.kind == "index":
            return self._index_retriever(k).retrieve(query)
        return target.retrieve(query)  # a LlamaIndex retriever

    def own_depth(self) -> int | None:
        """The number of hits the object returns at most, when it fixes one (None: it takes ``k``)."""
        if self.kind in ("vector store", "vector store retriever", "index"):
            return None
        attribute = "k" if self.framework == "langchain" else "similarity_top_k"
        depth = getattr(self.target, attribute, None)
        return depth if isinstance(depth, int) and not isinstance(depth, bool) else None

    def vector_store(self) -> object | None:
        """The framework's vector store the object searches, when it is or holds one."""
        if self.kind == "vector store":
            return self.target
        attribute = {
            "vector store retriever": "vectorstore",
            "index": "vector_store",
            "llamaindex retriever": "_vector_store",  # a VectorIndexRetriever keeps its index's store
        }.get(self.kind)
        store: object | None = getattr(self.target, attribute, None) if attribute else None
        return store

    def _index_retriever(self, k: int) -> Any:
        with self._lock:
            if k not in self._by_depth:
                self._by_depth[k] = self.target.as_retriever(similarity_top_k=k)  # type: ignore[attr-defined]
            return self._by_depth[k]


def _kind(target: object, framework: str) -> str:
    def has(name: str) -> bool:
        return callable(getattr(target, name, None))

    if framework == "langchain":
        if has("similarity_search"):
            return "vector store"
        if has("invoke"):
            # A VectorStoreRetriever takes k per call (it updates its search_kwargs); others fix their own.
            over_store = getattr(target, "vectorstore", None) is not None and hasattr(target, "search_kwargs")
            return "vector store retriever" if over_store else "retriever"
    else:
        if has("retrieve"):
            return "llamaindex retriever"
        if has("as_retriever"):
            return "index"
    raise InputError(
        f"{type(target).__name__} from {framework} is neither a retriever nor a vector store",
        hint=_ACCEPTED,
    )


_ACCEPTED = (
    "give a LangChain retriever or vector store, a LlamaIndex retriever or index, or a function f(query, k)"
)

_LABELS = {
    "vector store": "LangChain vector store",
    "vector store retriever": "LangChain retriever",
    "retriever": "LangChain retriever",
    "llamaindex retriever": "LlamaIndex retriever",
    "index": "LlamaIndex index",
}


class FrameworkRetriever(FunctionRetriever):
    """A ``Retriever`` over a LangChain or LlamaIndex object (see the module docstring).

    ``fingerprint`` names the object's class, ``id_field`` and the framework's version, so calibrate
    can tell two framework retrievers apart without the object's (possibly huge) contents.
    """

    def __init__(
        self,
        target: object,
        framework: str,
        *,
        name: str | None = None,
        id_field: str | None = None,
        workers: int = 1,
        query_timeout: float | None = None,
    ) -> None:
        self.searcher = FrameworkSearch(target, framework)
        cls = type(target)
        label = name or f"{cls.__module__}:{cls.__qualname__}"
        super().__init__(
            self.searcher, name=label, workers=workers, query_timeout=query_timeout, id_field=id_field
        )
        distribution = EXTRAS[framework][0]
        version = library_version(distribution)
        self.description = (
            f"{_LABELS[self.searcher.kind]} {cls.__qualname__} ({distribution} {version})"
            + (f" id_field={id_field}" if id_field else "")
            + f" (workers={workers})"
        )
        self.fingerprint: dict[str, Any] = {
            "name": "module:function",
            "options": {
                "function": label,
                "id_field": id_field,
                "class": f"{cls.__module__}.{cls.__qualname__}",
            },
            "versions": {distribution: version},
        }

        self.approximate, self.index = store_index(self.searcher.vector_store())
        if self.index:
            self.fingerprint["index"] = dict(self.index)
        if self.approximate:
            self.fingerprint["approximate"] = self.approximate

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        depth = self.searcher.own_depth()
        if depth is not None and depth < k:
            attribute = "k" if self.searcher.framework == "langchain" else "similarity_top_k"
            raise InputError(
                f"{_LABELS[self.searcher.kind]} {self.name} returns at most {depth} hits ({attribute}="
                f"{depth}), fewer than the {k} asked: its recall@{k} would be understated",
                hint=f"build it with {attribute}={k} or more",
            )
        return super().search(queries, k)


def store_index(vector_store: object | None) -> tuple[str | None, dict[str, Any]]:
    """Why a framework's vector store searches approximately (None: exactly, or not known), and what
    identifies the index it searches (empty when nothing does), read from its store's client object."""
    for handle in _store_handles(vector_store):
        library = type(handle).__module__.partition(".")[0]
        if library == "chromadb" and hasattr(handle, "configuration_json"):  # a Collection, not a client
            return collection_index(handle)
        if library == "lancedb" and hasattr(handle, "list_indices"):  # a Table, not a connection
            return table_index(handle)
        if library == "qdrant_client" and type(handle).__name__ == "QdrantClient":
            local = type(getattr(handle, "_client", None)).__name__ == "QdrantLocal"
            return (None if local else "the Qdrant server's HNSW index"), {}
    return None, {}


def _store_handles(vector_store: object | None) -> Iterator[object]:
    """The attributes of a framework's vector store that come from a store's client library: LangChain
    keeps them as plain attributes, LlamaIndex's pydantic models as private ones."""
    if vector_store is None:
        return
    values = list(getattr(vector_store, "__dict__", {}).values())
    private = getattr(vector_store, "__pydantic_private__", None)
    if isinstance(private, dict):
        values += list(private.values())
    for value in values:
        if type(value).__module__.partition(".")[0] in ("chromadb", "lancedb", "qdrant_client"):
            yield value


def framework_retriever(
    target: object,
    *,
    name: str | None = None,
    id_field: str | None = None,
    workers: int = 1,
    query_timeout: float | None = None,
) -> FrameworkRetriever | None:
    """``target`` as a retriever if a framework defines it, else None (a plain function, say)."""
    framework = framework_of(target)
    if framework is None:
        return None
    return FrameworkRetriever(
        target, framework, name=name, id_field=id_field, workers=workers, query_timeout=query_timeout
    )

"""The bundled sample corpus in LangChain's and LlamaIndex's own in-memory stores, for the adapter tests.

Each store embeds with the same deterministic bag-of-words hashing (no model, no network), so its
rankings are meaningful (questions sharing words with a chunk find it) and identical on every run.
Importing this module imports neither framework: each ``*_objects()`` function imports its own.
``--retriever evaluate.retrievers.framework_stores:NAME`` reaches the module attributes made by
:func:`__getattr__` (built once, on first use).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from realrecall.pipeline.demo import sample_data_dir

DIM = 128  # rankings that find the answers (recall@10 0.4); LlamaIndex copies every vector per query


def embed(text: str) -> list[float]:
    """Words hashed into 128 buckets, L2-normalised (an all-zero text gets a fixed unit vector)."""
    vector = [0.0] * DIM
    for word in re.findall(r"\w+", text.lower()):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % DIM] += 1.0
    norm = sum(value * value for value in vector) ** 0.5
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [value / norm for value in vector]


def corpus_path() -> Path:
    return sample_data_dir() / "docs_corpus.jsonl"


def gold_path() -> Path:
    return sample_data_dir() / "real_questions.jsonl"


def sample_chunks() -> list[dict[str, Any]]:
    lines = corpus_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@cache
def langchain_objects() -> dict[str, Any]:
    """``store`` (chunk ids as document ids), ``store_by_metadata`` (ids in metadata["chunk_id"], the
    store's own ids elsewhere), ``no_ids`` (documents added without ids or metadata ids), ``retriever``
    (the store as a VectorStoreRetriever asking for 4 by default) and ``fixed_retriever`` (k=4)."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import InMemoryVectorStore

    class HashingEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [embed(text) for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return embed(text)

    chunks = sample_chunks()
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(
        [Document(page_content=c["text"], metadata={"title": c.get("title")}) for c in chunks],
        ids=[c["id"] for c in chunks],
    )
    by_metadata = InMemoryVectorStore(HashingEmbeddings())
    by_metadata.add_documents(
        [Document(page_content=c["text"], metadata={"chunk_id": c["id"]}) for c in chunks],
        ids=[f"uuid-{number}" for number in range(len(chunks))],
    )

    class NoIds(BaseRetriever):
        """A retriever that drops the ids, as some wrappers do."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [Document(page_content=d.page_content) for d in store.similarity_search(query, k=3)]

    class FixedDepth(BaseRetriever):
        """A retriever with its own depth ``k``, as LangChain's BM25Retriever has."""

        k: int = 4

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return store.similarity_search(query, k=self.k)

    return {
        "store": store,
        "store_by_metadata": by_metadata,
        "retriever": store.as_retriever(search_kwargs={"k": 4}),
        "no_ids": NoIds(),
        "fixed_retriever": FixedDepth(),
    }


@cache
def llamaindex_objects() -> dict[str, Any]:
    """``index`` (a VectorStoreIndex over nodes whose ids are the chunk ids), ``index_retriever``
    (its retriever with similarity_top_k=20), ``shallow_retriever`` (similarity_top_k=2) and
    ``index_by_metadata`` (node ids of its own, the chunk id in metadata["chunk_id"])."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode

    class HashingEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    chunks = sample_chunks()
    nodes = [TextNode(text=c["text"], id_=c["id"]) for c in chunks]
    index = VectorStoreIndex(nodes, embed_model=HashingEmbedding())
    by_metadata = VectorStoreIndex(
        [
            TextNode(text=c["text"], id_=f"node-{number}", metadata={"chunk_id": c["id"]})
            for number, c in enumerate(chunks)
        ],
        embed_model=HashingEmbedding(),
    )
    return {
        "index": index,
        "index_retriever": index.as_retriever(similarity_top_k=20),
        "shallow_retriever": index.as_retriever(similarity_top_k=2),
        "index_by_metadata": by_metadata,
    }


_LANGCHAIN = {"store", "store_by_metadata", "retriever", "no_ids", "fixed_retriever"}
_LLAMAINDEX = {"index", "index_retriever", "shallow_retriever", "index_by_metadata"}


def __getattr__(name: str) -> Any:
    if name in _LANGCHAIN:
        return langchain_objects()[name]
    if name in _LLAMAINDEX:
        return llamaindex_objects()[name]
    raise AttributeError(name)


def langchain_over_chroma(collection: Any) -> Any:
    """A LangChain vector store over a Chroma collection, kept as langchain-chroma's ``Chroma`` keeps
    it (``self._collection``), searched through the collection's own query (its HNSW index)."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import VectorStore

    class ChromaStore(VectorStore):  # type: ignore[misc]
        def __init__(self, collection: Any) -> None:
            self._collection = collection

        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            raise NotImplementedError("the collection is built beforehand")

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            found = self._collection.query(query_embeddings=[embed(query)], n_results=k)
            return [
                Document(id=identity, page_content=text)
                for identity, text in zip(found["ids"][0], found["documents"][0], strict=True)
            ]

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kwargs: Any) -> Any:
            raise NotImplementedError("the collection is built beforehand")

    return ChromaStore(collection)


def llamaindex_over_chroma(collection: Any) -> Any:
    """A LlamaIndex index over a Chroma collection, kept as llama-index-vector-stores-chroma's
    ``ChromaVectorStore`` keeps it (a private attribute ``_collection``)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import BasePydanticVectorStore, VectorStoreQueryResult
    from pydantic import PrivateAttr

    class HashingEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    class ChromaStore(BasePydanticVectorStore):  # type: ignore[misc]
        stores_text: bool = True
        _collection: Any = PrivateAttr()

        def __init__(self, collection: Any) -> None:
            super().__init__()
            self._collection = collection

        @property
        def client(self) -> Any:
            return self._collection

        def add(self, nodes: Any, **kwargs: Any) -> list[str]:
            raise NotImplementedError("the collection is built beforehand")

        def delete(self, ref_doc_id: str, **kwargs: Any) -> None:
            raise NotImplementedError("the collection is read only here")

        def query(self, query: Any, **kwargs: Any) -> VectorStoreQueryResult:
            found = self._collection.query(
                query_embeddings=[query.query_embedding], n_results=query.similarity_top_k
            )
            ids, texts = found["ids"][0], found["documents"][0]
            nodes = [TextNode(id_=identity, text=text) for identity, text in zip(ids, texts, strict=True)]
            similarities = [1.0 - distance for distance in found["distances"][0]]
            return VectorStoreQueryResult(nodes=nodes, similarities=similarities, ids=ids)

    return VectorStoreIndex.from_vector_store(ChromaStore(collection), embed_model=HashingEmbedding())


def langchain_over_lancedb(table: Any) -> Any:
    """A LangChain vector store over a LanceDB table, kept as langchain-community's ``LanceDB`` keeps it
    (``self._table``), searched through the table's own vector search."""
    from langchain_core.documents import Document
    from langchain_core.vectorstores import VectorStore

    class LanceStore(VectorStore):  # type: ignore[misc]
        def __init__(self, table: Any) -> None:
            self._table = table

        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            raise NotImplementedError("the table is built beforehand")

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            rows = self._table.search(embed(query)).distance_type("cosine").limit(k).to_list()
            return [Document(id=row["id"], page_content=row["text"]) for row in rows]

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kwargs: Any) -> Any:
            raise NotImplementedError("the table is built beforehand")

    return LanceStore(table)

"""LangChain's and LlamaIndex's vector stores over Chroma or Qdrant say when their search is approximate.

A Chroma collection is always searched through its HNSW graph, so an object over one (a LangChain
vector store, its retriever, a LlamaIndex index or its retriever) is reported as the ``chroma``
retriever is: ``retriever.approximate`` and a warning in the results, the collection's id in the
fingerprint, so a rebuild of the collection is another retriever. The stores are real Chroma folders;
the framework classes over them keep the collection where langchain-chroma's ``Chroma`` and
llama-index-vector-stores-chroma's ``ChromaVectorStore`` keep it (``_collection``), as those
integration packages are not among realrecall's extras.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluate.retrievers import framework_stores
from evaluate.retrievers.store_checks import CORPUS, GOLD, sample_chunks
from realrecall.corpus import load_corpus
from realrecall.evaluate import evaluate
from realrecall.evaluate.retrievers import build_retriever
from realrecall.gold import load_gold
from support import cli

pytestmark = pytest.mark.slow  # a Chroma folder per test


def chroma_collection(folder: Path, name: str = "sample") -> Any:
    """A persistent Chroma collection of the sample chunks, vectors from framework_stores.embed."""
    chromadb = pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    chunks = sample_chunks()
    collection = client.create_collection(name, metadata={"hnsw:space": "cosine"}, embedding_function=None)
    collection.add(
        ids=[chunk.id for chunk in chunks],
        embeddings=[framework_stores.embed(chunk.text) for chunk in chunks],
        documents=[chunk.text for chunk in chunks],
    )
    return collection


def langchain_over(collection: Any) -> Any:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    return framework_stores.langchain_over_chroma(collection)


def llamaindex_over(collection: Any) -> Any:
    pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
    return framework_stores.llamaindex_over_chroma(collection)


OBJECTS = {
    "langchain store": langchain_over,
    "langchain retriever": lambda collection: langchain_over(collection).as_retriever(),
    "llamaindex index": llamaindex_over,
    "llamaindex retriever": lambda collection: llamaindex_over(collection).as_retriever(similarity_top_k=10),
}


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_an_object_over_chroma_says_its_search_is_approximate_and_fingerprints_the_collection(
    kind: str, tmp_path: Path
) -> None:
    collection = chroma_collection(tmp_path / "chroma_db")
    target = OBJECTS[kind](collection)
    corpus = load_corpus(CORPUS)

    result = evaluate(load_gold(GOLD), corpus=corpus, retriever=target, k=(1, 10))
    assert str(result.approximate).startswith("Chroma's HNSW index (ef_search=")
    assert any("search is approximate (Chroma's HNSW index" in warning for warning in result.warnings)
    assert result.fingerprints["retriever"]["index"] == {"collection_id": str(collection.id)}
    assert result.gold_sets[0].overall.metrics["recall@10"] > 0.3  # the store's own ranking, scored

    built = build_retriever(target, corpus)
    assert built.fingerprint["index"] == {"collection_id": str(collection.id)}  # type: ignore[attr-defined]
    assert built.fingerprint["approximate"] == result.approximate  # type: ignore[attr-defined]


def test_the_command_line_reports_a_langchain_store_over_chroma_as_approximate(tmp_path: Path) -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    chroma_collection(tmp_path / "chroma_db")
    module = tmp_path / "my_store.py"
    module.write_text(
        "import chromadb\n"
        "from chromadb.config import Settings\n"
        "from evaluate.retrievers.framework_stores import langchain_over_chroma\n\n"
        f"client = chromadb.PersistentClient(path={str(tmp_path / 'chroma_db')!r}, "
        "settings=Settings(anonymized_telemetry=False))\n"
        "store = langchain_over_chroma(client.get_collection('sample'))\n",
        encoding="utf-8",
    )
    output = tmp_path / "results.json"
    done = cli.run(
        "evaluate", "--gold", str(GOLD), "--corpus", str(CORPUS), "--retriever", f"{module}:store",
        "-o", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["retriever"]["approximate"].startswith("Chroma's HNSW index")
    assert any("search is approximate" in warning for warning in results["warnings"])
    assert "search is approximate" in done.stdout + done.stderr


def test_a_rebuilt_collection_is_another_retriever(tmp_path: Path) -> None:
    """The same vectors in a collection made again: same name, new id, so another fingerprint."""
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    corpus = load_corpus(CORPUS)
    first = chroma_collection(tmp_path / "chroma_db")
    before = build_retriever(framework_stores.langchain_over_chroma(first), corpus).fingerprint  # type: ignore[attr-defined]
    first._client.delete_collection("sample")
    again = chroma_collection(tmp_path / "chroma_db")
    after = build_retriever(framework_stores.langchain_over_chroma(again), corpus).fingerprint  # type: ignore[attr-defined]
    assert before["index"] != after["index"]
    assert {**before, "index": None} == {**after, "index": None}  # nothing else tells them apart


@pytest.mark.parametrize("name", ["store", "retriever"])
def test_an_in_memory_langchain_store_is_not_called_approximate(name: str) -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    target = framework_stores.langchain_objects()[name]
    retriever = build_retriever(target, load_corpus(CORPUS))
    assert retriever.approximate is None  # type: ignore[attr-defined]
    assert "approximate" not in retriever.fingerprint  # type: ignore[attr-defined]
    assert "index" not in retriever.fingerprint  # type: ignore[attr-defined]


def test_a_langchain_store_over_a_qdrant_server_is_approximate_and_over_local_mode_exact(
    tmp_path: Path,
) -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    pytest.importorskip("qdrant_client", reason="the qdrant extra is not installed")
    from langchain_core.vectorstores import VectorStore
    from qdrant_client import QdrantClient

    class OwnQdrantStore(VectorStore):  # type: ignore[misc]
        """A user's own LangChain store over a Qdrant client (as langchain-qdrant keeps one)."""

        def __init__(self, client: QdrantClient) -> None:
            self.client = client

        def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
            raise NotImplementedError

        def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Any]:
            raise NotImplementedError

        @classmethod
        def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kwargs: Any) -> Any:
            raise NotImplementedError

    corpus = load_corpus(CORPUS)
    server = QdrantClient(url="http://127.0.0.1:9", check_compatibility=False)  # never asked here
    assert build_retriever(OwnQdrantStore(server), corpus).approximate == (  # type: ignore[attr-defined]
        "the Qdrant server's HNSW index"
    )
    local = QdrantClient(path=str(tmp_path / "qdrant_db"))
    try:
        assert build_retriever(OwnQdrantStore(local), corpus).approximate is None  # type: ignore[attr-defined]
    finally:
        local.close()


def test_a_langchain_store_over_lancedb_is_approximate_only_with_a_vector_index(tmp_path: Path) -> None:
    """LanceDB searches every row unless the table has a vector index; the table's version (an index
    is a write) goes into the fingerprint."""
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    lancedb = pytest.importorskip("lancedb", reason="the lancedb extra is not installed")
    from lancedb.index import IvfFlat

    database = lancedb.connect(str(tmp_path / "lance_db"))
    table = database.create_table(
        "sample",
        data=[
            {"id": chunk.id, "text": chunk.text, "vector": framework_stores.embed(chunk.text)}
            for chunk in sample_chunks()
        ],
    )
    corpus, gold = load_corpus(CORPUS), load_gold(GOLD)

    flat = evaluate(gold, corpus=corpus, retriever=framework_stores.langchain_over_lancedb(table), k=(1, 10))
    assert flat.approximate is None
    assert not any("search is approximate" in warning for warning in flat.warnings)
    assert flat.fingerprints["retriever"]["index"]["table_version"] == 1

    table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=4))
    indexed = evaluate(
        gold, corpus=corpus, retriever=framework_stores.langchain_over_lancedb(table), k=(1, 10)
    )
    assert indexed.approximate == "LanceDB's IvfFlat index"
    assert any("search is approximate (LanceDB's IvfFlat index)" in warning for warning in indexed.warnings)
    assert indexed.fingerprints["retriever"]["index"]["table_version"] == 2
    assert indexed.gold_sets[0].overall.metrics["recall@10"] > 0.3

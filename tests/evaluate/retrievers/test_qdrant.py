"""``qdrant``: a collection of the sample corpus in qdrant-client's local mode, searched and exported.

Vectors are precomputed (``store_checks``) and queries embedded by the fake OpenAI endpoint, so
nothing is downloaded. The server form (``url=``) takes the same options; docs/stores/qdrant.md.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from evaluate.retrievers.store_checks import (
    CORPUS,
    EMBED_MODEL,
    assert_export_round_trips,
    assert_figures_equal_run,
    chunk_vectors,
    sample_chunks,
    stored_metadata,
)
from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import build_retriever
from support.fake_openai import FakeOpenAI


def needs_qdrant() -> None:
    """Skip without the extra. Imported by the tests, not at collection: qdrant_client takes most of a
    second to import, which every xdist worker would pay just to collect this file."""
    pytest.importorskip(
        "qdrant_client", reason="the qdrant extra is not installed (pip install 'realrecall[qdrant]')"
    )


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needs_qdrant()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local-mode folder: "sample" with the text in "text", "langchain" laid out as LangChain does.

    Built once for the module (local mode writes each point to disk, seconds for the sample); the tests
    only read it.
    """
    needs_qdrant()
    from qdrant_client import QdrantClient, models

    folder = tmp_path_factory.mktemp("qdrant") / "qdrant_db"
    chunks = sample_chunks()
    vectors = chunk_vectors(chunks)
    client = QdrantClient(path=str(folder))
    try:
        for name in ("sample", "langchain"):
            client.create_collection(
                name,
                vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
            )
        client.upsert(
            "sample",
            points=[
                models.PointStruct(
                    id=n, vector=vectors[n].tolist(), payload={"text": chunk.text, **stored_metadata(chunk)}
                )
                for n, chunk in enumerate(chunks)
            ],
        )
        client.upsert(
            "langchain",
            points=[
                models.PointStruct(
                    id=str(uuid.uuid5(uuid.NAMESPACE_URL, chunk.id)),
                    vector=vectors[n].tolist(),
                    payload={"page_content": chunk.text, "metadata": stored_metadata(chunk)},
                )
                for n, chunk in enumerate(chunks)
            ],
        )
    finally:
        client.close()  # local mode: one client per folder and process
    return folder


def test_figures_equal_scoring_the_same_ranking_as_a_run(
    store: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    options = [f"path={store}", "collection=sample", f"embed_model={EMBED_MODEL}", "id_field=chunk_id"]
    result = assert_figures_equal_run(tmp_path, "qdrant", options)
    assert result["retriever"]["name"] == "qdrant"


def test_a_nested_payload_id_as_langchain_stores_it(
    store: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    options = [
        f"path={store}",
        "collection=langchain",
        f"embed_model={EMBED_MODEL}",
        "id_field=metadata.chunk_id",
    ]
    assert_figures_equal_run(tmp_path, "qdrant", options)


def test_export_round_trips(store: Path, tmp_path: Path) -> None:
    assert_export_round_trips(
        tmp_path,
        "qdrant",
        [f"path={store}", "collection=sample", "id_field=chunk_id", "title_field=title"],
        "--page-size",
        "11",
    )
    assert_export_round_trips(
        tmp_path,
        "qdrant",
        [
            f"path={store}",
            "collection=langchain",
            "id_field=metadata.chunk_id",
            "text_field=page_content",
            "title_field=metadata.title",
        ],
        metadata=lambda chunk: {"metadata": stored_metadata(chunk)},
    )


def test_one_line_errors(store: Path, tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    corpus = load_corpus(CORPUS)
    with pytest.raises(InputError, match="needs an embedding model for the queries"):
        build_retriever("qdrant", corpus, options={"path": store, "collection": "sample"})
    with pytest.raises(InputError, match="no Qdrant folder here"):
        build_retriever("qdrant", corpus, options={"path": tmp_path / "typo", "collection": "sample"})
    assert not (tmp_path / "typo").exists()
    with pytest.raises(InputError, match=r"no such collection; collections there: langchain, sample"):
        build_retriever("qdrant", corpus, options={"path": store, "collection": "nope", "embed_model": "m"})
    from realrecall.stores import export_corpus

    with pytest.raises(InputError, match="has no text"):
        export_corpus("qdrant", tmp_path / "out.jsonl", options={"path": store, "collection": "langchain"})
    assert not (tmp_path / "out.jsonl").exists()

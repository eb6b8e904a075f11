"""Commands that only read a local vector store leave its folder exactly as it was (issue 28).

Every file of the folder is hashed and every entry listed before and after ``evaluate --retriever``
and ``corpus export`` (each a real process, as a user runs them): no byte changes, nothing is created
or deleted. Chroma writes into its folder whenever it opens it (a row of chroma.sqlite3's
``acquire_write`` table, the HNSW segment's files), so realrecall opens a private copy of it.
"""

from __future__ import annotations

import gc
import hashlib
import os
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluate.retrievers.store_checks import (
    CORPUS,
    EMBED_MODEL,
    GOLD,
    chunk_vectors,
    embed,
    sample_chunks,
    stored_metadata,
)
from realrecall.corpus import load_corpus
from realrecall.evaluate.retrievers import build_retriever, parse_option_assignments
from support.cli import run as in_process_cli
from support.fake_openai import FakeOpenAI
from support.process import cli

pytestmark = pytest.mark.slow  # a store and two processes per test


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


class SampleEmbedder:
    """The vectors the stores hold, made in this process."""

    name = "sample-embedding"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return embed(texts)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` by relative path: a file's SHA-256, a link's target, or 'folder'."""
    entries: dict[str, str] = {}
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(root) / name
            relative = str(path.relative_to(folder))
            if path.is_symlink():
                entries[relative] = f"link to {os.readlink(path)}"
            elif path.is_dir():
                entries[relative] = "folder"
            else:
                entries[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


def chroma_store(folder: Path) -> list[str]:
    chromadb = pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from chromadb.config import Settings

    chunks = sample_chunks()
    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    collection = client.create_collection(
        "sample", metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    collection.add(
        ids=[chunk.id for chunk in chunks],
        embeddings=chunk_vectors(chunks),
        documents=[chunk.text for chunk in chunks],
        metadatas=[stored_metadata(chunk) for chunk in chunks],
    )
    return [f"path={folder}", "collection=sample"]


def lancedb_store(folder: Path) -> list[str]:
    lancedb = pytest.importorskip("lancedb", reason="the lancedb extra is not installed")
    chunks = sample_chunks()
    vectors = chunk_vectors(chunks)
    rows = [
        {"id": chunk.id, "text": chunk.text, "vector": vectors[n].tolist(), **stored_metadata(chunk)}
        for n, chunk in enumerate(chunks)
    ]
    lancedb.connect(str(folder)).create_table("sample", data=rows)
    return [f"uri={folder}", "table=sample"]


def qdrant_store(folder: Path) -> list[str]:
    pytest.importorskip("qdrant_client", reason="the qdrant extra is not installed")
    from qdrant_client import QdrantClient, models

    chunks = sample_chunks()
    vectors = chunk_vectors(chunks)
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            "sample",
            vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
        )
        client.upsert(
            "sample",
            points=[
                models.PointStruct(
                    id=str(uuid.uuid5(uuid.NAMESPACE_URL, chunk.id)),
                    vector=vectors[n].tolist(),
                    payload={"text": chunk.text, **stored_metadata(chunk)},
                )
                for n, chunk in enumerate(chunks)
            ],
        )
    finally:
        client.close()
    return [f"path={folder}", "collection=sample", "id_field=chunk_id"]


def qdrant_store_without_lock(folder: Path) -> list[str]:
    """A local-mode folder without the .lock file local mode makes (copied without dot files, say)."""
    options = qdrant_store(folder)
    (folder / ".lock").unlink()
    return options


STORES: dict[str, Callable[[Path], list[str]]] = {
    "chroma": chroma_store,
    "lancedb": lancedb_store,
    "qdrant": qdrant_store,
    "qdrant without .lock": qdrant_store_without_lock,
}


@pytest.mark.parametrize("case", sorted(STORES))
def test_evaluate_and_export_leave_every_file_of_the_store_folder_as_it_was(
    case: str, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    store = case.split()[0]
    folder = tmp_path / f"{store}_db"
    options = STORES[case](folder)
    before = snapshot(folder)
    assert before  # a real store, not an empty folder

    evaluate: list[Any] = ["evaluate", "--gold", GOLD, "--corpus", CORPUS, "--retriever", store]
    for option in [*options, f"embed_model={EMBED_MODEL}"]:
        evaluate += ["--retriever-option", option]
    done = cli(*map(str, evaluate), "-o", str(tmp_path / "results.json"))
    assert done.returncode == 0, done.stderr
    assert snapshot(folder) == before

    export = ["corpus", "export", "--from", store]
    for option in options:
        export += ["--option", option]
    done = cli(*export, "-o", str(tmp_path / "exported.jsonl"))
    assert done.returncode == 0, done.stderr
    assert snapshot(folder) == before


@pytest.mark.parametrize("case", ["chroma", "qdrant without .lock"])
def test_the_private_copy_goes_once_the_retriever_is_unused(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = case.split()[0]
    options = STORES[case](tmp_path / "store")
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    corpus = load_corpus(CORPUS)
    retriever = build_retriever(
        store, corpus, options={**parse_option_assignments(options), "embedder": SampleEmbedder()}
    )
    [copy] = temporary.iterdir()
    assert snapshot(copy / "store").keys() >= snapshot(tmp_path / "store").keys()
    assert retriever.search(["how do I install it?"], 3)[0]

    del retriever
    gc.collect()
    assert not list(temporary.iterdir())


def test_a_copy_that_cannot_be_made_is_one_line_naming_the_size_and_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = chroma_store(tmp_path / "store")
    unusable = tmp_path / "a file, not a folder"
    unusable.write_text("", encoding="utf-8")
    monkeypatch.setattr(tempfile, "tempdir", str(unusable))  # as TMPDIR is read once per process
    done = in_process_cli(
        "corpus", "export", "--from", "chroma", *(f"--option={option}" for option in options),
        "-o", str(tmp_path / "exported.jsonl"),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.err_lines
    assert line.startswith(f"error: {tmp_path / 'store'}: cannot copy the Chroma folder (")
    assert f"MB) to a private folder under {unusable}" in line
    assert "set TMPDIR to a folder with room" in line
    assert not (tmp_path / "exported.jsonl").exists()

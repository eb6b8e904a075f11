"""``qdrant``: a collection of the sample corpus in qdrant-client's local mode, searched and exported.

Vectors are precomputed (``store_checks``) and queries embedded by the fake OpenAI endpoint, so
nothing is downloaded. The server form (``url=``) takes the same options; docs/stores/qdrant.md.
"""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from evaluate.retrievers.store_checks import (
    CORPUS,
    EMBED_MODEL,
    GOLD,
    approximate_warnings,
    assert_export_round_trips,
    assert_figures_equal_run,
    chunk_vectors,
    evaluate_store,
    sample_chunks,
    stored_metadata,
)
from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import build_retriever
from support import cli
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


def test_local_mode_searches_every_point_so_results_call_it_exact(
    store: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    options = [f"path={store}", "collection=sample", f"embed_model={EMBED_MODEL}"]
    local = evaluate_store(tmp_path, "local", "qdrant", options)
    assert "approximate" not in local["retriever"]
    assert approximate_warnings(local) == []
    assert "approximate" not in local["fingerprints"]["retriever"]
    exact = evaluate_store(tmp_path, "exact", "qdrant", [*options, "exact=true"])
    assert exact["fingerprints"]["retriever"]["options"]["exact"] is True
    for ours, theirs in zip(exact["gold_sets"], local["gold_sets"], strict=True):
        assert ours["per_query"]["metrics"] == theirs["per_query"]["metrics"]


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


class _QdrantREST(http.server.BaseHTTPRequestHandler):
    """A Qdrant server's REST answers for one collection "docs": it exists, holds 1 point, and every
    query finds point 1. Each query's body is kept, to read the search parameters sent."""

    queries: ClassVar[list[dict[str, Any]]] = []

    def _answer(self, result: object) -> None:
        body = json.dumps({"result": result, "status": "ok", "time": 0.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer({"exists": self.path.startswith("/collections/docs/")})

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        if self.path.endswith("/points/count"):
            self._answer({"count": 1})
        else:
            type(self).queries.append(sent)
            self._answer({"points": [{"id": 1, "version": 0, "score": 0.5}]})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def qdrant_rest() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QdrantREST)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _QdrantREST.queries.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_servers_hnsw_search_is_approximate_unless_exact_is_asked(
    qdrant_rest: str, fake_openai: FakeOpenAI
) -> None:
    corpus = load_corpus(CORPUS)
    given = {"url": qdrant_rest, "collection": "docs", "embed_model": EMBED_MODEL}
    indexed = build_retriever("qdrant", corpus, options=given)
    assert indexed.approximate == "the Qdrant server's HNSW index (exact=true searches every point)"  # type: ignore[attr-defined]
    assert indexed.fingerprint["approximate"] == indexed.approximate  # type: ignore[attr-defined]
    assert indexed.search(["which port"], 3) == [["1"]]
    assert not (_QdrantREST.queries[-1].get("params") or {}).get("exact")

    exact = build_retriever("qdrant", corpus, options={**given, "exact": "true"})
    assert exact.approximate is None  # type: ignore[attr-defined]
    assert "approximate" not in exact.fingerprint  # type: ignore[attr-defined]
    assert exact.search(["which port"], 3) == [["1"]]
    assert _QdrantREST.queries[-1]["params"]["exact"] is True


@pytest.mark.parametrize("lock", ["with its .lock", "without a .lock"])
@pytest.mark.parametrize("command", ["evaluate", "corpus export"])
def test_a_collection_without_its_storage_is_damaged_not_empty(
    store: Path, command: str, lock: str, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """meta.json lists the collection, its collection/NAME folder is gone: local mode would make an
    empty collection in its place (in the folder itself when it has a .lock) and every query would find
    nothing, recall 0 with exit 0. It is a damaged folder, and the folder is left as it was."""
    folder = tmp_path / "qdrant_db"
    shutil.copytree(store, folder)
    shutil.rmtree(folder / "collection" / "sample")
    (folder / ".lock").unlink(missing_ok=True)
    if lock == "with its .lock":
        (folder / ".lock").write_text("tmp lock file", encoding="utf-8")
    before = sorted(str(item.relative_to(folder)) for item in folder.rglob("*"))
    options = [f"path={folder}", "collection=sample", "id_field=chunk_id"]
    output = tmp_path / "out.json"
    if command == "evaluate":
        flags = [
            item
            for option in [*options, f"embed_model={EMBED_MODEL}"]
            for item in ("--retriever-option", option)
        ]
        done = cli.run(
            "evaluate",
            "--gold",
            str(GOLD),
            "--corpus",
            str(CORPUS),
            "--retriever",
            "qdrant",
            *flags,
            "-o",
            str(output),
        )
    else:
        flags = [item for option in options for item in ("--option", option)]
        done = cli.run("corpus", "export", "--from", "qdrant", *flags, "-o", str(output))

    assert done.returncode == 2, done.stderr
    assert done.err_lines == [
        f"error: {folder}: cannot read the Qdrant folder (FileNotFoundError: meta.json lists collection "
        "'sample', but collection/sample holds no storage); its files look damaged, or were written by "
        "another version of its library: restore the folder from a backup, or rebuild the store"
    ]
    assert sorted(str(item.relative_to(folder)) for item in folder.rglob("*")) == before
    assert not output.exists()

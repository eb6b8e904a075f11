"""``chroma``: a collection on a real Chroma server (``chroma run`` on 127.0.0.1) and in a local folder.

Collections hold the sample corpus with precomputed vectors (``store_checks``); queries are embedded
by the fake OpenAI endpoint or by a hashing embedding function registered with Chroma here, so
nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluate.retrievers.store_checks import (
    CORPUS,
    EMBED_MODEL,
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
from realrecall.evaluate.retrievers import RunSettings, build_retriever
from support import cli
from support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.slow  # a `chroma run` server for the module


def chromadb() -> Any:
    """The chromadb module, or a skip without the extra. Imported by the tests, not at collection:
    chromadb takes about half a second to import, which every xdist worker would pay to collect this file."""
    return pytest.importorskip(
        "chromadb", reason="the chroma extra is not installed (pip install 'realrecall[chroma]')"
    )


def settings() -> Any:
    """Fresh each time: Chroma writes the client kind and folder into the Settings it is given."""
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


@cache
def word_hashing() -> type:
    """A deterministic embedding function Chroma can rebuild by name, registered on first use."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function

    @register_embedding_function
    class WordHashing(EmbeddingFunction[Documents]):
        """Hashed words, 64 dimensions."""

        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            vectors = []
            for text in input:
                vector = np.zeros(64, dtype=np.float32)
                for word in re.findall(r"\w+", text.lower()):
                    vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % 64] += 1.0
                vectors.append(vector)
            return vectors

        @staticmethod
        def name() -> str:
            return "realrecall-test-word-hashing"

        def get_config(self) -> dict[str, Any]:
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> WordHashing:
            return WordHashing()

    return WordHashing


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chromadb()  # skips every test without the extra
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def fill(client: Any, name: str, *, store_ids: bool = True, function: Any = None) -> Any:
    """A collection of the sample chunks: the chunk ids as the store's ids, or rec-N with a chunk_id field."""
    chunks = sample_chunks()
    collection = client.create_collection(
        name, embedding_function=function, metadata={"hnsw:space": "cosine"}
    )
    ids = [chunk.id for chunk in chunks] if store_ids else [f"rec-{n:04d}" for n in range(len(chunks))]
    vectors = (
        chunk_vectors(chunks)
        if function is None
        else np.stack(function([chunk.searchable_text() for chunk in chunks]))
    )
    collection.add(
        ids=ids,
        embeddings=vectors,
        documents=[chunk.text for chunk in chunks],
        metadatas=[stored_metadata(chunk) for chunk in chunks],
    )
    return collection


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``chroma run`` as a real process on 127.0.0.1, ready once its heartbeat answers."""
    program = Path(sys.executable).parent / "chroma"
    if not program.exists():
        found = shutil.which("chroma")
        if found is None:
            pytest.skip("the chroma command (from the chromadb package) is not installed")
        program = Path(found)
    folder = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    log = (folder / "server.log").open("w")
    process = subprocess.Popen(
        [str(program), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        _wait_for_heartbeat(process, port, folder / "server.log")
        client = chromadb().HttpClient(host="127.0.0.1", port=port, settings=settings())
        fill(client, "sample")
        fill(client, "sample-records", store_ids=False)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for_heartbeat(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    # Waiting for a real server to start is about the process: bounded, and it ends as soon as it answers.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chroma run exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"chroma run did not answer its heartbeat within 60 s: {log.read_text()[-2000:]}")


def test_server_figures_equal_scoring_the_same_ranking_as_a_run(
    chroma_server: tuple[str, int], fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    host, port = chroma_server
    options = [f"host={host}", f"port={port}", "collection=sample", f"embed_model={EMBED_MODEL}"]
    result = assert_figures_equal_run(tmp_path, "chroma", options)
    assert result["retriever"]["name"] == "chroma"
    assert fake_openai.count("embeddings") >= 1


def test_ids_come_from_a_metadata_field_when_id_field_names_it(
    chroma_server: tuple[str, int], fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    host, port = chroma_server
    options = [
        f"host={host}", f"port={port}", "collection=sample-records", f"embed_model={EMBED_MODEL}",
        "id_field=chunk_id",
    ]  # fmt: skip
    assert_figures_equal_run(tmp_path, "chroma", options)
    without = build_retriever(
        "chroma",
        load_corpus(CORPUS),
        options={"host": host, "port": port, "collection": "sample-records", "embed_model": EMBED_MODEL},
    )
    assert without.search(["which port does harbord listen on"], 3)[0][0].startswith("rec-")


def test_queries_run_on_several_threads_with_the_same_ranking(
    chroma_server: tuple[str, int], fake_openai: FakeOpenAI
) -> None:
    host, port = chroma_server
    options = {"host": host, "port": port, "collection": "sample", "embed_model": EMBED_MODEL}
    queries = [query for query in _sample_queries()][:40]
    corpus = load_corpus(CORPUS)
    one = build_retriever("chroma", corpus, options=options).search(queries, 10)
    many = build_retriever("chroma", corpus, options=options, settings=RunSettings(workers=8)).search(
        queries, 10
    )
    assert many == one


def test_export_from_a_server_round_trips(chroma_server: tuple[str, int], tmp_path: Path) -> None:
    host, port = chroma_server
    assert_export_round_trips(
        tmp_path, "chroma", [f"host={host}", f"port={port}", "collection=sample", "title_field=title"]
    )


def test_export_with_id_field_and_small_pages(chroma_server: tuple[str, int], tmp_path: Path) -> None:
    host, port = chroma_server
    options = [
        f"host={host}", f"port={port}", "collection=sample-records", "title_field=title", "id_field=chunk_id",
    ]  # fmt: skip
    assert_export_round_trips(tmp_path, "chroma", options, "--page-size", "7")


def test_local_folder_with_the_collections_own_embedding_function(tmp_path: Path) -> None:
    folder = tmp_path / "chroma_db"
    client = chromadb().PersistentClient(path=str(folder), settings=settings())
    fill(client, "own", function=word_hashing()())
    corpus = load_corpus(CORPUS)
    retriever = build_retriever("chroma", corpus, options={"path": folder, "collection": "own"})
    assert "realrecall-test-word-hashing" in retriever.description
    [hits] = retriever.search(["harbord port listen"], 5)
    expected = client.get_collection("own").query(query_texts=["harbord port listen"], n_results=5)["ids"][0]
    assert hits == expected
    assert_figures_equal_run(tmp_path, "chroma", [f"path={folder}", "collection=own"])
    assert_export_round_trips(tmp_path, "chroma", [f"path={folder}", "collection=own", "title_field=title"])


def test_results_say_the_search_is_approximate_and_a_rebuild_changes_the_fingerprint(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "chroma_db"
    client = chromadb().PersistentClient(path=str(folder), settings=settings())
    fill(client, "sample")
    options = [f"path={folder}", "collection=sample", f"embed_model={EMBED_MODEL}"]
    first = evaluate_store(tmp_path, "first", "chroma", options)
    assert "HNSW" in first["retriever"]["approximate"]
    [warning] = approximate_warnings(first)
    assert "chroma's search is approximate (Chroma's HNSW index (ef_search=" in warning
    fingerprint = first["fingerprints"]["retriever"]
    assert fingerprint["index"] == {"collection_id": str(client.get_collection("sample").id)}
    assert evaluate_store(tmp_path, "again", "chroma", options)["fingerprints"]["retriever"] == fingerprint

    client.delete_collection("sample")
    fill(client, "sample")  # the same vectors, a new index
    rebuilt = evaluate_store(tmp_path, "rebuilt", "chroma", options)["fingerprints"]["retriever"]
    assert rebuilt["index"] != fingerprint["index"]
    assert {**rebuilt, "index": None} == {**fingerprint, "index": None}

    for output_format in ("table", "markdown", "json", "html"):
        done = cli.run("calibrate", str(tmp_path / "first.json"), "-f", output_format, "--n-resamples", "200")
        assert done.returncode == 0, done.stderr
        assert "search is approximate (Chroma" in " ".join(done.stdout.split()), output_format


def test_a_scheduled_run_over_a_rebuilt_collection_is_not_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "chroma_db"
    client = chromadb().PersistentClient(path=str(folder), settings=settings())
    fill(client, "own", function=word_hashing()())
    (tmp_path / "pipeline.toml").write_text(
        f'[corpus]\npath = "{CORPUS}"\n[real]\npath = "{CORPUS.parent / "real_questions.jsonl"}"\n'
        '[generate]\noutput = "synthetic.jsonl"\nbackend = "extractive"\nsample = 20\n'
        f'[evaluate.retriever]\nname = "chroma"\npath = "{folder}"\ncollection = "own"\n'
        '[evaluate]\nk = [1, 10]\n[output]\ndir = "runs"\nhistory = "history.jsonl"\n',
        encoding="utf-8",
    )
    for _ in range(2):
        done = cli.run("run", "pipeline.toml", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    client.delete_collection("own")
    fill(client, "own", function=word_hashing()())  # the same vectors, a new index
    done = cli.run("run", "pipeline.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert [row["unchanged"] for row in rows] == [False, True, False]


def test_a_collection_without_its_own_function_needs_embed_model(tmp_path: Path) -> None:
    folder = tmp_path / "chroma_db"
    fill(chromadb().PersistentClient(path=str(folder), settings=settings()), "plain")
    done = cli.run(
        "evaluate", "--gold", str(CORPUS.parent / "real_questions.jsonl"), "--corpus", str(CORPUS),
        "--retriever", "chroma", "--retriever-option", f"path={folder}",
        "--retriever-option", "collection=plain",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.err_lines == [
        f"error: Chroma collection 'plain' at {folder} has no embedding function of its own; "
        "embed queries with embed_model=MODEL, the model its vectors came from"
    ]


def test_one_line_errors_for_a_missing_folder_collection_or_server(tmp_path: Path) -> None:
    folder = tmp_path / "chroma_db"
    fill(chromadb().PersistentClient(path=str(folder), settings=settings()), "plain")
    corpus = load_corpus(CORPUS)
    with pytest.raises(InputError, match="no Chroma folder here"):
        build_retriever("chroma", corpus, options={"path": tmp_path / "typo", "collection": "plain"})
    assert not (tmp_path / "typo").exists()
    with pytest.raises(InputError, match=r"no such collection.*collections there: plain"):
        build_retriever("chroma", corpus, options={"path": folder, "collection": "nope"})
    with pytest.raises(InputError, match=r"cannot reach a Chroma server at 127\.0\.0\.1"):
        build_retriever(
            "chroma", corpus, options={"host": "127.0.0.1", "port": _free_port(), "collection": "x"}
        )
    with pytest.raises(InputError, match=r"either host .* or path .*, not neither"):
        build_retriever("chroma", corpus, options={"collection": "x"})


def test_a_store_failing_mid_run_is_one_line_naming_the_query(
    tmp_path: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from realrecall.evaluate.retrievers import chroma as chroma_module
    from realrecall.evaluate.retrievers.base import retrieve

    folder = tmp_path / "chroma_db"
    fill(chromadb().PersistentClient(path=str(folder), settings=settings()), "plain")
    options = {"path": folder, "collection": "plain", "embed_model": EMBED_MODEL}
    opened = chroma_module._open_collection(chroma_module.ChromaOptions(**options), lambda call: call())

    class Failing:
        def count(self) -> int:
            return int(opened.count())

        def query(self, **_: Any) -> Any:
            raise ConnectionError("connection refused")

    monkeypatch.setattr(chroma_module, "_open_collection", lambda _options, _ask: Failing())
    retriever = build_retriever("chroma", load_corpus(CORPUS), options=options)
    with pytest.raises(InputError) as caught:
        retrieve(retriever, {"q1": "harbord port"}, 5)
    assert str(caught.value).startswith(
        "retriever chroma raised ConnectionError: connection refused for query 'q1' ('harbord port'); "
        "check that"
    )


def _sample_queries() -> list[str]:
    from realrecall.gold import load_gold

    return [query.query for query in load_gold(CORPUS.parent / "real_questions.jsonl").queries]

"""Vector stores that fail as stores do in the field: a server that accepts and never answers, a folder
whose files are damaged. Each ends in one line naming the server or the folder and the fix (exit 2),
never a hang or a traceback, and no library warning is printed around that line.

The stores are small (three records, four dimensions), built once per module and copied per test.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from realrecall.corpus import load_corpus
from realrecall.errors import InputError, ServerSilent
from realrecall.evaluate.retrievers import RunSettings, build_retriever
from realrecall.stores import export_corpus
from support import cli
from support.silent_server import SilentServer

pytestmark = pytest.mark.slow  # three stores' client libraries, seconds each to import

SAMPLE = Path(__file__).resolve().parents[3] / "src" / "realrecall" / "data"
CORPUS = SAMPLE / "docs_corpus.jsonl"
GOLD = SAMPLE / "real_questions.jsonl"
RECORDS = [("a", "alpha text"), ("b", "beta text"), ("c", "gamma text")]
VECTORS = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]


def _chroma(folder: Path) -> list[str]:
    chromadb = pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    collection = client.create_collection("docs", embedding_function=None)
    collection.add(ids=[i for i, _ in RECORDS], embeddings=VECTORS, documents=[text for _, text in RECORDS])
    return ["path=" + str(folder), "collection=docs"]


def _qdrant(folder: Path) -> list[str]:
    pytest.importorskip("qdrant_client", reason="the qdrant extra is not installed")
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    client.create_collection(
        "docs", vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE)
    )
    client.upsert(
        "docs",
        points=[
            models.PointStruct(id=n, vector=VECTORS[n], payload={"text": text})
            for n, (_, text) in enumerate(RECORDS)
        ],
    )
    client.close()
    return ["path=" + str(folder), "collection=docs"]


def _lancedb(folder: Path) -> list[str]:
    lancedb = pytest.importorskip("lancedb", reason="the lancedb extra is not installed")
    database = lancedb.connect(str(folder))
    database.create_table(
        "docs", data=[{"id": i, "text": text, "vector": VECTORS[n]} for n, (i, text) in enumerate(RECORDS)]
    )
    return ["uri=" + str(folder), "table=docs"]


def _break_chroma(folder: Path) -> None:
    (folder / "chroma.sqlite3").write_bytes(b"\x00not a database\x01" * 64)


def _break_qdrant(folder: Path) -> None:
    (folder / "meta.json").write_text("{ broken", encoding="utf-8")


def _break_lancedb(folder: Path) -> None:
    for manifest in (folder / "docs.lance" / "_versions").glob("*.manifest"):
        manifest.write_bytes(b"garbage\n")


STORES: dict[str, tuple[Callable[[Path], list[str]], Callable[[Path], None]]] = {
    "chroma": (_chroma, _break_chroma),
    "qdrant": (_qdrant, _break_qdrant),
    "lancedb": (_lancedb, _break_lancedb),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each store's folder, built once (its client library is imported only here and in the tests)."""
    folders = {}
    for name, (build, _) in STORES.items():
        folder = tmp_path_factory.mktemp(name) / "store"
        build(folder)
        folders[name] = folder
    return folders


def _damaged_copy(built: dict[str, Path], store: str, tmp_path: Path) -> tuple[Path, list[str]]:
    folder = tmp_path / "store"
    shutil.copytree(built[store], folder)
    STORES[store][1](folder)
    key = "uri" if store == "lancedb" else "path"
    rest = "table=docs" if store == "lancedb" else "collection=docs"
    return folder, [f"{key}={folder}", rest]


def _flags(flag: str, options: list[str]) -> list[str]:
    return [item for option in options for item in (flag, option)]


@pytest.mark.parametrize("store", list(STORES))
def test_a_damaged_store_folder_is_one_line_naming_it_and_the_fix(
    built: dict[str, Path], store: str, tmp_path: Path
) -> None:
    folder, options = _damaged_copy(built, store, tmp_path)

    done = cli.run(
        "corpus", "export", "--from", store, *_flags("--option", options), "-o", str(tmp_path / "x.jsonl")
    )

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.err_lines) == 1, done.stderr  # no library warning around the one line
    [line] = done.err_lines
    assert line.startswith(f"error: {folder}: cannot read "), line
    assert "restore the folder from a backup, or rebuild the store" in line
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("store", list(STORES))
def test_evaluating_on_a_damaged_store_is_one_line_naming_it(
    built: dict[str, Path], store: str, tmp_path: Path
) -> None:
    folder, options = _damaged_copy(built, store, tmp_path)
    extra = [] if store != "qdrant" else ["--retriever-option", "embed_model=m"]

    done = cli.run(
        "evaluate", "--gold", str(GOLD), "--corpus", str(CORPUS), "--retriever", store,
        *_flags("--retriever-option", options), *extra,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert len(done.err_lines) == 1, done.stderr
    assert done.err_lines[0].startswith(f"error: {folder}: cannot read "), done.stderr


def _garble_lancedb_data(folder: Path) -> None:
    for data in (folder / "docs.lance" / "data").glob("*.lance"):
        data.write_bytes(b"xx")


def _remove_lancedb_data(folder: Path) -> None:
    for data in (folder / "docs.lance" / "data").glob("*.lance"):
        data.unlink()


class FourDimensions:
    """An embedder for the stores' four-dimensional vectors: every query is the first record's."""

    name = "four-dimensions"

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.asarray([VECTORS[0]] * len(texts), dtype=np.float32)


@pytest.mark.parametrize("damage", [_garble_lancedb_data, _remove_lancedb_data], ids=["garbled", "missing"])
def test_a_lancedb_data_file_that_cannot_be_read_is_one_line_naming_the_folder(
    built: dict[str, Path], damage: Callable[[Path], None], tmp_path: Path
) -> None:
    """The manifest is fine, so the table opens; its data files are read with the first query or page,
    and failed there with Lance's error and the Rust source line, and the advice to check that the
    store is reachable."""
    folder = tmp_path / "store"
    shutil.copytree(built["lancedb"], folder)
    damage(folder)
    fix = (
        "its files look damaged, or were written by another version of its library: restore the folder "
        "from a backup, or rebuild the store"
    )

    done = cli.run(
        "corpus", "export", "--from", "lancedb", "--option", f"uri={folder}", "--option", "table=docs",
        "-o", str(tmp_path / "x.jsonl"),
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    [line] = done.err_lines
    assert line.startswith(f"error: {folder}: cannot read LanceDB table 'docs' (RuntimeError: lance error: ")
    assert line.endswith(fix), line
    assert ".rs:" not in line
    assert not (tmp_path / "x.jsonl").exists()

    retriever = build_retriever(
        "lancedb",
        load_corpus(CORPUS),
        options={"uri": str(folder), "table": "docs", "embedder": FourDimensions()},
    )
    with pytest.raises(InputError, match=f"cannot read LanceDB table 'docs' .*; {fix}$") as raised:
        retriever.search(["alpha"], 2)
    assert raised.value.path == str(folder)


@pytest.mark.parametrize("table", ["embeddings", "segments"])
def test_a_chroma_database_missing_a_table_is_one_line_naming_the_folder(
    built: dict[str, Path], table: str, tmp_path: Path
) -> None:
    """chroma.sqlite3 opens (its collections table is there), but a table Chroma reads later is gone:
    the first count failed with Chroma's InternalError and a 30-line traceback."""
    import sqlite3

    folder = tmp_path / "store"
    shutil.copytree(built["chroma"], folder)
    with contextlib.closing(sqlite3.connect(folder / "chroma.sqlite3")) as database:
        database.execute(f"DROP TABLE {table}")
        database.commit()
    fix = (
        "its files look damaged, or were written by another version of its library: restore the folder "
        "from a backup, or rebuild the store"
    )

    done = cli.run(
        "corpus", "export", "--from", "chroma", "--option", f"path={folder}", "--option", "collection=docs",
        "-o", str(tmp_path / "x.jsonl"),
    )  # fmt: skip

    assert done.returncode == 2, done.stderr
    [line] = done.err_lines
    assert line.startswith(f"error: {folder}: cannot read the Chroma store (InternalError: "), line
    assert line.endswith(fix), line
    assert not (tmp_path / "x.jsonl").exists()

    with pytest.raises(InputError, match=f"cannot read the Chroma store .*; {fix}$") as raised:
        build_retriever(
            "chroma",
            load_corpus(CORPUS),
            options={"path": folder, "collection": "docs", "embedder": FourDimensions()},
        )
    assert raised.value.path == str(folder)


def test_an_empty_store_exports_nothing_and_says_so(built: dict[str, Path], tmp_path: Path) -> None:
    chromadb = pytest.importorskip("chromadb", reason="the chroma extra is not installed")
    from chromadb.config import Settings

    folder = tmp_path / "empty"
    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    client.create_collection("docs", embedding_function=None)
    output = tmp_path / "x.jsonl"

    with pytest.raises(InputError, match="the chroma store holds no record to export"):
        export_corpus("chroma", output, options={"path": folder, "collection": "docs"})
    assert not output.exists()


# --- a server that accepts and never answers ----------------------------------------------------------

ADVICE = "; check that the server is running and answering, or allow more time with "


def _server_options(store: str, server: SilentServer) -> list[str]:
    if store == "chroma":
        return ["host=127.0.0.1", f"port={server.port}", "collection=docs"]
    return [f"url={server.url}", "collection=docs", "embed_model=m"]


@pytest.mark.parametrize(
    ("store", "command"),
    [
        ("chroma", ["evaluate", "--gold", str(GOLD)]),
        ("qdrant", ["evaluate", "--gold", str(GOLD)]),
        ("chroma", ["calibrate", "--synthetic", str(GOLD), "--real", str(GOLD)]),  # one-call mode evaluates
    ],
)
def test_a_silent_server_ends_evaluate_in_one_line_naming_it(store: str, command: list[str]) -> None:
    pytest.importorskip({"chroma": "chromadb", "qdrant": "qdrant_client"}[store])
    with SilentServer() as server:
        done = cli.run(
            *command, "--corpus", str(CORPUS), "--retriever", store,
            *_flags("--retriever-option", _server_options(store, server)), "--request-timeout", "0.5",
        )  # fmt: skip
    name = {"chroma": f"Chroma server at 127.0.0.1:{server.port}", "qdrant": f"Qdrant server at {server.url}"}
    assert done.returncode == 2, done.stderr
    assert done.err_lines == [
        f"error: the {name[store]} gave no answer within 0.5 s" + ADVICE + "--request-timeout"
    ]


@pytest.mark.parametrize("store", ["chroma", "qdrant"])
def test_a_silent_server_ends_corpus_export_in_one_line_naming_it(store: str, tmp_path: Path) -> None:
    pytest.importorskip({"chroma": "chromadb", "qdrant": "qdrant_client"}[store])
    with SilentServer() as server:
        options = [o for o in _server_options(store, server) if not o.startswith("embed_model")]
        done = cli.run(
            "corpus", "export", "--from", store, *_flags("--option", options),
            "--request-timeout", "0.5", "-o", str(tmp_path / "x.jsonl"),
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert len(done.err_lines) == 1, done.stderr
    assert "gave no answer within 0.5 s" in done.err_lines[0]
    assert str(server.port) in done.err_lines[0]
    assert done.err_lines[0].endswith(ADVICE + "--request-timeout")
    assert not (tmp_path / "x.jsonl").exists()


def test_every_store_query_has_the_request_timeout_by_default() -> None:
    """No option given: a silent server still ends the run (after the default request timeout)."""
    assert RunSettings().request_timeout == 60.0
    with pytest.raises(InputError, match="request_timeout must be a number, got None"):
        RunSettings(request_timeout=None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="request_timeout must be a positive number of seconds, got 0"):
        RunSettings(request_timeout=0)


def test_a_silent_chroma_server_in_python_is_one_input_error_naming_request_timeout(tmp_path: Path) -> None:
    """From Python the time allowed is the keyword (``request_timeout=``) of the call or its settings."""
    pytest.importorskip("chromadb")
    options = {"host": "127.0.0.1", "collection": "docs"}
    with SilentServer() as server:
        with pytest.raises(ServerSilent) as building:
            build_retriever(
                "chroma", load_corpus(CORPUS), options={**options, "port": server.port},
                settings=RunSettings(request_timeout=0.3),
            )  # fmt: skip
        with pytest.raises(ServerSilent) as exporting:
            export_corpus("chroma", tmp_path / "x.jsonl", options={**options, "port": server.port},
                          request_timeout=0.3)  # fmt: skip
    for caught in (building, exporting):
        assert isinstance(caught.value, InputError)  # exit code 2, as before
        assert str(caught.value) == (
            f"the Chroma server at 127.0.0.1:{server.port} gave no answer within 0.3 s"
            + ADVICE
            + "request_timeout"
        )


def test_a_silent_server_under_run_advises_the_pipelines_key(tmp_path: Path) -> None:
    """``realrecall run`` builds the retriever from ``[evaluate]``: the advice names that key in that file,
    not evaluate's option (issue 28's rule, as generate's ``[generate] request_timeout``)."""
    pytest.importorskip("chromadb")
    pipeline = tmp_path / "pipeline.toml"
    with SilentServer() as server:
        pipeline.write_text(
            f'[corpus]\npath = "{CORPUS}"\n[real]\npath = "{GOLD}"\n'
            '[generate]\noutput = "synthetic.jsonl"\nbackend = "extractive"\n'
            f'[evaluate.retriever]\nname = "chroma"\nhost = "127.0.0.1"\nport = {server.port}\n'
            'collection = "docs"\n[evaluate]\nrequest_timeout = 0.3\n',
            encoding="utf-8",
        )
        done = cli.run("run", str(pipeline), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.err_lines == [
        f"error: the Chroma server at 127.0.0.1:{server.port} gave no answer within 0.3 s"
        + ADVICE
        + f"[evaluate] request_timeout in {pipeline}"
    ]
    assert not (tmp_path / "synthetic.jsonl").exists()  # stopped before generating

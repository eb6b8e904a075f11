"""What the vector stores share, checked without any store installed: missing extras, the export's checks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from realrecall import stores
from realrecall.corpus import Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import build_retriever, register, unregister
from realrecall.evaluate.retrievers.options import RetrieverSpec, StoreExport
from realrecall.evaluate.retrievers.store_common import chunk_record, plain_metadata, record_id
from support import cli

STORE_OPTIONS = {
    "chroma": ("chromadb", {"path": ".", "collection": "docs"}),
    "lancedb": ("lancedb", {"uri": ".", "table": "docs"}),
    "qdrant": ("qdrant_client", {"path": ".", "collection": "docs"}),
}


@pytest.mark.parametrize("store", sorted(STORE_OPTIONS))
def test_a_missing_extra_is_one_line_naming_the_pip_command(
    store: str, pets_corpus: Corpus, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module, options = STORE_OPTIONS[store]
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError, as when not installed
    with pytest.raises(InputError) as caught:
        build_retriever(store, pets_corpus, options=options)
    assert str(caught.value).endswith(f"; pip install 'realrecall[{store}]'")
    flags = [item for key, value in options.items() for item in ("--option", f"{key}={value}")]
    done = cli.run("corpus", "export", "--from", store, *flags, "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert done.err_lines[0].startswith(f"error: the {store} store needs the {module} package")
    assert not (tmp_path / "out.jsonl").exists()


@dataclass(frozen=True, kw_only=True)
class FakeOptions:
    fail_after: int = -1
    duplicate: bool = False


@pytest.fixture
def fake_store() -> Iterator[None]:
    """A store of three records whose reading can fail after some, or repeat an id, registered as
    any store is: a retriever spec with an ``export``."""

    def export_chunks(options: FakeOptions, *, page_size: int, request_timeout: float = 60.0) -> StoreExport:
        def records() -> Iterator[dict[str, Any]]:
            for n in range(3):
                if n == options.fail_after:
                    raise ConnectionError("server gone")
                chunk_id = "c0" if options.duplicate else f"c{n}"
                yield chunk_record(chunk_id, f"text {n}", metadata={"doc": "d", "start": n}, where="fake")

        return StoreExport(total=3, records=records())

    spec = RetrieverSpec(
        name="fake",
        options=FakeOptions,
        build=lambda *_: None,  # type: ignore[arg-type,return-value]
        summary="fake",
        export=export_chunks,
    )
    register(spec)
    yield
    unregister("fake")


@pytest.mark.usefixtures("fake_store")
def test_export_writes_the_records_and_reports_progress(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    written = stores.export_corpus("fake", tmp_path / "out.jsonl", progress=lambda *pair: seen.append(pair))
    assert written == 3
    assert seen[0] == (0, 3)
    assert seen[-1] == (3, 3)
    corpus = load_corpus(tmp_path / "out.jsonl")
    assert corpus.ids == ("c0", "c1", "c2")
    assert dict(corpus["c2"].metadata) == {"doc": "d", "start": 2}


@pytest.mark.usefixtures("fake_store")
def test_a_registered_store_is_one_the_cli_lists_and_exports(tmp_path: Path) -> None:
    # Registering its spec (one registry line for a built-in store) is all a new store needs.
    shown = cli.run("corpus", "export", "--help", env={"COLUMNS": "200"})
    assert "fake" in shown.stdout.partition("The store: ")[2].partition(".")[0].split(", ")
    done = cli.run("corpus", "export", "--from", "fake", "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    assert load_corpus(tmp_path / "out.jsonl").ids == ("c0", "c1", "c2")


@pytest.mark.usefixtures("fake_store")
def test_a_failure_mid_export_leaves_the_old_file_and_no_half_file(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    output.write_text("old\n")
    with pytest.raises(InputError) as caught:
        stores.export_corpus("fake", output, options={"fail_after": "2"})
    assert str(caught.value) == (
        "reading the fake store failed: ConnectionError: server gone; "
        "check that the store is reachable and try again (nothing was written)"
    )
    with pytest.raises(InputError, match="two records with the chunk id 'c0'"):
        stores.export_corpus("fake", output, options={"duplicate": "true"})
    assert output.read_text() == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.jsonl"]


def test_unknown_store_and_bad_page_size(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown store 'pinecone'; choose from ") as caught:
        stores.export_corpus("pinecone", tmp_path / "out.jsonl")
    assert {"chroma", "lancedb", "qdrant"} <= set(str(caught.value).partition("choose from ")[2].split(", "))
    with pytest.raises(InputError, match="unknown store 'bm25'"):  # a retriever, but not a store
        stores.export_corpus("bm25", tmp_path / "out.jsonl")
    done = cli.run(
        "corpus", "export", "--from", "chroma", "--option", "collection", "-o", str(tmp_path / "o")
    )
    assert done.returncode == 2
    assert done.err_lines == ["error: --option 'collection' is not KEY=VALUE; write e.g. --option k1=1.2"]


def test_ids_and_metadata_as_json() -> None:
    assert record_id(7, None, None, where="w") == "7"
    assert record_id("x", {"meta": {"id": "c1"}}, "meta.id", where="w") == "c1"
    with pytest.raises(InputError, match=r"w: record 'x' has no usable 'chunk_id' field \(got None\)"):
        record_id("x", {}, "chunk_id", where="w")
    import datetime

    import numpy as np

    assert plain_metadata({"n": np.int64(3), "d": datetime.date(2024, 1, 2), "b": b"\x00", "l": (1, 2)}) == {
        "n": 3,
        "d": "2024-01-02",
        "b": "AA==",
        "l": [1, 2],
    }

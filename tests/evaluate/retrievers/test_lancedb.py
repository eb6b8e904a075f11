"""``lancedb``: an embedded LanceDB table of the sample corpus, searched and exported.

Vectors are precomputed (``store_checks``) and queries embedded by the fake OpenAI endpoint, or by a
hashing embedding function registered with LanceDB here, so nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import re
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
from support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.slow  # LanceDB tables, seconds each


def lancedb() -> Any:
    """The lancedb module, or a skip without the extra. Imported by the tests, not at collection:
    lancedb takes over a second to import, which every xdist worker would pay to collect this file."""
    return pytest.importorskip(
        "lancedb", reason="the lancedb extra is not installed (pip install 'realrecall[lancedb]')"
    )


@cache
def word_hashing() -> type:
    """A deterministic embedding function LanceDB can rebuild by name, registered on first use."""
    from lancedb.embeddings import TextEmbeddingFunction, register

    @register("realrecall-test-word-hashing")
    class WordHashing(TextEmbeddingFunction):  # type: ignore[misc]
        """Hashed words, 64 dimensions."""

        def ndims(self) -> int:
            return 64

        def generate_embeddings(self, texts: Any) -> list[list[float]]:
            vectors = []
            for text in texts:
                vector = np.zeros(64, dtype=np.float32)
                for word in re.findall(r"\w+", str(text).lower()):
                    vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % 64] += 1.0
                vectors.append(vector.tolist())
            return vectors

    return WordHashing


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lancedb()  # skips every test without the extra
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def rows(*, store_ids: bool = True) -> list[dict[str, Any]]:
    chunks = sample_chunks()
    vectors = chunk_vectors(chunks)
    return [
        {
            "id": chunk.id if store_ids else f"rec-{n:04d}",
            "text": chunk.text,
            "vector": vectors[n].tolist(),
            **stored_metadata(chunk),
        }
        for n, chunk in enumerate(chunks)
    ]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    folder = tmp_path / "lance_db"
    db = lancedb().connect(str(folder))
    db.create_table("sample", data=rows())
    db.create_table("sample_records", data=rows(store_ids=False))
    return folder


def test_figures_equal_scoring_the_same_ranking_as_a_run(
    database: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    options = [f"uri={database}", "table=sample", f"embed_model={EMBED_MODEL}", "distance=cosine"]
    result = assert_figures_equal_run(tmp_path, "lancedb", options)
    assert result["retriever"]["name"] == "lancedb"
    assert result["fingerprints"]["retriever"]["versions"]["lancedb"] == lancedb().__version__


def test_ids_from_another_column_and_threads_keep_the_ranking(
    database: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    options = [f"uri={database}", "table=sample_records", f"embed_model={EMBED_MODEL}", "id_field=chunk_id"]
    assert_figures_equal_run(tmp_path, "lancedb", options)
    corpus = load_corpus(CORPUS)
    given = {"uri": str(database), "table": "sample", "embed_model": EMBED_MODEL}
    queries = [f"harbord port {n}" for n in range(12)] + ["sync conflicts", "E1042"]
    one = build_retriever("lancedb", corpus, options=given).search(queries, 10)
    many = build_retriever("lancedb", corpus, options=given, settings=RunSettings(workers=6)).search(
        queries, 10
    )
    assert many == one


def test_a_vector_index_makes_the_search_approximate_unless_exact_and_a_rebuild_changes_the_fingerprint(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from lancedb.index import IvfFlat

    folder = tmp_path / "lance_db"
    db = lancedb().connect(str(folder))
    db.create_table("sample", data=rows())
    options = [f"uri={folder}", "table=sample", f"embed_model={EMBED_MODEL}", "distance=cosine"]
    flat = evaluate_store(tmp_path, "flat", "lancedb", options)
    assert "approximate" not in flat["retriever"]
    assert approximate_warnings(flat) == []
    fingerprint = flat["fingerprints"]["retriever"]
    assert fingerprint["index"]["table_version"] == 1
    assert "approximate" not in fingerprint
    assert evaluate_store(tmp_path, "again", "lancedb", options)["fingerprints"]["retriever"] == fingerprint

    db.open_table("sample").create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=4))
    indexed = evaluate_store(tmp_path, "indexed", "lancedb", options)
    assert indexed["retriever"]["approximate"] == "LanceDB's IvfFlat index (exact=true searches every row)"
    [warning] = approximate_warnings(indexed)
    assert warning.startswith("lancedb's search is approximate (LanceDB's IvfFlat index")
    assert indexed["fingerprints"]["retriever"]["index"]["table_version"] == 2

    exact = evaluate_store(tmp_path, "exact", "lancedb", [*options, "exact=true"])
    assert "approximate" not in exact["retriever"]
    assert approximate_warnings(exact) == []
    for ours, flat_set in zip(exact["gold_sets"], flat["gold_sets"], strict=True):
        assert ours["per_query"]["metrics"] == flat_set["per_query"]["metrics"]

    db.drop_table("sample")
    db.create_table("sample", data=rows())  # the same rows, made again: version 1 anew
    rebuilt = evaluate_store(tmp_path, "rebuilt", "lancedb", options)["fingerprints"]["retriever"]
    assert rebuilt["index"]["table_version"] == 1
    assert rebuilt["index"] != fingerprint["index"]
    assert {**rebuilt, "index": None} == {**fingerprint, "index": None}


def test_export_round_trips(database: Path, tmp_path: Path) -> None:
    # Every column but the text, the vectors and the id column is metadata: here the store's own "id".
    records = {chunk.id: f"rec-{n:04d}" for n, chunk in enumerate(sample_chunks())}
    assert_export_round_trips(tmp_path, "lancedb", [f"uri={database}", "table=sample", "title_field=title"])
    assert_export_round_trips(
        tmp_path,
        "lancedb",
        [f"uri={database}", "table=sample_records", "title_field=title", "id_field=chunk_id"],
        "--page-size",
        "9",
        metadata=lambda chunk: {
            **{key: value for key, value in stored_metadata(chunk).items() if key != "chunk_id"},
            "id": records[chunk.id],
        },
    )


def test_the_tables_own_embedding_function(tmp_path: Path) -> None:
    from lancedb.embeddings import get_registry
    from lancedb.pydantic import LanceModel, Vector

    word_hashing()
    function = get_registry().get("realrecall-test-word-hashing").create()

    class Schema(LanceModel):  # type: ignore[misc]
        id: str
        text: str = function.SourceField()
        vector: Vector(function.ndims()) = function.VectorField()  # type: ignore[valid-type]

    folder = tmp_path / "own_db"
    table = lancedb().connect(str(folder)).create_table("own", schema=Schema)
    table.add([{"id": chunk.id, "text": chunk.searchable_text()} for chunk in sample_chunks()])
    retriever = build_retriever("lancedb", load_corpus(CORPUS), options={"uri": str(folder), "table": "own"})
    assert "WordHashing" in retriever.description
    [hits] = retriever.search(["harbord port listen"], 5)
    expected = [row["id"] for row in table.search("harbord port listen").limit(5).to_list()]
    assert hits == expected
    assert_figures_equal_run(tmp_path, "lancedb", [f"uri={folder}", "table=own", "distance=cosine"])


def test_one_line_errors(database: Path, tmp_path: Path) -> None:
    corpus = load_corpus(CORPUS)
    with pytest.raises(InputError, match="no LanceDB folder here"):
        build_retriever("lancedb", corpus, options={"uri": str(tmp_path / "typo"), "table": "sample"})
    assert not (tmp_path / "typo").exists()
    with pytest.raises(InputError, match=r"no such table .*tables there: sample, sample_records"):
        build_retriever("lancedb", corpus, options={"uri": str(database), "table": "nope"})
    with pytest.raises(InputError, match=r"has no column 'doc_id' \(its columns: id, text, vector"):
        build_retriever(
            "lancedb", corpus, options={"uri": str(database), "table": "sample", "id_field": "doc_id"}
        )
    with pytest.raises(
        InputError, match="has no embedding function of its own; embed queries with embed_model"
    ):
        build_retriever("lancedb", corpus, options={"uri": str(database), "table": "sample"})
    with pytest.raises(InputError, match=r"has no column 'embedding' \(its vector columns: vector\)"):
        build_retriever(
            "lancedb", corpus, options={"uri": str(database), "table": "sample", "vector_column": "embedding"}
        )

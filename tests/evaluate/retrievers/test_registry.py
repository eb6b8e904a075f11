"""Choosing a retriever by name."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import RETRIEVERS, Retriever, build_retriever


def test_unknown_name_lists_the_registry_and_the_custom_form(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError) as caught:
        build_retriever("bm26", pets_corpus)
    message = str(caught.value)
    assert message == f"unknown retriever 'bm26'; choose from {', '.join(RETRIEVERS)}, or module:function"
    assert "bm25" in RETRIEVERS


def test_registry_holds_the_built_in_names() -> None:
    assert {"bm25", "dense", "local-dense", "hybrid", "chroma", "lancedb", "qdrant"} <= set(RETRIEVERS)
    assert next(iter(RETRIEVERS)) == "bm25"  # the default comes first in every list


def test_a_built_retriever_satisfies_the_protocol(pets_corpus: Corpus) -> None:
    retriever = build_retriever(" bm25 ", pets_corpus)
    assert isinstance(retriever, Retriever)
    assert retriever.description


def test_the_public_api_lists_everything_it_exports() -> None:
    import realrecall.evaluate.retrievers as package

    for name in package.__all__:  # exported lazily: vars() holds only what is loaded
        getattr(package, name)
    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, ModuleType) and name != "annotations"
    }
    assert public == set(package.__all__)


# --- what a retriever reads: its store folder, model folder, the user's own code ---------------------


def test_retriever_inputs_are_the_local_paths_it_reads(tmp_path: Path) -> None:
    from realrecall.evaluate.retrievers import retriever_inputs

    assert retriever_inputs("bm25") == {}
    assert retriever_inputs("chroma", {"path": "db", "collection": "docs"}) == {"path": Path("db")}
    assert retriever_inputs("chroma", {"host": "127.0.0.1", "collection": "docs"}) == {}
    assert retriever_inputs("qdrant", {"path": "q", "collection": "docs"}) == {"path": Path("q")}
    assert retriever_inputs("lancedb", {"uri": "~/lance", "table": "t"}) == {"uri": Path.home() / "lance"}
    assert retriever_inputs("lancedb", {"uri": "s3://bucket/db", "table": "t"}) == {}
    assert retriever_inputs("local-dense", {"local_model": "models/mini"}) == {
        "local_model": Path("models/mini")
    }
    assert retriever_inputs("hybrid", {"local_model": "models/mini"}) == {"local_model": Path("models/mini")}
    assert retriever_inputs("code/search.py:search") == {"function": Path("code/search.py")}


def test_a_module_retrievers_input_is_its_file_found_without_running_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from realrecall.evaluate.retrievers import retriever_inputs

    (tmp_path / "ran.txt").unlink(missing_ok=True)
    code = tmp_path / "team_search.py"
    code.write_text(
        f"open({str(tmp_path / 'ran.txt')!r}, 'w').close()\ndef search(query, k):\n    return []\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert retriever_inputs("team_search:search") == {"function": code}
    assert not (tmp_path / "ran.txt").exists()
    assert retriever_inputs("no_such_module_here:search") == {}  # its import fails later, in one line


def test_a_python_functions_input_is_its_source_file() -> None:
    from realrecall.evaluate.retrievers import retriever_inputs

    def search(query: str, k: int) -> list[str]:
        return []

    assert retriever_inputs(search) == {"function": Path(__file__)}


def test_an_output_over_a_module_retrievers_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support import cli

    code = tmp_path / "team_search.py"
    code.write_text("def search(query, k):\n    return []\n")
    before = code.read_bytes()
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "alpha"}\n')
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"query_id": "q", "query": "alpha", "gold": {"a": 1}}\n')

    done = cli.run(
        "evaluate", "--gold", str(gold), "--corpus", str(corpus), "--retriever", "team_search:search",
        "--per-query", str(code),
    )  # fmt: skip

    assert done.returncode == 2
    assert done.err_lines == [
        f"error: --per-query {code} is the same file as --retriever {code}; "
        "write the output to another file; the input is left as it is"
    ]
    assert code.read_bytes() == before

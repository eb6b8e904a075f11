"""Your own retriever as a function: return shapes, loading by module or file, and clear errors."""

from __future__ import annotations

import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import FunctionRetriever, RetrieverOptions, build_retriever, retrieve


@dataclass(frozen=True)
class Node:
    id: str
    score: float


@pytest.mark.parametrize(
    "hits",
    [
        ["a", "b", "c"],
        ("a", "b", "c"),
        [{"id": "a", "score": 3}, {"id": "b"}, {"id": "c", "text": "..."}],
        [Node("a", 3.0), Node("b", 2.0), Node("c", 1.0)],
        (chunk_id for chunk_id in "abc"),
    ],
    ids=["ids", "tuple", "dicts", "objects", "generator"],
)
def test_every_supported_return_shape_becomes_ids(hits: object) -> None:
    retriever = FunctionRetriever(lambda query, k: hits)
    assert retriever.search(["q"], 10) == [["a", "b", "c"]]


def test_results_are_deduplicated_keeping_the_first_then_cut_to_k() -> None:
    retriever = FunctionRetriever(lambda query, k: ["a", "b", "a", 7, "c", "d"])
    assert retriever.search(["q"], 4) == [["a", "b", "7", "c"]]


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (None, "returned NoneType for query 'why is the sky blue'"),
        ("a", "returned str for query"),
        ({"id": "a"}, "returned dict for query"),
        (["a", 1.5], "returned a float as hit 2 for query 'why is the sky blue'"),
        ([{"text": "no id"}], "returned a dict as hit 1"),
    ],
)
def test_a_wrong_return_type_names_the_query(result: object, message: str) -> None:
    retriever = FunctionRetriever(lambda query, k: result, name="mine:search")
    with pytest.raises(InputError, match=f"custom retriever mine:search {message}"):
        retriever.search(["why is the sky blue"], 5)


def test_an_exception_in_the_function_keeps_its_traceback_and_names_the_query() -> None:
    def broken(query: str, k: int) -> list[str]:
        raise KeyError("index missing")

    with pytest.raises(KeyError) as caught:
        FunctionRetriever(broken).search(["find me"], 5)
    assert any("for query 'find me'" in note for note in caught.value.__notes__)


def test_workers_call_in_parallel_and_keep_query_order() -> None:
    threads: set[int] = set()
    barrier = threading.Barrier(3, timeout=10)

    def search(query: str, k: int) -> list[str]:
        threads.add(threading.get_ident())
        if len(query) == 1:  # the first three queries meet, which only threads running at once can do
            barrier.wait()
        return [query.upper()]

    retriever = FunctionRetriever(search, workers=3)
    queries = ["a", "b", "c", "dd", "ee"]
    assert retriever.search(queries, 1) == [["A"], ["B"], ["C"], ["DD"], ["EE"]]
    assert len(threads) >= 3


def test_build_retriever_accepts_the_callable_itself(pets_corpus: Corpus) -> None:
    def my_search(query: str, k: int) -> list[str]:
        return ["cats", "dogs"][:k]

    retriever = build_retriever(my_search, pets_corpus, options=RetrieverOptions(workers=2))
    assert retrieve(retriever, {"q1": "pets"}, 1) == {"q1": ["cats"]}
    assert retriever.name.endswith("my_search")


def test_a_function_that_cannot_take_query_and_k_is_refused_when_built() -> None:
    with pytest.raises(InputError, match=r"cannot be called as f\(query, k\)"):
        FunctionRetriever(lambda query: [])


SEARCH_MODULE = textwrap.dedent(
    """
    SOMETHING = 42

    def search(query, k):
        return [{"id": word} for word in query.split()][:k]
    """
)


def test_loads_module_colon_function_from_the_python_path(
    pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_team_search.py").write_text(SEARCH_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    retriever = build_retriever("my_team_search:search", pets_corpus)
    assert retriever.name == "my_team_search:search"
    assert retriever.search(["cats dogs fish"], 2) == [["cats", "dogs"]]


def test_loads_a_function_from_a_file_path(pets_corpus: Corpus, tmp_path: Path) -> None:
    path = tmp_path / "retrieval" / "team.py"
    path.parent.mkdir()
    path.write_text(SEARCH_MODULE)
    retriever = build_retriever(f"{path}:search", pets_corpus)
    assert retriever.search(["birds"], 5) == [["birds"]]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:search", "module 'no_such_module_xyz' not found; put it on PYTHONPATH"),
        ("my_team_search:find", "'my_team_search' has no attribute 'find'"),
        ("my_team_search:SOMETHING", "'my_team_search:SOMETHING' is a int, not a function"),
        ("missing/file.py:search", "missing/file.py: custom retriever file not found"),
        ("my_team_search:", "is not of the form module:function"),
    ],
)
def test_loading_errors_say_what_is_wrong(
    spec: str, message: str, pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_team_search.py").write_text(SEARCH_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=message):
        build_retriever(spec, pets_corpus)


def test_a_module_whose_own_import_fails_is_reported_as_such(
    pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_missing.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        InputError, match="importing 'needs_missing' failed: No module named 'no_such_dependency_xyz'"
    ):
        build_retriever("needs_missing:search", pets_corpus)

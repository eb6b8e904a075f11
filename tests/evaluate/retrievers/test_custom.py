"""Your own retriever as a function: return shapes, loading by module or file, and clear errors."""

from __future__ import annotations

import json
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from realrecall.corpus import Corpus
from realrecall.errors import InputError, UserCodeError
from realrecall.evaluate.retrievers import FunctionRetriever, RunSettings, build_retriever, retrieve


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


def broken(query: str, k: int) -> list[str]:
    if query == "find me":
        raise KeyError("index missing")
    return ["a"]


@pytest.mark.parametrize("workers", [1, 3])
def test_an_exception_in_the_function_is_one_line_naming_the_query_id_with_the_cause_kept(
    workers: int,
) -> None:
    retriever = FunctionRetriever(broken, name="mine.py:search", workers=workers)
    with pytest.raises(UserCodeError) as caught:
        retrieve(retriever, {"q1": "fine", "q2": "find me", "q3": "fine too"}, 5)
    assert str(caught.value) == (
        "custom retriever mine.py:search raised KeyError: 'index missing' for query 'q2' ('find me'); "
        "fix the function (run with --debug for its traceback)"
    )
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.__cause__.__traceback__ is not None


def test_a_function_calling_sys_exit_fails_its_query_instead_of_ending_the_process() -> None:
    import sys

    def quits(query: str, k: int) -> list[str]:
        sys.exit(4)

    with pytest.raises(UserCodeError, match="custom retriever quits raised SystemExit: 4 for query 'q1'"):
        retrieve(FunctionRetriever(quits, name="quits"), {"q1": "anything"}, 5)


def test_search_alone_names_the_query_by_its_text() -> None:
    with pytest.raises(UserCodeError, match=r"raised KeyError: 'index missing' for query 'find me'; "):
        FunctionRetriever(broken, name="mine").search(["fine", "find me"], 5)


def test_a_generator_that_raises_as_it_is_read_is_one_line_too() -> None:
    def search(query: str, k: int):  # type: ignore[no-untyped-def]
        yield "a"
        raise RuntimeError("index\n  closed")  # a message over lines still gives one line

    with pytest.raises(
        UserCodeError, match="raised RuntimeError: index closed as its hits were read for query 'q'"
    ):
        FunctionRetriever(search, name="gen").search(["q"], 5)


def test_a_hung_function_fails_its_query_after_the_timeout() -> None:
    release = threading.Event()

    def search(query: str, k: int) -> list[str]:
        if query == "slow":
            release.wait()  # never set while the test waits: only the timeout ends the call
        return ["a"]

    retriever = build_retriever(search, Corpus(()), settings=RunSettings(query_timeout=0.01))
    try:
        with pytest.raises(UserCodeError) as caught:
            retrieve(retriever, {"q1": "fast", "q2": "slow"}, 5)
    finally:
        release.set()
    assert "gave no answer within 0.01 s for query 'q2' ('slow')" in str(caught.value)
    assert "allow more time per query" in str(caught.value)


def test_with_a_timeout_answers_and_errors_come_back_as_without() -> None:
    retriever = FunctionRetriever(broken, name="mine", query_timeout=30)
    assert retriever.search(["fine"], 5) == [["a"]]
    with pytest.raises(UserCodeError, match="raised KeyError") as caught:
        retriever.search(["find me"], 5)
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "30"])
def test_a_query_timeout_must_be_a_positive_number_of_seconds(timeout: object) -> None:
    expected = r"query_timeout must be (a positive number of seconds|a number or none)"
    with pytest.raises(InputError, match=expected):
        RunSettings(query_timeout=timeout)  # type: ignore[arg-type]


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

    retriever = build_retriever(my_search, pets_corpus, settings=RunSettings(workers=2))
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
        InputError,
        match=r"needs_missing\.py:1: .*importing 'needs_missing' failed: "
        "ModuleNotFoundError: No module named 'no_such_dependency_xyz'; install the missing package",
    ):
        build_retriever("needs_missing:search", pets_corpus)


@pytest.mark.parametrize(
    ("source", "line", "message"),
    [
        ("def search(query, k):\n    return [\n\nx = (\n", None, "syntax error: "),
        ("import os\nimport no_such_dependency_xyz\n", 2, "No module named 'no_such_dependency_xyz'"),
        ("SCALE = 1\n\nINDEX = {}['missing']\n", 3, "importing it failed: KeyError: 'missing'"),
        ("import sys\nsys.exit(3)\n", 2, "importing it failed: SystemExit: 3"),
    ],
    ids=["syntax", "import", "raises", "exits"],
)
def test_a_retriever_file_that_cannot_load_is_one_line_naming_its_file_and_line(
    pets_corpus: Corpus, tmp_path: Path, source: str, line: int | None, message: str
) -> None:
    path = tmp_path / "mine.py"
    path.write_text(source)
    with pytest.raises(UserCodeError) as caught:
        build_retriever(f"{path}:search", pets_corpus)
    text = str(caught.value)
    assert "\n" not in text
    assert message in text
    if line is None:  # the syntax error's own line
        assert text.startswith(f"{path}:{caught.value.__cause__.lineno}: custom retriever ")
    else:
        assert text.startswith(f"{path}:{line}: custom retriever ")
    assert caught.value.__cause__ is not None


def test_a_module_with_a_syntax_error_names_its_file_and_line(
    pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_syntax_xyz.py").write_text("x = 1\ndef search(query, k)\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserCodeError, match=r"broken_syntax_xyz\.py:2: custom retriever .*: syntax error: "):
        build_retriever("broken_syntax_xyz:search", pets_corpus)


def test_a_module_that_raises_at_import_names_the_line_in_it(
    pets_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raises_at_import_xyz.py").write_text("x = 1\nopen('/no/such/index.faiss')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserCodeError, match=r"raises_at_import_xyz\.py:2: .*FileNotFoundError: "):
        build_retriever("raises_at_import_xyz:search", pets_corpus)


def test_cli_shows_one_line_and_the_traceback_only_with_debug(tmp_path: Path) -> None:
    import json

    from support import cli

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "c1", "text": "reset your password"}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"query_id": "q1", "query": "reset", "gold": {"c1": 1}}) + "\n")
    (tmp_path / "mine.py").write_text("def search(query, k):\n    return {}['index'][query]\n")
    args = ["evaluate", "--gold", str(gold), "--corpus", str(corpus), "--retriever", "mine.py:search"]

    def run(*extra: str) -> cli.Result:
        return cli.run(*extra, *args, cwd=tmp_path)

    plain = run()
    assert plain.returncode == 2
    assert plain.stderr.strip().splitlines() == [
        "error: custom retriever mine.py:search raised KeyError: 'index' for query 'q1' ('reset'); "
        "fix the function (run with --debug for its traceback)"
    ]
    debug = run("--debug")
    assert debug.returncode == 2
    assert "Traceback (most recent call last)" in debug.stderr
    assert 'mine.py", line 2, in search' in debug.stderr


_TITLE_ONLY = "def search(query, k):\n    return ['a', 'b'][:k]\n"
_REWRITTEN = "def search(query, k):\n    return ['b', 'a'][:k]\n"


def _fingerprint_of(path: Path) -> dict[str, object]:
    retriever = build_retriever(f"{path}:search", Corpus(()))
    return dict(retriever.fingerprint)  # type: ignore[attr-defined]


def test_a_function_rewritten_behind_the_same_path_has_another_fingerprint(tmp_path: Path) -> None:
    # Issue 30: the fingerprint was the path string, so a rewrite (title-only -> title+text) was
    # calibrated on as if nothing had changed.
    path = tmp_path / "search.py"
    path.write_text(_TITLE_ONLY, encoding="utf-8")
    before = _fingerprint_of(path)
    path.write_text(_REWRITTEN, encoding="utf-8")
    after = _fingerprint_of(path)
    assert before != after
    options = before["options"]
    assert isinstance(options, dict)
    assert options["function"] == "search"
    assert str(tmp_path) not in json.dumps(before)


def test_the_same_file_under_another_path_has_the_same_fingerprint(tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "search.py", tmp_path / "two" / "retriever.py"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text(_TITLE_ONLY, encoding="utf-8")
    assert _fingerprint_of(first) == _fingerprint_of(second)


def test_a_callable_is_fingerprinted_by_its_module_source_and_qualified_name() -> None:
    from realrecall.evaluate.retrievers.custom import code_identity

    identity = code_identity(_fingerprint_of)
    assert identity["function"] == "_fingerprint_of"
    assert len(identity["source_sha256"]) == 64
    assert code_identity(len) == {"function": "builtins:len"}


# --- the query timeout is on by default, and a hung function is ended where it runs ------------------


def test_a_query_timeout_is_set_by_default() -> None:
    from realrecall.evaluate.retrievers.options import QUERY_TIMEOUT

    assert RunSettings().query_timeout == QUERY_TIMEOUT == 300.0
    assert RunSettings(query_timeout=None).query_timeout is None  # no limit, when asked for in Python


def test_a_function_that_catches_everything_still_times_out() -> None:
    def search(query: str, k: int) -> list[str]:
        try:
            threading.Event().wait()  # never set
        except Exception:  # the timeout is not an Exception: it is not swallowed here
            return ["swallowed"]
        return []

    with pytest.raises(UserCodeError, match=r"gave no answer within 0\.2 s for query 'q'"):
        FunctionRetriever(search, name="greedy", query_timeout=0.2).search(["q"], 5)


def test_a_function_tied_to_the_thread_that_imported_it_runs_under_a_timeout() -> None:
    import sqlite3

    connection = sqlite3.connect(":memory:")  # usable only from this thread, as one made at import
    connection.execute("create table chunks (id text)")
    connection.execute("insert into chunks values ('a'), ('b')")

    def search(query: str, k: int) -> list[str]:
        return [row[0] for row in connection.execute("select id from chunks order by id limit ?", (k,))]

    retriever = FunctionRetriever(search, name="sql", query_timeout=30)
    assert retriever.search(["q1", "q2"], 1) == [["a"], ["a"]]


def test_an_earlier_timer_is_put_back_after_each_query() -> None:
    import signal

    fired: list[int] = []
    earlier = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        FunctionRetriever(lambda query, k: ["a"], query_timeout=5).search(["q"], 1)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < left <= 30
        assert signal.getsignal(signal.SIGALRM) is not None
        assert not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, earlier)


def test_off_the_main_thread_a_hung_function_times_out_too() -> None:
    release = threading.Event()
    caught: list[BaseException] = []

    def search(query: str, k: int) -> list[str]:
        release.wait()
        return ["a"]

    def from_a_thread() -> None:
        try:
            FunctionRetriever(search, name="slow", query_timeout=0.2).search(["q"], 5)
        except UserCodeError as exc:
            caught.append(exc)

    worker = threading.Thread(target=from_a_thread)
    worker.start()
    worker.join(timeout=30)
    release.set()
    assert len(caught) == 1
    assert "gave no answer within 0.2 s" in str(caught[0])


def test_evaluate_with_a_hung_retriever_ends_in_one_line(tmp_path: Path) -> None:
    from support import cli

    (tmp_path / "hung.py").write_text(
        "import threading\ndef search(query, k):\n    threading.Event().wait()\n"
    )
    (tmp_path / "corpus.jsonl").write_text('{"id": "a", "text": "alpha"}\n')
    (tmp_path / "gold.jsonl").write_text('{"query_id": "q1", "query": "alpha", "gold": {"a": 1}}\n')

    done = cli.run(
        "evaluate", "--gold", "gold.jsonl", "--corpus", "corpus.jsonl", "--retriever", "hung.py:search",
        "--query-timeout", "0.3", cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 2
    assert done.err_lines == [
        "error: custom retriever hung.py:search gave no answer within 0.3 s for query 'q1' ('alpha'); "
        "make the function faster, or allow more time per query (query timeout)"
    ]


def test_the_help_states_the_default_query_timeout() -> None:
    from support import cli

    done = cli.run("evaluate", "--help")
    text = " ".join(done.stdout.split())
    assert "a hung one ends the run in one line. [default: 300.0]" in text

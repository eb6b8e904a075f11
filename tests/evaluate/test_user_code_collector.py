"""A retriever's own code runs with the garbage collector on, in the CLI and in the library alike.

``load_inputs`` was a bulk step once (``@gc_paused``): the collector was off while a user's
``module:function`` was imported and built and a dense corpus embedded, code that may well make
reference cycles of its own. Bulk steps now pause it only inside ``bulk_mode`` (the CLI's), and
loading inputs and retrieving are not bulk steps.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from realrecall.bulk import bulk_mode
from realrecall.evaluate import evaluate_files
from support import cli

DATA = Path(__file__).resolve().parents[2] / "src" / "realrecall" / "data"
CORPUS, GOLD = DATA / "docs_corpus.jsonl", DATA / "real_questions.jsonl"

RETRIEVER = """
import gc, json, os

def _note(where):
    with open(os.environ["COLLECTOR_LOG"], "a") as log:
        log.write(json.dumps([where, gc.isenabled()]) + "\\n")

_note("import")

def search(query, k):
    _note("search")
    return ["en-sync-001"]
"""


def _notes(log: Path) -> dict[str, set[bool]]:
    seen: dict[str, set[bool]] = {}
    for line in log.read_text().splitlines():
        where, enabled = json.loads(line)
        seen.setdefault(where, set()).add(enabled)
    return seen


def test_a_module_function_retriever_runs_with_the_collector_on_in_the_cli(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(RETRIEVER)
    log = tmp_path / "collector.log"
    result = cli.run(
        "evaluate", "--corpus", str(CORPUS), "--gold", str(GOLD), "--retriever", "mine.py:search",
        "-o", "results.json", cwd=tmp_path, env={"COLLECTOR_LOG": str(log)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert _notes(log) == {"import": {True}, "search": {True}}
    assert gc.isenabled()


class RecordingEmbedder:
    """An embedder of the user's: notes whether the collector was on at each call."""

    name = "recording"

    def __init__(self) -> None:
        self.collector: list[bool] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.collector.append(gc.isenabled())
        return np.ones((len(texts), 4), dtype=np.float32)


def _embed_the_corpus() -> list[bool]:
    embedder = RecordingEmbedder()
    evaluate_files(
        [GOLD],
        corpus=CORPUS,
        retriever="dense",
        retriever_options={"embedder": embedder},
        use_cache=False,  # every text embedded: none read from a cache
    )
    return embedder.collector


def test_a_dense_corpus_is_embedded_with_the_collector_on_even_in_bulk_mode() -> None:
    calls = _embed_the_corpus()
    with bulk_mode():
        opted_in = _embed_the_corpus()
    assert calls  # the corpus, then the queries
    assert set(calls) == set(opted_in) == {True}
    assert gc.isenabled()


class RecordingRetriever:
    """A retriever of the user's, passed to ``evaluate`` as an object: notes the collector at each search."""

    description = "notes whether the collector is on"

    def __init__(self) -> None:
        self.collector: list[bool] = []

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        self.collector.append(gc.isenabled())
        return [["en-sync-001"] for _ in queries]


def test_a_retriever_object_searches_with_the_collector_on_in_a_program_that_opts_in() -> None:
    from realrecall import load_gold
    from realrecall.evaluate import evaluate

    gold = load_gold(GOLD)
    plain, opted_in = RecordingRetriever(), RecordingRetriever()
    evaluate([gold], retriever=plain)
    with bulk_mode():
        evaluate([gold], retriever=opted_in)
    assert plain.collector
    assert set(plain.collector) == set(opted_in.collector) == {True}
    assert gc.isenabled()

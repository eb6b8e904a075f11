"""Comparing chunkings at equal budget (issue 11): SciFact's evidence-only gold set scored by bm25 on
whole abstracts and on one chunk per sentence (tests/support/scifact.py), then ``compare``.

recall@10 favours the big chunks (ten abstracts are about ten times the text of ten sentences); at an
equal budget of tokens the order turns: at 500 tokens sentences win, significantly. The figures are
those of docs/chunking.md (benchmarks/study_chunking.py). ``compare`` pairs the queries by id although
no passage id is shared between the two results, from the files evaluate wrote and through the CLI.
"""

from __future__ import annotations

import json

import pytest

from realrecall.calibrate import compare
from realrecall.corpus import load_corpus
from realrecall.evaluate import evaluate, write_results
from realrecall.evaluate.retrievers import build_retriever
from support import cli
from support.reference import find_reference_data
from support.scifact import evidence_gold, write_chunking

REFERENCE = find_reference_data()
SCIFACT = REFERENCE / "scifact" if REFERENCE is not None else None
pytestmark = [
    pytest.mark.skipif(
        SCIFACT is None or not (SCIFACT / "original" / "claims_dev.jsonl").is_file(),
        reason="SciFact reference data (shared/reference-data/scifact/original) is not here",
    ),
    pytest.mark.slow,  # bm25 over SciFact's chunkings, seconds
]

METRICS = ["recall@10", "recall@500tok", "recall@2000tok"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    assert SCIFACT is not None
    # The documented estimate (no tiktoken cache): the figures of docs/chunking.md, on any machine.
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("chunkings")
    patch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    gold = evidence_gold(SCIFACT)
    paths = {}
    try:
        for chunking in ("whole", "sentences"):
            corpus = load_corpus(write_chunking(SCIFACT, chunking, folder / f"{chunking}.jsonl"))
            result = evaluate(gold, corpus=corpus, retriever=build_retriever("bm25", corpus), metrics=METRICS)
            paths[chunking] = folder / f"{chunking}-results.json"
            write_results(result, paths[chunking])
    finally:
        patch.undo()
    return paths


def test_budgeted_recall_ranks_the_chunkings_otherwise_than_recall_at_10(results):
    whole = json.loads(results["whole"].read_text())
    sentences = json.loads(results["sentences"].read_text())
    assert whole["token_method"] == sentences["token_method"] == "estimate: 4 characters a token"
    at = {name: data["gold_sets"][0]["overall"]["metrics"] for name, data in (("w", whole), ("s", sentences))}
    assert at["w"]["recall@10"] > at["s"]["recall@10"] + 0.1  # 0.947 against 0.793
    assert at["s"]["recall@500tok"] > at["w"]["recall@500tok"] + 0.2  # 0.803 against 0.489
    # Ten abstracts hand on about nine times the context of ten sentences.
    context = {
        name: data["gold_sets"][0]["context_tokens"]["10"] for name, data in (("w", whole), ("s", sentences))
    }
    assert context["w"] > 8 * context["s"]
    assert round(at["w"]["recall@10"], 3) == 0.947
    assert round(at["s"]["recall@500tok"], 3) == 0.803


def test_compare_pairs_the_queries_of_two_chunkings_and_tests_at_equal_budget(results):
    tops = [json.loads(results[c].read_text()) for c in ("whole", "sentences")]
    assert tops[0]["corpus"]["chunks"] != tops[1]["corpus"]["chunks"]
    at_10 = compare(results["whole"], results["sentences"], metric="recall@10")
    at_500 = compare(results["whole"], results["sentences"], metric="recall@500tok")
    at_2000 = compare(results["whole"], results["sentences"], metric="recall@2000tok")
    for report in (at_10, at_500, at_2000):
        (row,) = report.verdicts
        assert (row.n, report.unpaired) == (188, 0)  # every query paired; no passage id is shared
    assert (at_10.verdicts[0].significant, at_10.verdicts[0].difference < 0) == (True, True)
    assert (at_500.verdicts[0].significant, at_500.verdicts[0].difference > 0) == (True, True)
    assert not at_2000.verdicts[0].significant  # at 2,000 tokens the two chunkings find as much


def test_cli_compare_at_equal_budget(results):
    done = cli.run("compare", str(results["whole"]), str(results["sentences"]), "--metric", "recall@500tok")
    assert done.returncode == 0, done.stderr
    assert "recall@500tok" in done.stdout

"""evaluate with evidence-anchored gold: resolution against the corpus scored, its counts in
results.json (written and read back), warnings naming lost queries, and the CLI's options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate import evaluate, load_results, write_results
from realrecall.evaluate.results import GoldPassages
from realrecall.evidence import Evidence
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run
from support import cli

CHUNKS = [
    {"id": "a1", "doc_id": "A", "start": 0, "text": "Reset the router by holding the button."},
    {"id": "a2", "doc_id": "A", "start": 40, "text": "The light turns amber while it restarts."},
    {"id": "b1", "doc_id": "B", "start": 0, "text": "Backups are kept for thirty days."},
]


def corpus() -> Corpus:
    return Corpus(tuple(Chunk(**chunk) for chunk in CHUNKS))


def gold_set() -> GoldSet:
    return GoldSet(
        (
            GoldQuery("q1", "reset router", {}, evidence=(Evidence("A", "holding the button", 2),)),
            GoldQuery("q2", "amber light", {"gone": 1}, evidence=(Evidence("A", "turns amber"),)),
            GoldQuery("q3", "backups", {"b1": 1}),
            GoldQuery("q4", "warranty", {}, evidence=(Evidence("C", "two years"),)),
        ),
        name="g",
    )


RUN = Run.from_lists({"q1": ["a2", "a1"], "q2": ["a2"], "q3": ["b1"], "q4": ["a1"]}, name="r")


def test_evidence_is_resolved_scored_and_counted():
    result = evaluate(gold_set(), corpus=corpus(), run=RUN, metrics=["recall@1", "mrr@10"])
    (scored,) = result.gold_sets
    per_query = {q.query_id: q for q in scored.queries}
    assert per_query["q1"].gold == ("a1",)
    assert per_query["q1"].metrics == {"recall@1": 0.0, "mrr@10": 0.5}
    assert per_query["q2"].metrics["recall@1"] == 1.0
    assert per_query["q4"].metrics == {"recall@1": 0.0, "mrr@10": 0.0}  # lost: scores 0, keeps its place
    assert [q.query_id for q in scored.queries] == ["q1", "q2", "q3", "q4"]
    assert scored.gold_passages == GoldPassages(
        gold_from="auto",
        coverage=0.5,
        by_id=1,
        from_evidence=2,
        split=0,
        lost=1,
        lost_queries=("q4",),
        missing_ids=0,
        replaced_ids=1,
    )
    assert scored.missing_passages == 0  # the stale id was replaced by its evidence
    (warning,) = [w for w in result.warnings if "evidence" in w]
    assert "1 evidence items were found in no chunk" in warning
    assert "'q4'" in warning


def test_gold_passages_survive_results_json(tmp_path):
    result = evaluate(gold_set(), corpus=corpus(), run=RUN, metrics=["recall@1"])
    path = tmp_path / "results.json"
    write_results(result, path)
    written = json.loads(path.read_text())["gold_sets"][0]["gold_passages"]
    assert written["from_evidence"] == 2
    assert written["lost_queries"] == ["q4"]
    assert load_results(path).gold_sets[0].gold_passages == result.gold_sets[0].gold_passages


def test_results_of_older_versions_have_no_gold_passages(tmp_path):
    result = evaluate(gold_set(), corpus=corpus(), run=RUN, metrics=["recall@1"])
    path = tmp_path / "results.json"
    write_results(result, path)
    data = json.loads(path.read_text())
    del data["gold_sets"][0]["gold_passages"]
    path.write_text(json.dumps(data))
    assert load_results(path).gold_sets[0].gold_passages is None
    data["gold_sets"][0]["gold_passages"] = {"by_id": -1}
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="by_id in gold_passages of gold set 'g' must be a count"):
        load_results(path)


def test_gold_from_ids_and_evidence():
    by_ids = evaluate(gold_set(), corpus=corpus(), run=RUN, metrics=["recall@1"], gold_from="ids")
    assert {q.query_id: q.gold for q in by_ids.gold_sets[0].queries}["q1"] == ()
    assert by_ids.gold_sets[0].missing_passages == 1  # "gone"
    from_evidence = evaluate(gold_set(), corpus=corpus(), run=RUN, metrics=["recall@1"], gold_from="evidence")
    assert {q.query_id: q.gold for q in from_evidence.gold_sets[0].queries}["q3"] == ()
    assert any("1 queries have no evidence ('q3')" in w for w in from_evidence.warnings)


def test_without_a_corpus_ids_are_used_and_evidence_only_queries_are_named():
    result = evaluate(gold_set(), run=RUN, metrics=["recall@1"])
    assert result.gold_sets[0].gold_passages == GoldPassages(gold_from="ids", by_id=2)
    assert any("2 queries name no chunk, only evidence ('q1', 'q4')" in w for w in result.warnings)
    with pytest.raises(InputError, match="scored from its evidence, which needs the corpus"):
        evaluate(gold_set(), run=RUN, metrics=["recall@1"], gold_from="evidence")


def test_bad_settings_are_one_line():
    with pytest.raises(InputError, match="gold_from must be one of auto, ids, evidence, got 'chunk'"):
        evaluate(gold_set(), corpus=corpus(), run=RUN, gold_from="chunk")
    with pytest.raises(InputError, match=r"evidence_coverage must be a number in \(0, 1\], got 2"):
        evaluate(gold_set(), corpus=corpus(), run=RUN, evidence_coverage=2)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_cli_gold_from_and_coverage(tmp_path):
    corpus_file = write_jsonl(tmp_path / "corpus.jsonl", CHUNKS)
    gold_file = write_jsonl(tmp_path / "gold.jsonl", [q.to_record() for q in gold_set()])
    results = tmp_path / "results.json"
    done = cli.run(
        "evaluate", "--corpus", str(corpus_file), "--gold", str(gold_file), "--k", "1",
        "--gold-from", "evidence", "--evidence-coverage", "0.8", "--output", str(results),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    passages = json.loads(results.read_text())["gold_sets"][0]["gold_passages"]
    assert (passages["gold_from"], passages["coverage"], passages["from_evidence"]) == ("evidence", 0.8, 2)
    assert "found in no chunk" in done.stderr
    bad = cli.run("evaluate", "--corpus", str(corpus_file), "--gold", str(gold_file), "--gold-from", "x")
    assert bad.returncode == 2
    assert bad.err_lines == ["error: --gold-from must be one of auto, ids, evidence, got 'x'; e.g. auto"]

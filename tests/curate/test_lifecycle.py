"""The whole cycle with the real `evaluate`: evaluate -> review -> judge -> add -> evaluate again."""

from __future__ import annotations

import json
from pathlib import Path

from realrecall.gold import load_gold


def test_judging_every_retrieved_passage_relevant_leaves_no_miss_on_the_next_evaluation(
    gold_file: Path, corpus_file: Path, tmp_path: Path, cli
) -> None:
    # A gold set whose author picked the wrong passage for one question: a sure miss.
    wrong = {"query_id": "q4", "query": "How often do clients poll the server?", "gold": {"en-backup-001": 1}}
    with gold_file.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(wrong) + "\n")

    def evaluate(name: str) -> tuple[Path, Path]:
        results, per_query = tmp_path / f"{name}.json", tmp_path / f"{name}.pq.jsonl"
        done = cli("evaluate", "--gold", gold_file, "--corpus", corpus_file, "--k", "1,2",
                   "--output", results, "--per-query", per_query)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return results, per_query

    results, per_query = evaluate("before")
    template = tmp_path / "judgements.jsonl"
    reviewed = cli(
        "gold", "review", results, "--per-query", per_query, "--show", "2", "--judgements", template
    )
    assert reviewed.returncode == 0, reviewed.stderr
    lines = [json.loads(line) for line in template.read_text().splitlines()]
    assert "q4" in {r["query_id"] for r in lines}
    template.write_text("".join(json.dumps({**r, "grade": 1}) + "\n" for r in lines))

    added = cli("gold", "add", gold_file, "--judgements", template, "--by", "ana", "--corpus", corpus_file)
    assert added.returncode == 0, added.stderr
    assert all(load_gold(gold_file)[r["query_id"]].gold[r["passage_id"]] == 1 for r in lines)

    results, per_query = evaluate("after")
    again = cli("gold", "review", results, "--per-query", per_query)
    assert again.returncode == 0, again.stderr
    assert "0 of 4 real queries miss at k=1" in again.stdout  # recall@1 leads: no recall@10 evaluated

"""evaluate counts what rests on a judge: results.json's ``judge_labels`` per gold set, found by the
judge marks of its file (``formats.judge_marks``), read back by ``load_results``."""

from __future__ import annotations

import json
from pathlib import Path

from realrecall.evaluate import evaluate
from realrecall.evaluate.results import load_results, write_results
from realrecall.gold import load_gold
from realrecall.runs import load_run
from support import cli

HUMAN = "q1 0 p1 2\nq2 0 p2 1\nq3 0 p3 2\nq4 0 p4 1\n"
JUDGE = "q1 judge:gpt-4o-mini p5 2\nq2 judge:gpt-4o-mini p6 0\nq3 judge:llama-3 p7 3\nq3 judge:llama-3 p8 1\n"
RUN = "q1 Q0 p5 1 9 r\nq1 Q0 p1 2 8 r\nq2 Q0 p6 1 9 r\nq2 Q0 p2 2 8 r\nq3 Q0 p9 1 9 r\nq4 Q0 p4 1 9 r\n"


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    plain, merged, run = tmp_path / "human.qrels", tmp_path / "merged.qrels", tmp_path / "run.txt"
    plain.write_text(HUMAN)
    merged.write_text(HUMAN + JUDGE)
    run.write_text(RUN)
    return plain, merged, run


def test_evaluate_records_how_many_judged_pairs_and_queries_a_judge_graded_and_which_models(
    tmp_path: Path,
) -> None:
    plain, merged, run = _files(tmp_path)
    results = tmp_path / "results.json"
    done = cli.run(
        "evaluate", "--gold", str(merged), "--gold", str(plain), "--run", str(run), "--origin", "real",
        "--k", "1,5", "--output", str(results),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    assert "judge labels: gpt-4o-mini, llama-3 graded 4 of 8 judged pairs, on 3 of 4 queries" in shown
    assert shown.count("judge labels:") == 1  # under the merged set's table, not the plain one's
    merged_set, plain_set = json.loads(results.read_text())["gold_sets"]
    assert merged_set["judge_labels"] == {
        "pairs": 4,
        "judged_pairs": 8,
        "queries": 3,
        "n_queries": 4,
        "models": {"gpt-4o-mini": 2, "llama-3": 2},
        "query_ids": ["q1", "q2", "q3"],
    }
    assert "judge_labels" not in plain_set
    read = load_results(results)
    assert read.gold_sets[0].judge_labels is not None
    assert read.gold_sets[0].judge_labels.query_ids == ("q1", "q2", "q3")
    assert read.gold_sets[1].judge_labels is None
    # The marks change no figure: the merged file scores as the same file unmarked.
    unmarked = tmp_path / "unmarked.qrels"
    unmarked.write_text((HUMAN + JUDGE).replace("judge:gpt-4o-mini", "0").replace("judge:llama-3", "0"))
    again = evaluate([load_gold(unmarked, origin="real")], run=load_run(run), k=(1, 5))
    assert again.gold_sets[0].judge_labels is None
    assert again.gold_sets[0].overall.metrics == read.gold_sets[0].overall.metrics


def test_a_jsonl_gold_sets_judged_by_is_counted_and_its_count_round_trips(tmp_path: Path) -> None:
    records = [
        {
            "query_id": "q1",
            "query": "a",
            "gold": {"p1": 2, "p5": 1},
            "judged_by": {"p5": "judge:m"},
            "origin": "real",
        },
        {"query_id": "q2", "query": "b", "gold": {"p2": 1}, "origin": "real"},
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    result = evaluate([load_gold(gold)], run=load_run(run), k=(1,))
    use = result.gold_sets[0].judge_labels
    assert use is not None
    assert (use.pairs, use.judged_pairs, use.query_ids, dict(use.models)) == (1, 3, ("q1",), {"m": 1})
    path = tmp_path / "results.json"
    write_results(result, path)
    assert load_results(path).gold_sets[0].judge_labels == use


def test_a_results_file_with_a_broken_judge_labels_object_is_one_line(tmp_path: Path) -> None:
    _, merged, run = _files(tmp_path)
    results = tmp_path / "results.json"
    assert (
        cli.run(
            "evaluate", "--gold", str(merged), "--run", str(run), "--origin", "real", "-o", str(results)
        ).returncode
        == 0
    )
    data = json.loads(results.read_text())
    data["gold_sets"][0]["judge_labels"]["pairs"] = -1
    results.write_text(json.dumps(data))
    done = cli.run("calibrate", str(results))
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert "pairs in judge_labels of gold set 'merged' must be a count" in done.err_lines[0]

"""The calibrate and compare commands: outputs, gates (exit 1) and input errors (exit 2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from calibrate.results_builder import per_query, ranks_set, results_document
from support import cli


@pytest.fixture
def results_file(write_results: Callable[..., Path]) -> Path:
    real = ranks_set("real", 20, 10, prefix="r", type="lookup")
    synthetic = ranks_set("synthetic", 28, 2, prefix="s", type="lookup")
    return write_results(results_document([("s", synthetic), ("r", real)]))


def test_calibrate_prints_the_headline_and_exits_zero(results_file: Path) -> None:
    result = cli.run("calibrate", str(results_file))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("Quote real recall@10 = 0.67 (95% CI")


def test_fail_under_crossed_exits_one_with_the_reason(results_file: Path) -> None:
    result = cli.run("calibrate", str(results_file), "--fail-under", "recall@10=0.7")
    assert result.returncode == 1
    assert (
        "gate failed: real recall@10 = 0.667 (95% CI 0.488-0.808); the point is under --fail-under 0.7"
        in (result.stderr)
    )


def test_max_gap_crossed_exits_one(results_file: Path) -> None:
    result = cli.run("calibrate", str(results_file), "--max-gap", "0.15")
    assert result.returncode == 1
    assert (
        "overstates the real figure by 0.267 (95% CI +0.063 to +0.452); the point is over --max-gap 0.15"
        in (result.stderr)
    )


def test_gates_that_hold_exit_zero(results_file: Path) -> None:
    result = cli.run("calibrate", str(results_file), "--fail-under", "recall@10=0.6", "--max-gap", "0.3")
    assert result.returncode == 0, result.stderr


def test_bad_input_exits_two(results_file: Path, tmp_path: Path) -> None:
    assert cli.run("calibrate", str(results_file), "--metric", "ndcg@3").returncode == 2
    assert cli.run("calibrate", str(results_file), "--fail-under", "recall@10").returncode == 2
    assert cli.run("calibrate", str(tmp_path / "missing.json")).returncode == 2
    assert cli.run("calibrate").returncode == 2


@pytest.mark.parametrize("bound", ["1.5", "-0.1"])
def test_a_fail_under_outside_zero_one_is_refused_before_any_work(bound: str, tmp_path: Path) -> None:
    # One-call mode would load the sets and the corpus first: the bound is refused before, so the
    # missing files are never reached.
    missing = str(tmp_path / "missing.jsonl")
    result = cli.run(
        "calibrate", "--synthetic", missing, "--real", missing, "--corpus", missing,
        "--fail-under", f"recall@10={bound}",
    )  # fmt: skip
    assert result.returncode == 2
    assert f"--fail-under recall@10={bound} is outside [0, 1]" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_report_file_format_follows_the_suffix_and_is_written_whole(
    results_file: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "report.json"
    result = cli.run("calibrate", str(results_file), "-o", str(target), "--fail-under", "recall@10=0.9")
    assert result.returncode == 1  # the report is still written before the gate fails the job
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["headline"]["n_real"] == 30
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]  # no temporary file left


def test_compare_command_writes_markdown(write_results: Callable[..., Path], tmp_path: Path) -> None:
    a = write_results(
        results_document([("g", [per_query(f"q{i}", "real", rank=1 + i % 3) for i in range(12)])])
    )
    b_doc = results_document(
        [("g", [per_query(f"q{i}", "real", rank=1) for i in range(12)])], retriever="dense"
    )
    b = write_results(b_doc)
    target = tmp_path / "compare.md"
    result = cli.run(
        "compare", str(a), str(b), "--metric", "mrr@10", "--format", "markdown", "-o", str(target)
    )
    assert result.returncode == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("dense vs bm25 on real queries: mrr@10 1.000 vs 0.611")


def test_one_call_mode_evaluates_both_sets_then_calibrates(tmp_path: Path) -> None:
    pytest.importorskip("realrecall.evaluate.scoring", reason="the scoring kernel is not on this branch yet")
    pytest.importorskip("realrecall.runs", reason="the run loader is not on this branch yet")
    synthetic = tmp_path / "synthetic.jsonl"
    real = tmp_path / "real.jsonl"
    run = tmp_path / "run.jsonl"
    synthetic.write_text(
        "\n".join(
            json.dumps({"query_id": f"s{i}", "query": f"s {i}", "gold": {f"p{i}": 1}}) for i in range(4)
        ),
        encoding="utf-8",
    )
    real.write_text(
        "\n".join(
            json.dumps({"query_id": f"r{i}", "query": f"r {i}", "gold": {f"p{i}": 1}}) for i in range(4)
        ),
        encoding="utf-8",
    )
    ranked = {f"s{i}": [f"p{i}"] for i in range(4)} | {
        f"r{i}": ["x", f"p{i}"] if i < 2 else ["x"] for i in range(4)
    }
    run.write_text("\n".join(json.dumps({"query_id": q, "ranked": ids}) for q, ids in ranked.items()))
    result = cli.run(
        "calibrate", "--synthetic", str(synthetic), "--real", str(real), "--run", str(run), "--k", "1,10"
    )
    assert result.returncode == 0, result.stderr
    assert "Quote real recall@10 = 0.50" in result.stdout


def test_bca_bootstrap_option_reaches_the_report(
    results_file: Path, write_results: Callable[..., Path], tmp_path: Path
) -> None:
    ranked = write_results(
        results_document(
            [("s", [per_query(f"s{i}", "synthetic", rank=1 + i % 3) for i in range(20)]),
             ("r", [per_query(f"r{i}", "real", rank=1 + i % 5) for i in range(20)])]
        )
    )  # fmt: skip
    target = tmp_path / "report.json"
    result = cli.run("calibrate", str(ranked), "--bootstrap", "bca", "--metric", "mrr@10", "-o", str(target))
    assert result.returncode == 0, result.stderr
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["headline"]["metric"] == "mrr@10"
    # BCa, never narrower than the bounded-mean interval ("+score" where that widened it).
    methods = {s["real_method"] for s in data["overall"] if s["metric"] == "mrr@10"}
    assert methods
    assert methods <= {"bootstrap-bca", "bootstrap-bca+score"}
    bad = cli.run("calibrate", str(results_file), "--bootstrap", "studentized")
    assert bad.returncode == 2


def test_origin_option_names_the_real_set_of_results_evaluated_without_origins(
    write_results: Callable[..., Path],
) -> None:
    document = results_document(
        [
            ("generated", ranks_set("synthetic", 9, 1, prefix="s")),
            ("beir_real", ranks_set("real", 6, 4, prefix="r")),
        ]
    )
    real_set = document["gold_sets"][1]
    real_set["origins"] = {"unknown": 10}  # what evaluate writes for a gold set without origins
    for record in real_set["per_query"]:
        record["origin"] = None
    path = write_results(document)
    refused = cli.run("calibrate", str(path))
    assert refused.returncode == 2
    assert "--origin beir_real=real" in refused.stderr
    result = cli.run("calibrate", str(path), "--origin", "beir_real=real")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Quote real recall@10 = 0.60")


def test_answers_option_prints_the_grid_and_verdict(results_file: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.csv"
    # r0..r19 were found at rank 1, r20..r29 were missed.
    rows = [f"r{i},{'false' if i >= 24 else 'true'}" for i in range(30)]
    answers.write_text("query_id,correct\n" + "\n".join(rows) + "\n", encoding="utf-8")
    result = cli.run("calibrate", str(results_file), "--answers", str(answers), "-f", "markdown")
    assert result.returncode == 0, result.stderr
    assert "| Retrieval problem | 6 |" in result.stdout
    assert "| Lucky | 4 |" in result.stdout
    assert (
        "Verdict: work on retrieval: 6 of 6 wrong answers had no gold passage in the top 10." in result.stdout
    )


def test_calibrate_on_earlier_results_quotes_a_calibrated_figure_and_warns_when_stale(
    results_file: Path, write_results: Callable[..., Path]
) -> None:
    regenerated = write_results(
        results_document([("new", ranks_set("synthetic", 27, 3, prefix="n", type="lookup"))])
    )
    result = cli.run(
        "calibrate", str(regenerated), "--calibrate-on", str(results_file), "--real-date", "2020-01-01",
        "-f", "markdown",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # The real set covers the only stratum (lookup) with 30 queries: its measured figure is the estimate.
    assert result.stdout.startswith(
        "Not measured in these results, which hold no real questions: the figure rests on the real set "
        "of 2020-01-01, evaluated with the same retriever on the same corpus. Calibrated recall@10 = 0.67 "
        "(95% CI"
    )
    assert "measured on real questions in every stratum" in result.stdout.splitlines()[0]
    assert "calibration is stale" in result.stderr

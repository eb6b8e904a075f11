"""A figure that rests on a judge's labels is never the headline alone (``calibrate.judge_labels``'
rules): found by the marks of the gold set evaluate scored, whether or not anyone declared the files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from realrecall.calibrate import calibrate
from realrecall.calibrate.comparison import compare
from realrecall.calibrate.judge_labels import CHECK_COMMAND, PPI_COMMAND
from realrecall.calibrate.report import render
from realrecall.evaluate import evaluate
from realrecall.gold import load_gold
from realrecall.runs import load_run
from support import cli

N, JUDGED = 40, 25  # real queries; the first JUDGED carry a pair the judge graded


def _workspace(tmp_path: Path) -> dict[str, Path]:
    """People's qrels, the judge's (marked) and the two merged; two runs; people's grades of the
    judge's pairs, to check it."""
    rng = np.random.default_rng(3)
    human = [f"q{i} 0 h{i} 2" for i in range(N)]
    judge_grades = rng.integers(0, 4, JUDGED)
    judge = [f"q{i} judge:gpt-4o-mini j{i} {g}" for i, g in enumerate(judge_grades)]
    people_grades = np.where(rng.random(JUDGED) < 0.6, judge_grades, rng.integers(0, 4, JUDGED))
    check = [f"q{i} 0 j{i} {g}" for i, g in enumerate(people_grades)]
    runs = {}
    for name, shift in (("a", 0), ("b", 1)):
        lines = []
        for i in range(N):
            order = [f"j{i}", f"h{i}", f"x{i}"] if (i + shift) % 3 == 0 else [f"h{i}", f"j{i}"]
            if (i + shift) % 3 == 2:
                order = [f"x{i}", f"y{i}"]
            lines += [f"q{i} Q0 {pid} {r + 1} {10 - r} {name}" for r, pid in enumerate(order)]
        runs[name] = tmp_path / f"run_{name}.txt"
        runs[name].write_text("\n".join(lines) + "\n")
    files = {"human": human, "judge": judge, "merged": human + judge, "check": check}
    paths = {name: tmp_path / f"{name}.qrels" for name in files}
    for name, lines in files.items():
        paths[name].write_text("\n".join(lines) + "\n")
    paths["grades"] = tmp_path / "grades.npy"
    np.save(paths["grades"], np.stack([people_grades, judge_grades]))
    return {**paths, "run_a": runs["a"], "run_b": runs["b"]}


def _evaluate(files: dict[str, Path], gold: str, run: str, tmp_path: Path) -> Path:
    results = tmp_path / f"{gold}_{run}.json"
    done = cli.run(
        "evaluate", "--gold", str(files[gold]), "--run", str(files[run]), "--origin", "real",
        "--k", "1,5", "--output", str(results),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return results


def test_unchecked_judge_labels_are_said_on_the_first_line_with_the_command_that_checks_them(
    tmp_path: Path,
) -> None:
    files = _workspace(tmp_path)
    results = _evaluate(files, "merged", "run_a", tmp_path)

    done = cli.run("calibrate", str(results), "--metric", "recall@1")

    assert done.returncode == 0, done.stderr
    first = " ".join(done.stdout.split("warning:")[0].split())  # the headline, unwrapped
    assert first.startswith("Quote real recall@1")
    assert "rests on judge labels: gpt-4o-mini graded 25 of the 65 judged pairs" in first
    assert "on 25 of its 40 queries, not checked against people" in first
    assert f"`{CHECK_COMMAND}`" in first
    assert f"`{PPI_COMMAND}`" in first
    for fmt in ("json", "markdown", "html"):
        out = cli.run("calibrate", str(results), "--metric", "recall@1", "--format", fmt)
        assert out.returncode == 0, out.stderr
        # JSON's first line holds the whole headline object; the others show the headline first.
        text = out.stdout.splitlines()[0] if fmt == "json" else out.stdout
        assert "not checked against people" in text, fmt
    data = json.loads(cli.run("calibrate", str(results), "--metric", "recall@1", "-f", "json").stdout)
    assert data["judge_labels"]["pairs"] == 25
    assert data["judge_labels"]["queries"] == 25
    assert data["judge_labels"]["checked"] is False


def test_the_queries_people_alone_labelled_give_their_own_figure_beside(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    result = evaluate([load_gold(files["merged"], origin="real")], run=load_run(files["run_a"]), k=(1,))

    report = calibrate(result, metric="recall@1")

    note = report.judge_labels
    assert note is not None
    assert note.people_only is not None
    people = [q.metrics["recall@1"] for q in result.gold_sets[0].queries if int(q.query_id[1:]) >= JUDGED]
    assert note.people_only.n == N - JUDGED
    assert note.people_only.value == pytest.approx(np.mean(people))
    assert f"On the {N - JUDGED} queries people alone labelled, recall@1 = {np.mean(people):.2f}" in (
        report.headline.text
    )


def test_declared_human_labels_put_the_judges_agreement_and_bias_on_the_first_line(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    results = _evaluate(files, "merged", "run_a", tmp_path)
    people, judge = np.load(files["grades"])
    kappa = cohen_kappa_score(people >= 2, judge >= 2)
    bias = float(judge.mean() - people.mean())

    declared = calibrate(results, metric="recall@1", judge_labels=files["judge"], human_labels=files["check"])
    # People's labels alone: the judge's labels are the pairs the results' gold set marks.
    found = calibrate(results, metric="recall@1", human_labels=files["check"])

    for report in (declared, found):
        assert report.judge is not None
        assert report.judge.kappa_binary == pytest.approx(kappa)
        assert report.judge_labels is not None
        assert report.judge_labels.checked is report.judge
        line = report.headline.text
        assert f"checked against people on {JUDGED} pairs: kappa {kappa:.3f} at grade >= 2" in line
        assert f"mean grade {bias:+.3f} against people's" in line
        assert f"`{PPI_COMMAND}`" in line
        assert "not checked" not in line
    done = cli.run("calibrate", str(results), "--metric", "recall@1", "--human-labels", str(files["check"]))
    assert done.returncode == 0, done.stderr
    assert f"kappa {kappa:.3f} at grade >= 2" in " ".join(done.stdout.split())


def test_human_labels_alone_with_no_judge_label_anywhere_are_refused_in_one_line(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    results = _evaluate(files, "human", "run_a", tmp_path)
    done = cli.run("calibrate", str(results), "--human-labels", str(files["check"]))
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert "no gold set of the results holds labels marked as a judge's" in done.err_lines[0]


def test_a_figure_on_peoples_labels_alone_says_nothing_of_a_judge(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    results = _evaluate(files, "human", "run_a", tmp_path)
    report = calibrate(results, metric="recall@1")
    assert report.judge_labels is None
    assert "judge" not in report.headline.text
    assert json.loads(render(report, "json"))["judge_labels"] is None
    comparison = compare(results, _evaluate(files, "human", "run_b", tmp_path), metric="recall@1")
    assert comparison.judge_labels is None
    assert "judge" not in comparison.headline


def test_compare_says_on_its_first_line_that_the_figures_rest_on_judge_labels(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    a = _evaluate(files, "merged", "run_a", tmp_path)
    b = _evaluate(files, "merged", "run_b", tmp_path)

    done = cli.run("compare", str(a), str(b), "--metric", "recall@1")

    assert done.returncode == 0, done.stderr
    first = " ".join(done.stdout.split())
    assert "rests on judge labels" in first
    assert "not checked against people" in first
    report = compare(a, b, metric="recall@1")
    assert report.judge_labels is not None
    assert report.judge_labels.queries == JUDGED
    assert report.headline.endswith(report.judge_labels.text)
    out = cli.run("compare", str(a), str(b), "--metric", "recall@1", "--format", "json")
    assert json.loads(out.stdout)["judge_labels"]["pairs"] == JUDGED


def test_judge_labels_on_the_synthetic_queries_alone_leave_the_real_figure_unmarked(tmp_path: Path) -> None:
    files = _workspace(tmp_path)
    real = _evaluate(files, "human", "run_a", tmp_path)
    synthetic = tmp_path / "synthetic.json"
    done = cli.run(
        "evaluate", "--gold", str(files["judge"]), "--run", str(files["run_a"]), "--origin", "synthetic",
        "--k", "1,5", "--output", str(synthetic),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = calibrate([real, synthetic], metric="recall@1")
    assert report.judge_labels is None

"""``realrecall agreement``: tau between two query sets, the split-half floor, pairs separated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, ttest_rel

from calibrate.results_builder import per_query, results_document
from realrecall.calibrate.query_scores import (
    QueryScores,
    load_query_scores,
    measure_aliases,
    parse_query_selection,
)
from realrecall.calibrate.set_agreement import pairs_separated, set_agreement, split_half
from realrecall.errors import InputError
from support.cli import run
from support.reference import find_reference_data

DL2023 = find_reference_data()
NDCG = None if DL2023 is None else DL2023 / "trec-dl-2023-real-vs-synthetic" / "all.pass.nist.ndcgeval"
needs_dl2023 = pytest.mark.skipif(
    NDCG is None or not NDCG.is_file(),
    reason="../shared/reference-data/trec-dl-2023-real-vs-synthetic is absent",
)


def _scores(values: np.ndarray, prefix: str = "q") -> QueryScores:
    systems = tuple(f"s{i}" for i in range(values.shape[0]))
    return QueryScores("ndcg@10", systems, tuple(f"{prefix}{j}" for j in range(values.shape[1])), values)


def _trec_eval_file(path: Path, values: np.ndarray, *, first_query: int = 1) -> Path:
    """4-field trec_eval -q lines (run measure qid value) of systems s0.. on queries first_query.."""
    lines = []
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            lines.append(f"s{i}\tndcg_cut_10\t{first_query + j}\t{value:.6f}")
        lines.append(f"s{i}\tndcg_cut_10\tall\t{row.mean():.6f}")
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_dl2023
def test_dl2023_human_against_synthetic_reproduces_the_published_figures() -> None:
    assert NDCG is not None
    done = run(
        "agreement", str(NDCG), str(NDCG), "--measure", "ndcg@10", "--a-queries", "2000000-2999999",
        "--b-queries", "3000000-", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_systems"] == 35
    assert report["n_queries"] == {"a": 51, "b": 31}
    # Deterministic: the track overview's tau and the t-test shares of the 595 pairs, exactly.
    assert report["tau"] == pytest.approx(0.8487, abs=5e-5)
    assert report["pairs_separated"]["a"] == pytest.approx(0.763, abs=5e-4)
    assert report["pairs_separated"]["b"] == pytest.approx(0.739, abs=6e-4)
    assert report["pairs_separated"]["n_pairs"] == 595
    assert "ttest_rel" in report["pairs_separated"]["test"]
    # Random: the split-half median (reference ~0.827) moves in steps of 2/595 = 0.0034 of tau and by
    # about 0.003 between seeds at 1,000 splits; 31 random human queries separate 0.655 of the pairs,
    # about +-0.01 between seeds at 200 draws.
    assert report["split_half_tau"]["median"] == pytest.approx(0.827, abs=0.01)
    assert report["pairs_separated"]["a_at_b_size"] == pytest.approx(0.655, abs=0.015)
    low, high = report["tau_ci"]
    assert low < report["tau"] < high
    assert "as well as A agrees with itself" in report["agreement"]
    assert "Neither set is too small" in report["power"]


def test_tau_is_scipys_kendall_tau_of_the_system_means() -> None:
    rng = np.random.default_rng(3)
    a = rng.random((8, 40)) + np.linspace(0, 0.3, 8)[:, None]
    b = rng.random((8, 25)) + np.linspace(0, 0.3, 8)[::-1][:, None] * 0.2
    result = set_agreement(_scores(a), _scores(b, "b"), n_resamples=200, n_splits=50)
    expected = kendalltau(a.mean(axis=1), b.mean(axis=1))
    assert result.tau == pytest.approx(float(expected.statistic), abs=1e-12)
    assert result.tau_p_value == pytest.approx(float(expected.pvalue), rel=1e-9)
    assert result.n_queries_a == 40
    assert result.n_queries_b == 25
    assert result.n_systems == 8


def test_pairs_separated_counts_scipys_paired_t_test_pair_by_pair() -> None:
    rng = np.random.default_rng(5)
    values = rng.random((6, 20)) + np.linspace(0, 0.4, 6)[:, None]
    separated = sum(ttest_rel(values[i], values[j]).pvalue < 0.05 for i in range(6) for j in range(i + 1, 6))
    assert pairs_separated(values, 0.05) == pytest.approx(separated / 15)


def test_identical_systems_are_never_separated() -> None:
    values = np.tile(np.linspace(0, 1, 10), (4, 1))
    assert pairs_separated(values, 0.05) == 0.0


def test_split_half_tau_of_systems_far_apart_is_one() -> None:
    rng = np.random.default_rng(0)
    values = rng.random((5, 30)) * 0.01 + np.arange(5)[:, None]
    median, spread = split_half(values, 100, 0.95, rng)
    assert median == 1.0
    assert spread.low == 1.0


def test_a_reversed_order_is_disagreement_beyond_noise() -> None:
    rng = np.random.default_rng(1)
    a = rng.random((6, 60)) * 0.1 + np.arange(6)[:, None] * 0.2
    b = rng.random((6, 60)) * 0.1 + np.arange(6)[::-1, None] * 0.2
    result = set_agreement(_scores(a), _scores(b, "b"), n_resamples=200, n_splits=100)
    assert result.tau == pytest.approx(-1.0)
    assert "beyond what query noise explains" in result.agreement_verdict


def test_a_set_that_separates_few_pairs_is_called_too_small() -> None:
    rng = np.random.default_rng(2)
    a = rng.random((5, 200)) + np.arange(5)[:, None] * 0.3
    b = rng.random((5, 4)) + np.arange(5)[:, None] * 0.01
    result = set_agreement(_scores(a), _scores(b, "b"), n_resamples=200, n_splits=100)
    assert result.separated_b < 0.5
    assert "B is too small to separate these systems" in result.power_verdict


def test_fewer_than_three_shared_systems_is_refused() -> None:
    values = np.ones((2, 5))
    with pytest.raises(InputError, match="at least 3"):
        set_agreement(_scores(values), _scores(values, "b"))


def test_trec_eval_output_with_runid_lines_names_each_concatenated_system(tmp_path: Path) -> None:
    path = tmp_path / "eval.txt"
    path.write_text(
        "ndcg_cut_10           \t1\t0.5\nP_10\t1\t0.3\nndcg_cut_10\t2\t0.25\n"
        "runid                 \tall\tfirst\nndcg_cut_10\tall\t0.375\n"
        "ndcg_cut_10\t1\t0.75\nndcg_cut_10\t2\t1.0\nrunid\tall\tsecond\n"
    )
    scores = load_query_scores(path, "ndcg@10")
    assert scores.systems == ("first", "second")
    assert scores.query_ids == ("1", "2")
    assert scores.values.tolist() == [[0.5, 0.25], [0.75, 1.0]]


def test_a_query_scored_twice_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "eval.txt"
    path.write_text("s\tndcg_cut_10\t1\t0.5\ns\tndcg_cut_10\t1\t0.6\n")
    with pytest.raises(InputError, match=r"eval.txt:2: .*twice \(first on line 1\)"):
        load_query_scores(path, "ndcg@10")


def test_a_value_that_is_not_a_number_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "eval.txt"
    path.write_text("s\tndcg_cut_10\t1\t0.5\ns\tndcg_cut_10\t2\tabc\n")
    with pytest.raises(InputError, match=r"eval.txt:2: value 'abc'"):
        load_query_scores(path, "ndcg@10")


def test_queries_not_scored_for_every_system_are_dropped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "eval.txt"
    path.write_text("s\tndcg_cut_10\t1\t0.5\ns\tndcg_cut_10\t2\t0.6\nt\tndcg_cut_10\t1\t0.1\n")
    scores = load_query_scores(path, "ndcg_cut_10")
    assert scores.query_ids == ("1",)
    assert scores.dropped == 1


def test_measures_are_found_under_either_name() -> None:
    assert "ndcg_cut_10" in measure_aliases("ndcg@10")
    assert "ndcg@10" in measure_aliases("ndcg_cut_10")
    assert "success_5" in measure_aliases("recall@5")
    assert "recall@5" in measure_aliases("success_5")
    assert "recip_rank" in measure_aliases("mrr")


def test_query_selections_read_ranges_fields_and_id_files(tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("7\n9\n")
    assert parse_query_selection("3-5").keeps("4", None)
    assert not parse_query_selection("3-5").keeps("6", None)
    assert parse_query_selection("3-").keeps("300", None)
    assert parse_query_selection(f"@{ids}").keeps("9", None)
    assert not parse_query_selection(f"@{ids}").keeps("8", None)
    with pytest.raises(InputError, match="trec_eval output has no fields"):
        parse_query_selection("origin=real").keeps("1", None)
    with pytest.raises(InputError, match="cannot read the query selection"):
        parse_query_selection("nonsense")


def test_realrecall_results_files_are_systems_and_origins_select_the_sets(
    tmp_path: Path, write_results
) -> None:
    ranks = {"bm25": 1, "dense": 3, "hybrid": 2, "title": None}
    folder = tmp_path / "results"
    folder.mkdir()
    for name, rank in ranks.items():
        records = [per_query(f"r{i}", "real", rank=rank if i % 2 else 1) for i in range(6)]
        records += [per_query(f"s{i}", "synthetic", rank=rank if i % 3 else 1) for i in range(6)]
        write_results(results_document([("set", records)], retriever=name), f"results/{name}.json")
    done = run(
        "agreement", str(folder), str(folder), "--measure", "mrr@10", "--a-queries", "origin=real",
        "--b-queries", "origin=synthetic", "--format", "json", "--n-resamples", "200", "--splits", "50",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_systems"] == 4
    assert report["n_queries"] == {"a": 6, "b": 6}
    assert {s["name"] for s in report["systems"]} == set(ranks)
    assert report["tau"] == pytest.approx(1.0)


def test_cli_names_an_unknown_measure_in_one_line(tmp_path: Path) -> None:
    path = _trec_eval_file(tmp_path / "e.txt", np.ones((3, 4)))
    done = run("agreement", str(path), str(path), "--measure", "map")
    assert done.returncode == 2
    assert done.err_lines == [line for line in done.err_lines if line.startswith("error:")]
    assert "no scores of 'map'" in done.stderr


def test_html_report_shows_the_scatter_and_escapes_system_names(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    values = rng.random((4, 12))
    lines = [
        f"{name}\tndcg_cut_10\t{j}\t{values[i, j]:.4f}"
        for i, name in enumerate(["<b>x</b>", "s1", "s2", "s3"])
        for j in range(12)
    ]
    path = tmp_path / "e.txt"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "agreement.html"
    done = run(
        "agreement", str(path), str(path), "--measure", "ndcg@10", "--a-queries", "0-5",
        "--b-queries", "6-11", "-f", "html", "-o", str(out), "--n-resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert html.count('class="point"') == 4
    assert 'class="diagonal"' in html
    assert "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "Kendall tau" in done.stdout


def test_calibrate_html_draws_retrievers_real_against_synthetic_with_the_split_half_floor(
    tmp_path: Path, write_results
) -> None:
    paths = []
    for number, name in enumerate(["bm25", "dense", "hybrid", "title"]):
        hit_real, hit_synthetic = number % 3, number % 2
        records = [per_query(f"r{i}", "real", rank=1 if i % 5 > hit_real else None) for i in range(20)]
        records += [
            per_query(f"s{i}", "synthetic", rank=1 if i % 4 > hit_synthetic else None) for i in range(20)
        ]
        paths.append(str(write_results(results_document([("set", records)], retriever=name))))
    out = tmp_path / "report.html"
    done = run("calibrate", *paths, "-f", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "per retriever: real vs synthetic (tau" in html
    assert "real split-half floor" in html
    assert html.count('class="point"') == 4

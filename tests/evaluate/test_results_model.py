"""One results model: what evaluate returns is what results.json reads back, every gold-set field
travels into it, and calibrate, compare and review take it (or its file) alike (issue 9)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import realrecall.calibrate
import realrecall.curate
from realrecall.calibrate import calibrate, compare
from realrecall.curate import find_misses
from realrecall.errors import InputError
from realrecall.evaluate import EvaluationResult, evaluate, write_per_query, write_results
from realrecall.evaluate import results as results_module
from realrecall.evaluate.metrics import is_binary
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run
from support import cli


def _gold_sets() -> list[GoldSet]:
    """A real and a synthetic set whose records all carry an origin and a ``source``; none is sliced."""
    real = GoldSet(
        tuple(
            GoldQuery(f"r{i}", f"real question {i}", {f"p{i % 4}": 1}, "real", "lookup", "en",
                      metadata={"source": "tickets" if i % 2 else "forum", "ticket": {"id": i}})
            for i in range(12)
        ),
        name="real",
    )  # fmt: skip
    synthetic = GoldSet(
        tuple(
            GoldQuery(f"s{i}", f"synthetic question {i}", {f"p{i % 4}": 1}, "synthetic", "lookup", "en",
                      metadata={"source": "generated"})
            for i in range(12)
        ),
        name="synthetic",
    )  # fmt: skip
    return [real, synthetic]


def _run(shift: int, name: str) -> Run:
    """Every query retrieves p0..p3 rotated: the first relevant rank varies with ``shift``."""
    ranked = {}
    for prefix in ("r", "s"):
        for i in range(12):
            order = [f"p{(i + shift + j) % 4}" for j in range(4)]
            ranked[f"{prefix}{i}"] = order
    return Run.from_lists(ranked, name=name)


@pytest.fixture
def two_results(tmp_path: Path) -> tuple[Path, Path]:
    paths = []
    for shift, name in ((1, "a"), (0, "b")):
        result = evaluate(_gold_sets(), run=_run(shift, name), k=(1, 3))
        path = tmp_path / f"{name}.json"
        write_results(result, path)
        paths.append(path)
    return paths[0], paths[1]


def test_compare_by_origin_shows_real_and_synthetic_rows_not_one_missing(two_results) -> None:  # type: ignore[no-untyped-def]
    # Each origin has its own rows (never one pooled row), so --by origin adds no slice.
    report = compare(*two_results, metric="recall@1", by=["origin"], n_resamples=200)
    assert [row.label for row in report.rows] == ["real: all queries", "synthetic: all queries"]
    assert [row.n for row in report.rows] == [12, 12]
    assert report.warnings == ()


def test_cli_compare_by_origin_prints_both_origins(two_results) -> None:  # type: ignore[no-untyped-def]
    a, b = two_results
    done = cli.run("compare", str(a), str(b), "--by", "origin", "--n-resamples", "200", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert [(row["origin"], row["field"], row["n"]) for row in rows] == [
        ("real", None, 12),
        ("synthetic", None, 12),
    ]


def test_calibrate_by_a_field_not_named_at_evaluate_time_slices_by_it(two_results) -> None:  # type: ignore[no-untyped-def]
    report = calibrate(two_results[0], by=["source"], metric="recall@1", n_resamples=200)
    values = {(gap.value, gap.n_real, gap.n_synthetic) for gap in report.slices()}
    assert values == {("forum", 6, 0), ("generated", 0, 12), ("tickets", 6, 0)}
    assert not any("source" in warning and "no query" in warning for warning in report.warnings)


def test_a_field_no_query_has_is_a_warning_naming_it(two_results) -> None:  # type: ignore[no-untyped-def]
    report = compare(*two_results, metric="recall@1", by=["sorce"], n_resamples=200)
    assert any(w.startswith("--by 'sorce': no query in the results has this field") for w in report.warnings)
    calibrated = calibrate(two_results[0], by=["sorce"], n_resamples=200)
    assert any(w.startswith("--by 'sorce': no query") for w in calibrated.warnings)


def test_every_gold_set_field_is_in_results_json_and_the_per_query_file(tmp_path: Path) -> None:
    result = evaluate(_gold_sets(), run=_run(0, "x"), k=(1,))
    write_results(result, tmp_path / "results.json")
    write_per_query(result, tmp_path / "pq.jsonl")
    fields = json.loads((tmp_path / "results.json").read_text())["gold_sets"][0]["per_query"]["fields"][1]
    assert (fields["source"], fields["ticket"]) == ("tickets", {"id": 1})
    line = json.loads((tmp_path / "pq.jsonl").read_text().splitlines()[1])
    assert (line["gold_set"], line["source"], line["ticket"]) == ("real", "tickets", {"id": 1})


def test_a_gold_set_field_named_like_a_per_query_key_is_warned_not_written_over_the_outcome() -> None:
    gold = GoldSet((GoldQuery("r1", "x", {"p0": 1}, "real", metadata={"top": "mine", "gold_set": "g"}),))
    result = evaluate(gold, run=_run(0, "x"), k=(1,))
    record = result.gold_sets[0].queries[0].to_dict(with_top=True)
    assert record["top"] == ["p1"]  # the run's, not the gold set's "top"
    assert any("field 'gold_set' is not carried into the results" in w for w in result.warnings)
    assert any("field 'top' is not carried into the results" in w for w in result.warnings)


def test_results_json_reads_back_into_the_same_types_evaluate_returns(tmp_path: Path) -> None:
    result = evaluate(_gold_sets(), run=_run(1, "x"), k=(1, 3), by="type")
    path = tmp_path / "results.json"
    write_results(result, path)
    loaded = results_module.load_results(path)
    assert isinstance(loaded, EvaluationResult)
    assert loaded.source == str(path)
    assert loaded.to_dict() == result.to_dict()
    assert [q.to_dict(with_top=False) for q in loaded.queries] == [
        q.to_dict(with_top=False) for q in result.queries
    ]
    assert loaded.queries[0].gold_set == "real"


def test_the_per_query_file_reads_back_into_query_results(tmp_path: Path) -> None:
    result = evaluate(_gold_sets(), run=_run(1, "x"), k=(1, 3))
    write_per_query(result, tmp_path / "pq.jsonl")
    records = results_module.read_per_query(tmp_path / "pq.jsonl")
    assert records == result.queries


def test_one_reader_and_one_type_per_concept() -> None:
    assert realrecall.calibrate.load_results is results_module.load_results
    assert realrecall.curate.read_per_query is results_module.read_per_query
    for gone in ("realrecall.calibrate.results", "realrecall.curate.per_query"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(gone)
    assert not hasattr(realrecall.calibrate, "Results")
    assert not hasattr(realrecall.curate, "Results")


def test_calibrate_compare_and_review_take_the_evaluation_result_itself(tmp_path: Path) -> None:
    a = evaluate(_gold_sets(), run=_run(1, "a"), k=(1, 3))
    b = evaluate(_gold_sets(), run=_run(0, "b"), k=(1, 3))
    assert calibrate(a, metric="recall@1", n_resamples=200).overall().n_real == 12
    # One verdict per origin, never one over the union of real and synthetic queries.
    assert [row.n for row in compare(a, b, metric="recall@1", n_resamples=200).verdicts] == [12, 12]
    corpus_file = tmp_path / "corpus.jsonl"
    corpus_file.write_text("".join(json.dumps({"id": f"p{i}", "text": f"t{i}"}) + "\n" for i in range(4)))
    review = find_misses(a, corpus=corpus_file, k=1)
    assert review.n_queries == 12  # the real queries
    assert review.n_misses == 12  # shift 1: the gold passage is second
    assert find_misses(a, corpus=corpus_file, k=1, origin=None).n_misses == 24


def test_review_of_a_results_file_without_a_per_query_file_says_which_file_to_give(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_results(evaluate(_gold_sets(), run=_run(1, "a"), k=(1,)), path)
    with pytest.raises(InputError, match=r"hold no retrieved lists.*--per-query"):
        find_misses(path, corpus=tmp_path)


def test_metric_kinds_come_from_the_registry() -> None:
    assert is_binary("recall@10")
    assert not any(
        is_binary(name) for name in ("mrr@10", "mrr", "ndcg@10", "precision@5", "passage_recall@5")
    )
    assert not is_binary("made_up@3")


def test_an_mrr_whose_values_are_all_zero_or_one_gets_the_bootstrap_not_wilson() -> None:
    # Found at rank 1 or not at all: every reciprocal rank is 0 or 1, yet MRR is not a proportion.
    result = evaluate(_gold_sets(), run=_run(0, "x"), metrics=["recall@1", "mrr@1"])
    report = calibrate(result, metric="mrr@1", n_resamples=200)
    # The bootstrap ("+score" where its bounded-mean score interval widened it near the ceiling).
    assert report.overall("mrr@1").real.interval.method in ("bootstrap", "bootstrap+score")
    assert report.overall("recall@1").real.interval.method == "wilson"


def test_a_binary_metric_value_that_is_not_zero_or_one_is_refused() -> None:
    document = evaluate(_gold_sets(), run=_run(0, "x"), k=(1,)).to_dict()
    document["gold_sets"][0]["per_query"][0]["metrics"]["recall@1"] = 0.5
    with pytest.raises(
        InputError, match=r"recall@1 of query 'r0' of gold set 'real' is 0.5; recall@1 is 0 or 1"
    ):
        results_module.load_results(document)

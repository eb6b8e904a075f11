"""Diagnostics (length, overlap, exact match, mix), rank agreement and the answer grid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import bootstrap, kendalltau

from calibrate.results_builder import per_query, ranks_set, results_document
from realrecall.calibrate import answer_grid, calibrate, compare, load_answers, rank_agreement
from realrecall.errors import InputError
from realrecall.evaluate.results import load_results


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    chunks = [
        {"id": "p1", "text": "Sync retries an upload three times before it gives up."},
        {"id": "p2", "text": "Offline mode keeps edits in a local queue."},
    ]
    path.write_text("\n".join(json.dumps(c) for c in chunks) + "\n", encoding="utf-8")
    return path


def diagnostics_document(corpus_path: str | None) -> dict:
    real = [
        per_query("r1", "real", rank=1, query="why does my upload stop", gold=["p1"], type="howto"),
        per_query(
            "r2", "real", rank=None, query="phone edits lost", gold=["p2"], type="lookup", language="de"
        ),
    ]
    synthetic = [
        per_query("s1", "synthetic", rank=1, query="How many times does sync retry an upload?", gold=["p1"]),
        per_query("s2", "synthetic", rank=1, query="local queue", gold=["p2"], type="lookup"),
    ]
    return results_document([("s", synthetic), ("r", real)], corpus_path=corpus_path)


def test_overlap_and_exact_match_use_the_corpus_named_in_the_results(corpus_file: Path) -> None:
    report = calibrate(diagnostics_document(str(corpus_file)))
    real, synthetic = report.diagnostics.real, report.diagnostics.synthetic
    assert report.diagnostics.overlap_skipped is None
    assert real.question_words.values == (5, 3)
    assert synthetic.question_words.mean == pytest.approx((8 + 2) / 2)
    # "local queue" is found verbatim in p2; no other question is.
    assert synthetic.exact_match_share == 0.5
    assert real.exact_match_share == 0.0
    assert synthetic.overlap is not None
    assert real.overlap is not None
    assert synthetic.overlap.values[1] == 1.0
    assert synthetic.overlap.mean > real.overlap.mean
    assert real.types == {"howto": 1, "lookup": 1}
    assert real.languages == {"de": 1, "en": 1}


def test_overlap_is_skipped_with_a_reason_when_the_corpus_is_missing(tmp_path: Path) -> None:
    report = calibrate(diagnostics_document(str(tmp_path / "gone.jsonl")))
    assert report.diagnostics.real.overlap is None
    assert "not found" in (report.diagnostics.overlap_skipped or "")
    assert any("overlap and exact-match diagnostics skipped" in w for w in report.warnings)


def test_overlap_is_the_generate_stage_definition(corpus_file: Path) -> None:
    from realrecall.text_features import lexical_overlap

    report = calibrate(diagnostics_document(str(corpus_file)))
    question = "How many times does sync retry an upload?"
    passage = "Sync retries an upload three times before it gives up."
    assert report.diagnostics.synthetic.overlap is not None
    assert report.diagnostics.synthetic.overlap.values[0] == lexical_overlap(question, passage, "en")
    assert report.diagnostics.overlap_source == "realrecall.text_features.lexical_overlap"


def test_rank_agreement_equals_scipy_kendalltau_over_the_retrievers() -> None:
    documents = []
    figures = [(0.9, 0.6), (0.8, 0.7), (0.7, 0.5), (0.95, 0.65)]
    for index, (synthetic, real) in enumerate(figures):
        s_hits, r_hits = round(synthetic * 20), round(real * 20)
        documents.append(
            results_document(
                [("s", ranks_set("synthetic", s_hits, 20 - s_hits, prefix="s")),
                 ("r", ranks_set("real", r_hits, 20 - r_hits, prefix="r"))],
                retriever=f"system{index}",
            )
        )  # fmt: skip
    report = calibrate(documents)
    agreement = report.rank_agreement
    assert agreement is not None
    reference = kendalltau([f[0] for f in figures], [f[1] for f in figures])
    assert agreement.tau == pytest.approx(reference.statistic)
    assert [s.name for s in agreement.systems] == ["system0", "system1", "system2", "system3"]
    assert "compare systems" in agreement.advice or "compare them on real" in agreement.advice


def test_answer_grid_counts_each_cell_and_names_the_half_to_work_on() -> None:
    records = load_results(
        results_document(
            [("r", [per_query("a", "real", rank=1), per_query("b", "real", rank=None),
                    per_query("c", "real", rank=3), per_query("d", "real", rank=None),
                    per_query("e", "real", rank=20), per_query("f", "real", rank=2)])]
        )
    ).queries  # fmt: skip
    answers = {"a": True, "b": True, "c": False, "d": False, "e": False, "f": True, "zz": True}
    grid = answer_grid(records, answers, k=10)
    assert dict(grid.counts) == {"Working": 2, "Lucky": 1, "Assembly problem": 1, "Retrieval problem": 2}
    assert grid.cells["e"] == "Retrieval problem"  # ranked 20th: outside the top 10
    assert grid.unmatched == ("zz",)
    assert grid.verdict.startswith("work on retrieval: 2 of 3 wrong answers")


def test_answers_load_from_csv_and_jsonl(tmp_path: Path) -> None:
    csv_file = tmp_path / "answers.csv"
    csv_file.write_text("query_id,correct\nq1,true\nq2,no\n", encoding="utf-8")
    jsonl_file = tmp_path / "answers.jsonl"
    jsonl_file.write_text(
        '{"query_id": "q1", "correct": true}\n{"query_id": "q2", "correct": 0}\n', encoding="utf-8"
    )
    assert load_answers(csv_file) == {"q1": True, "q2": False}
    assert load_answers(jsonl_file) == {"q1": True, "q2": False}


def test_answer_label_that_is_not_a_boolean_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "answers.csv"
    bad.write_text("query_id,correct\nq1,maybe\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"answers.csv:2: correct must be true or false"):
        load_answers(bad)


def test_rank_agreement_says_when_the_systems_differ_by_less_than_their_noise() -> None:
    documents = [
        results_document(
            [("s", ranks_set("synthetic", 30 + i, 10 - i, prefix="s")),
             ("r", ranks_set("real", 20 + (i * 7) % 3, 20 - (i * 7) % 3, prefix="r"))],
            retriever=f"system{i}",
        )
        for i in range(4)
    ]  # fmt: skip
    agreement = calibrate(documents).rank_agreement
    assert agreement is not None
    # Real hits 20, 21, 22, 20 of 40, the same queries first: no pair differs on more than 2 queries.
    assert (
        "On the real set a paired randomization test (as compare runs it) separates no pair of systems "
        "at alpha 0.05: that order is chance." in agreement.advice
    )
    assert len(agreement.real_ties) == 6


def test_ties_come_from_the_paired_test_compare_runs_not_from_overlapping_intervals() -> None:
    # Issue 30: the note called the real order "mostly chance" and every pair tied while compare, on the
    # same queries, found a pair different. Here b finds every real query a finds and 12 more (0.80 and
    # 0.84 of 300: each within the other's Wilson interval), c and d lie far below.
    figures = [(400, 240), (400, 252), (300, 150), (200, 90)]
    documents = systems_with(figures, n_synthetic=500, n_real=300)
    agreement = rank_agreement([load_results(d) for d in documents], "recall@10")
    assert agreement is not None
    a, b = agreement.systems[0], agreement.systems[1]
    assert a.real_interval is not None
    assert b.real_interval is not None
    assert a.real_interval.low <= b.real <= a.real_interval.high  # the old rule: tied
    assert b.real_interval.low <= a.real <= b.real_interval.high
    assert compare(documents[0], documents[1]).rows[0].significant
    assert ("bm25", "bm25-nostem") not in agreement.real_ties
    assert ("bm25", "bm25-nostem") in agreement.synthetic_ties  # the same 400 synthetic hits
    assert "order is chance" not in agreement.advice


def systems_with(figures: list[tuple[int, int]], *, n_synthetic: int, n_real: int) -> list[dict]:
    """One results document per system: (synthetic hits, real hits) found at rank 1, the rest missed."""
    return [
        results_document(
            [("s", ranks_set("synthetic", s, n_synthetic - s, prefix="s")),
             ("r", ranks_set("real", r, n_real - r, prefix="r"))],
            retriever=name,
        )
        for name, (s, r) in zip(["bm25", "bm25-nostem", "title", "dense", "hybrid"], figures, strict=False)
    ]  # fmt: skip


def test_systems_the_synthetic_set_ties_are_reported_and_the_advice_does_not_send_you_to_it() -> None:
    # The case: synthetic 0.996 for bm25 and bm25 without stemming, real 0.820 and 0.797; the
    # other systems well apart on both sets, in the same order (tau high).
    figures = [(498, 246), (498, 239), (350, 120), (420, 180), (470, 210)]
    agreement = rank_agreement(
        [load_results(d) for d in systems_with(figures, n_synthetic=500, n_real=300)], "recall@10"
    )
    assert agreement is not None
    assert agreement.tau >= 0.7
    assert agreement.synthetic_ties == (("bm25", "bm25-nostem"),)
    assert "use the synthetic set" not in agreement.advice.lower()
    assert "bm25 and bm25-nostem (synthetic 0.996 and 0.996, real 0.820 and 0.797)" in agreement.advice
    assert "Choose between tied systems on real questions" in agreement.advice
    # Each system's interval is its Wilson interval, as for the headline.
    bm25 = agreement.systems[0]
    assert bm25.synthetic_interval is not None
    assert bm25.synthetic_interval.method == "wilson"


def test_without_ties_and_with_a_firm_tau_the_advice_is_to_compare_on_the_synthetic_set() -> None:
    figures = [(480, 250), (350, 120), (420, 180), (300, 60), (200, 20)]
    agreement = rank_agreement(
        [load_results(d) for d in systems_with(figures, n_synthetic=500, n_real=300)], "recall@10"
    )
    assert agreement is not None
    assert agreement.tau == pytest.approx(1.0)
    assert agreement.synthetic_ties == ()
    assert agreement.tau_interval is not None
    assert agreement.tau_interval.low > 0.7
    assert "Use the synthetic set to compare systems" in agreement.advice


@pytest.mark.parametrize(
    ("count", "why"),
    [(2, "tau is +1 or -1 by construction"), (3, "a random order gives tau = 1 one time in 6")],
)
def test_no_advice_from_fewer_than_four_systems(count: int, why: str) -> None:
    figures = [(480, 250), (350, 120), (200, 20)][:count]
    agreement = rank_agreement(
        [load_results(d) for d in systems_with(figures, n_synthetic=500, n_real=300)], "recall@10"
    )
    assert agreement is not None
    assert agreement.tau == pytest.approx(1.0)
    assert agreement.advice.startswith(f"No advice from {count} systems")
    assert why in agreement.advice
    assert "use the synthetic set" not in agreement.advice.lower()


def test_tau_interval_equals_scipy_bootstrap_of_paired_query_resamples() -> None:
    # Every system's mean recomputed on the same resampled query ids (synthetic and real drawn apart),
    # tau from scipy on each resample: scipy.stats.bootstrap over the query indices is the oracle.
    rng = np.random.default_rng(3)
    systems, n_s, n_r = 5, 40, 30
    s_ranks, r_ranks = rng.integers(1, 8, (n_s, systems)), rng.integers(1, 8, (n_r, systems))
    results = [
        load_results(results_document(
            [("s", [per_query(f"s{i}", "synthetic", rank=int(s_ranks[i, j])) for i in range(n_s)]),
             ("r", [per_query(f"r{i}", "real", rank=int(r_ranks[i, j])) for i in range(n_r)])],
            retriever=f"system{j}",
        ))
        for j in range(systems)
    ]  # fmt: skip
    agreement = rank_agreement(results, "mrr@10", n_resamples=2000, seed=5)
    synthetic, real = 1.0 / s_ranks, 1.0 / r_ranks

    def tau_of_resample(i_s: np.ndarray, i_r: np.ndarray, axis: int) -> np.ndarray:
        s_means = synthetic[i_s.astype(int)].mean(axis=-2).reshape(-1, systems)
        r_means = real[i_r.astype(int)].mean(axis=-2).reshape(-1, systems)
        taus = np.array([kendalltau(x, y).statistic for x, y in zip(s_means, r_means, strict=True)])
        return taus if i_s.ndim > 1 else taus[0]

    reference = bootstrap(
        (np.arange(n_s), np.arange(n_r)), tau_of_resample, method="percentile", n_resamples=2000,
        rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    assert agreement is not None
    assert agreement.tau_interval is not None
    interval = agreement.tau_interval
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high), abs=1e-12)


def test_resampled_taus_equal_scipy_kendalltau_row_by_row() -> None:
    from realrecall.calibrate.statistics import kendall_tau_b

    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (200, 6)).astype(float)  # many ties, as resampled means of few queries have
    y = rng.integers(0, 4, (200, 6)).astype(float)
    x[0] = 1.0  # every value tied: tau undefined
    ours = kendall_tau_b(x, y)
    reference = np.array([kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])
    assert np.isnan(ours[0])
    assert np.isnan(reference[0])
    assert ours[1:] == pytest.approx(reference[1:], abs=1e-12)


def test_rank_agreement_renders_tau_interval_and_ties_in_every_format() -> None:
    from realrecall.calibrate.report import render

    figures = [(498, 246), (498, 239), (350, 120), (420, 180), (470, 210)]
    report = calibrate(systems_with(figures, n_synthetic=500, n_real=300), metric="recall@10", by=[])
    agreement = report.rank_agreement
    assert agreement is not None
    assert agreement.tau_interval is not None
    ci = f"95% CI {agreement.tau_interval.low:+.2f} to {agreement.tau_interval.high:+.2f}"
    for form in ("markdown", "html"):
        text = render(report, form)
        assert ci in text
        assert "tied on synthetic" in text
        assert "bm25-nostem" in text
    data = json.loads(render(report, "json"))["rank_agreement"]
    assert data["tau_ci"] == [agreement.tau_interval.low, agreement.tau_interval.high]
    assert data["synthetic_ties"] == [["bm25", "bm25-nostem"]]
    assert data["systems"][0]["synthetic_ci"] is not None
    from rich.console import Console

    from realrecall.calibrate.report import report_table

    console = Console(width=200, record=True)
    console.print(report_table(report))
    table = console.export_text()
    assert ci in table
    assert "tied on synthetic" in table

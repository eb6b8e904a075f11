"""Diagnostics (length, overlap, exact match, mix), rank agreement and the answer grid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from calibrate.results_builder import per_query, ranks_set, results_document
from realrecall.calibrate import answer_grid, calibrate, load_answers
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
        for i in range(3)
    ]  # fmt: skip
    agreement = calibrate(documents).rank_agreement
    assert agreement is not None
    assert "On the real set the systems lie within 0.050 of each other" in agreement.advice
    assert "that order is mostly chance" in agreement.advice

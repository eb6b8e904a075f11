"""calibrate() on hand-built results whose real, synthetic and calibrated figures are worked out by hand."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime

import pytest
from statsmodels.stats.proportion import proportion_confint

from calibrate.results_builder import per_query, ranks_set, results_document
from realrecall.calibrate import calibrate
from realrecall.errors import GateFailed, InputError
from realrecall.labels import default_type_rules

NOW = datetime(2026, 12, 2, 18, 0, tzinfo=UTC)


def hand_document() -> dict:
    """Real: lookup 3/4, howto 1/2 (4/6 overall). Synthetic: lookup 9/10, howto 4/5, compare 2/2 (15/17)."""
    real = ranks_set("real", 3, 1, prefix="rl", type="lookup") + ranks_set(
        "real", 1, 1, prefix="rh", type="howto"
    )
    synthetic = (
        ranks_set("synthetic", 9, 1, prefix="sl", type="lookup")
        + ranks_set("synthetic", 4, 1, prefix="sh", type="howto")
        + ranks_set("synthetic", 2, 0, prefix="sc", type="compare")
    )
    return results_document([("synthetic_set", synthetic), ("real_set", real)])


def test_real_synthetic_and_gap_match_the_hand_computed_figures() -> None:
    report = calibrate(hand_document(), now=NOW)
    overall = report.overall("recall@10")
    assert overall.real.value == pytest.approx(4 / 6)
    assert overall.synthetic.value == pytest.approx(15 / 17)
    assert overall.gap == pytest.approx(15 / 17 - 4 / 6)
    assert (overall.n_real, overall.n_synthetic) == (6, 17)
    low, high = proportion_confint(4, 6, alpha=0.05, method="wilson")
    assert (overall.real.interval.low, overall.real.interval.high) == pytest.approx((low, high))
    lookup = next(g for g in report.slices() if g.field == "type" and g.value == "lookup")
    assert (lookup.real.value, lookup.synthetic.value) == pytest.approx((0.75, 0.9))
    assert lookup.gap == pytest.approx(0.15)


def test_headline_quotes_the_real_figure_and_says_the_real_set_is_too_small() -> None:
    report = calibrate(hand_document(), now=NOW)
    low, high = proportion_confint(4, 6, alpha=0.05, method="wilson")
    assert report.headline.text.startswith(
        f"Quote real recall@10 = 0.67 (95% CI {low:.2f}-{high:.2f}, n=6). "
        "Synthetic 0.88 overstates it by 0.22."
    )
    assert "too small" in report.headline.text
    assert f"about {report.overall().more_real_needed} more real questions needed" in report.headline.text
    assert report.overall().more_real_needed >= 24  # at least up to 30 queries


def test_headline_of_a_large_real_set_has_no_size_warning() -> None:
    real = ranks_set("real", 68, 32, prefix="r") + ranks_set("real", 68, 32, prefix="q")
    synthetic = ranks_set("synthetic", 188, 12, prefix="s")
    report = calibrate(results_document([("s", synthetic), ("r", real)]), now=NOW)
    assert report.headline.text.endswith("Synthetic 0.94 overstates it by 0.26.")
    assert report.overall().more_real_needed == 0


def test_synthetic_below_real_is_said_to_understate() -> None:
    real = ranks_set("real", 40, 0, prefix="r")
    synthetic = ranks_set("synthetic", 30, 10, prefix="s")
    report = calibrate(results_document([("s", synthetic), ("r", real)]), now=NOW)
    assert "Synthetic 0.75 understates it by 0.25." in report.headline.text


def test_real_set_missing_a_type_is_reported_not_crashed() -> None:
    report = calibrate(hand_document(), now=NOW)
    compare = next(g for g in report.slices() if g.value == "compare")
    assert compare.n_real == 0
    assert compare.n_synthetic == 2
    assert math.isnan(compare.gap)
    assert any("no real queries" in note for note in compare.notes)
    assert any("type=compare" in warning for warning in report.warnings)


def test_single_query_slice_has_a_figure_and_a_note() -> None:
    document = hand_document()
    document["gold_sets"][1]["per_query"].append(
        per_query("rde", "real", rank=2, type="lookup", language="de")
    )
    report = calibrate(document, metric="mrr@10", now=NOW)
    german = next(g for g in report.slices() if g.field == "language" and g.value == "de")
    assert german.n_real == 1
    assert german.real.value == 0.5
    assert not german.real.interval.defined  # one reciprocal rank: nothing to resample
    assert math.isnan(german.gap)  # no German synthetic query
    assert any("only 1 real query" in note for note in german.notes)


def test_slice_with_missing_value_is_its_own_slice() -> None:
    document = results_document(
        [("r", [per_query("a", "real", rank=1, product=None), per_query("b", "real", rank=1, product="x")])]
    )
    report = calibrate(document, now=NOW)
    values = [g.value for g in report.slices() if g.field == "product"]
    assert values == ["x", None]


def test_a_query_without_a_type_or_form_is_sliced_by_the_ones_the_rules_give_its_text() -> None:
    # evaluate writes a query's own labels only; the rules' are read when a slice or stratum asks.
    rules = default_type_rules()
    texts = {"a": "why does sync fail?", "b": "sync settings", "c": "export notes"}
    document = results_document(
        [("r", [per_query(qid, "real", rank=1, query=text) for qid, text in texts.items()]
               + [per_query("d", "real", rank=1, type="mine", form="chat", query="why does sync fail?")])]
    )  # fmt: skip
    report = calibrate(document, now=NOW)
    slices = {(g.field, g.value): g.n_real for g in report.slices() if g.field in ("type", "form")}
    expected: Counter[tuple[str, str]] = Counter({("type", "mine"): 1, ("form", "chat"): 1})
    expected.update(("type", rules.classify(text)[0]) for text in texts.values())
    expected.update(("form", rules.classify_form(text)[0]) for text in texts.values())
    assert slices == expected
    assert report.calibrated is not None
    assert report.calibrated.by == "type"


def test_calibrated_estimate_of_well_covered_strata_equals_the_real_mean() -> None:
    # Every stratum holds at least MIN_REAL real queries: each is measured, nothing is carried over.
    real = ranks_set("real", 9, 3, prefix="rl", type="lookup") + ranks_set(
        "real", 5, 5, prefix="rh", type="howto"
    )
    synthetic = ranks_set("synthetic", 11, 1, prefix="sl", type="lookup") + ranks_set(
        "synthetic", 9, 1, prefix="sh", type="howto"
    )
    report = calibrate(results_document([("s", synthetic), ("r", real)]), now=NOW)
    calibrated = report.calibrated
    assert calibrated is not None
    assert calibrated.by == "type"
    assert calibrated.value == pytest.approx(14 / 22)
    assert [s.source for s in calibrated.strata] == ["measured", "measured"]
    assert calibrated.interval.low <= calibrated.value <= calibrated.interval.high
    assert calibrated.text.endswith("measured on real questions in every stratum.")
    assert calibrated.calibrated_on == "2026-11-30T10:00:00+00:00"
    assert calibrated.age_days == 2
    assert not calibrated.stale


def test_thinly_covered_strata_keep_their_real_figures() -> None:
    report = calibrate(hand_document(), now=NOW)  # lookup 3/4 real, howto 1/2 real: both thin
    calibrated = report.calibrated
    assert calibrated is not None
    sources = {s.value: (s.source, s.corrected) for s in calibrated.strata}
    assert sources["lookup"] == ("measured", 0.75)
    assert sources["howto"] == ("measured", 0.5)
    assert sources["compare"][0] == "predicted"
    assert 0.0 <= calibrated.interval.low <= calibrated.value <= calibrated.interval.high <= 1.0
    assert "NOT measured" in calibrated.text


def test_calibrated_estimate_after_regeneration_keeps_measured_strata_and_estimates_new_ones() -> None:
    # Calibration: lookup measured on 12 real queries; the regenerated set adds a stratum (news) the
    # real set never covered. One measured stratum validates no model: news is predicted by the pooled
    # real figure (lookup's own mean), with the assumed spread.
    calibration = results_document(
        [("old", ranks_set("synthetic", 11, 1, prefix="o", type="lookup")),
         ("real", ranks_set("real", 9, 3, prefix="r", type="lookup"))]
    )  # fmt: skip
    regenerated = ranks_set("synthetic", 10, 2, prefix="n", type="lookup") + ranks_set(
        "synthetic", 8, 4, prefix="m", type="news"
    )
    report = calibrate(results_document([("new", regenerated)]), calibrate_on=calibration, now=NOW)
    calibrated = report.calibrated
    assert calibrated is not None
    lookup, news = calibrated.strata
    assert (lookup.source, lookup.corrected) == ("measured", pytest.approx(0.75))
    assert news.source == "predicted"
    assert news.corrected == pytest.approx(9 / 12)
    assert [s.weight for s in calibrated.strata] == pytest.approx([0.5, 0.5])  # news: its synthetic share
    assert 0.0 <= calibrated.interval.low < calibrated.value < calibrated.interval.high <= 1.0
    assert report.headline.text.startswith("Not measured in these results")
    assert "the real set of 2026-11-30" in report.headline.text
    assert "spread assumed 1.00 logit" in calibrated.text  # one stratum cannot measure it


def test_stale_calibration_is_flagged_and_real_date_overrides_the_file_date() -> None:
    report = calibrate(hand_document(), real_date="2026-06-01", max_age_days=90, now=NOW)
    assert report.calibrated is not None
    assert report.calibrated.stale
    assert report.calibrated.age_days == 184
    assert any("stale" in warning for warning in report.warnings)


def test_fail_under_gate_fails_on_the_real_figure() -> None:
    report = calibrate(hand_document(), fail_under={"recall@10": 0.7}, now=NOW)
    with pytest.raises(
        GateFailed, match=r"real recall@10 = 0.667 \(95% CI 0.300-0.903\); the point is under"
    ):
        report.check_gates()


def test_max_gap_gate_fails_when_synthetic_overstates_by_more() -> None:
    report = calibrate(hand_document(), max_gap=0.15, fail_under={"recall@10": 0.5}, now=NOW)
    assert [g.passed for g in report.gates] == [True, False]
    with pytest.raises(
        GateFailed, match=r"overstates the real figure by 0.216 \(95% CI .*\); the point is over"
    ):
        report.check_gates()


def test_gates_within_bounds_pass() -> None:
    report = calibrate(hand_document(), max_gap=0.3, fail_under={"recall@10": 0.6}, now=NOW)
    report.check_gates()
    assert all(g.passed for g in report.gates)


def test_unknown_metric_names_the_choices() -> None:
    with pytest.raises(InputError, match="choose from recall@1, recall@5, recall@10, mrr@10"):
        calibrate(hand_document(), metric="ndcg@10")


def test_results_of_one_retriever_in_two_files_merge(write_results) -> None:
    document = hand_document()
    synthetic_only = results_document([("s", document["gold_sets"][0]["per_query"])])
    real_only = results_document([("r", document["gold_sets"][1]["per_query"])])
    report = calibrate([write_results(synthetic_only), write_results(real_only)], now=NOW)
    assert (report.overall().n_real, report.overall().n_synthetic) == (6, 17)
    assert report.rank_agreement is None


def test_an_unknown_calibrate_by_field_is_warned_not_silently_one_stratum() -> None:
    report = calibrate(hand_document(), calibrate_by="tpye", now=NOW)
    assert report.calibrated is not None
    assert report.calibrated.by is None
    assert (
        "--calibrate-by 'tpye': no query in the results has this field, so the calibrated estimate uses one "
        "stratum (fields: type, language, form)"
    ) in report.warnings
    assert not any("calibrate-by" in w for w in calibrate(hand_document(), now=NOW).warnings)


def test_slicing_by_a_field_the_results_lack_is_warned() -> None:
    report = calibrate(hand_document(), by=["source", "type"], now=NOW)
    assert any(w.startswith("--by 'source': no query in the results has this field") for w in report.warnings)
    assert not any(w.startswith("--by 'type'") for w in report.warnings)


def test_evaluate_warnings_in_the_results_reach_every_report_format() -> None:
    from realrecall.calibrate.report import render

    document = hand_document() | {"warnings": ["real_set: 229 gold passage ids are not in the corpus [/]"]}
    report = calibrate(document, now=NOW)
    assert report.warnings[0] == "real_set: 229 gold passage ids are not in the corpus [/]"
    for fmt in ("markdown", "json", "html"):
        assert "229 gold passage ids are not in the corpus" in render(report, fmt), fmt


def test_malformed_warnings_in_the_results_are_an_input_error() -> None:
    with pytest.raises(InputError, match='"warnings" must be a list of strings'):
        calibrate(hand_document() | {"warnings": "oops"}, now=NOW)


@pytest.mark.parametrize(
    ("right", "ranks"), [((False, False), (3, None)), ((False,), (None,)), ((False,), (2,))]
)
def test_every_answer_verdict_that_names_a_cause_states_its_k(right: tuple[bool, ...], ranks: tuple) -> None:
    from realrecall.calibrate import answer_grid, load_results

    records = load_results(
        results_document([("r", [per_query(f"q{i}", "real", rank=rank) for i, rank in enumerate(ranks)])])
    ).queries
    grid = answer_grid(records, {f"q{i}": label for i, label in enumerate(right)}, k=5)
    assert "top 5" in grid.verdict


def test_a_stratum_field_no_real_question_has_is_dropped_with_a_warning_not_called_unmeasured() -> None:
    # Issue 30: --calibrate-by language on a BEIR real set (no language) against synthetic questions in
    # en: every real question sat in a stratum of its own with no traffic share, and the calibrated
    # figure said 0% of traffic was measured although the real set is all of it.
    document = results_document(
        [("real", ranks_set("real", 24, 6, prefix="r", language=None)),
         ("synthetic", ranks_set("synthetic", 28, 2, prefix="s", language="en"))]
    )  # fmt: skip
    report = calibrate(document, calibrate_by="language", now=NOW)
    assert report.calibrated is not None
    assert report.calibrated.by is None
    assert report.calibrated.value == report.overall().real.value == 0.8
    assert "measured on real questions in every stratum" in report.calibrated.text
    assert any("--calibrate-by 'language': no real question has this field" in w for w in report.warnings)
    # A field the real set has stratifies as before.
    by_type = calibrate(document, calibrate_by="type", now=NOW)
    assert by_type.calibrated is not None
    assert by_type.calibrated.by == "type"
    assert not any("no real question has this field" in w for w in by_type.warnings)

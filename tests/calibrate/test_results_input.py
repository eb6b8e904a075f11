"""Reading results.json: what counts as a slice field, what is an input error, one-sided sets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import realrecall.calibrate as calibrate_package
from calibrate.results_builder import per_query, ranks_set, results_document
from realrecall.calibrate import calibrate, load_results
from realrecall.calibrate.settings import CalibrateSettings
from realrecall.errors import InputError, SettingError
from realrecall.settings import settings_from


def test_public_names_are_all_exported_and_resolve() -> None:
    # The package exports lazily (numpy and scipy load on first use): every name it lists resolves.
    for name in calibrate_package.__all__:
        assert getattr(calibrate_package, name) is not None
    assert set(calibrate_package.__all__) <= set(dir(calibrate_package))


def test_extra_per_query_fields_become_slice_fields_and_top_does_not() -> None:
    record = per_query("q1", "real", rank=1, type="howto", product="sync", top=["p1", "p2"])
    results = load_results(results_document([("r", [record])]))
    assert results.slice_fields() == ("type", "language", "form", "product")  # a form: the rules'


def test_origin_comes_from_the_gold_set_when_the_record_has_none() -> None:
    document = results_document([("r", [per_query("q1", "real", rank=1)])])
    del document["gold_sets"][0]["per_query"][0]["origin"]
    assert load_results(document).queries[0].origin == "real"


def test_record_without_any_origin_is_an_input_error_naming_the_query(tmp_path: Path) -> None:
    record = per_query("q1", "real", rank=1)
    record["origin"] = "human"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results_document([("r", [record])])), encoding="utf-8")
    with pytest.raises(InputError, match=r"results.json: query 'q1' of gold set 'r' has origin 'human'"):
        load_results(path)


def test_results_without_per_query_values_say_to_rerun_evaluate() -> None:
    document = results_document([("r", [per_query("q1", "real", rank=1)])])
    del document["gold_sets"][0]["per_query"]
    with pytest.raises(InputError, match="calibrate needs per-query values"):
        calibrate(document)


def test_malformed_results_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"gold_sets": [\n  oops\n]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"results.json:2: malformed JSON"):
        load_results(path)


def test_synthetic_only_results_say_there_is_no_real_figure_to_quote() -> None:
    report = calibrate(results_document([("s", ranks_set("synthetic", 9, 1, prefix="s"))]))
    assert report.headline.text.startswith("No real queries: there is no real recall@10 to quote.")
    assert report.calibrated is None
    assert report.diagnostics.real.n == 0


def test_real_only_results_quote_the_real_figure_without_a_gap() -> None:
    report = calibrate(results_document([("r", ranks_set("real", 30, 10, prefix="r"))]))
    assert report.headline.text.startswith("Quote real recall@10 = 0.75")
    assert "No synthetic queries to compare it with." in report.headline.text
    assert report.calibrated is not None
    assert report.calibrated.value == pytest.approx(0.75)


def test_slicing_by_a_field_no_query_has_gives_one_missing_slice() -> None:
    document = results_document(
        [("s", ranks_set("synthetic", 3, 1, prefix="s")), ("r", ranks_set("real", 2, 2, prefix="r"))]
    )
    report = calibrate(document, by=["product"])
    slices = report.slices()
    assert [(g.field, g.value, g.n_real, g.n_synthetic) for g in slices] == [("product", None, 4, 4)]


def test_retrievers_of_one_name_are_labelled_by_what_differs_in_their_descriptions() -> None:
    from realrecall.evaluate.results import distinct_labels

    def described(description: str):
        document = results_document([("r", [per_query("q1", "real", rank=1)])], retriever="bm25")
        document["retriever"]["description"] = description
        return load_results(document)

    first = described("bm25s k1=0.9 b=0.4 stemmer=english over 240 chunks")
    second = described("bm25s k1=1.5 b=0.75 stemmer=english over 240 chunks")
    assert distinct_labels([first, second]) == ["bm25 k1=0.9 b=0.4", "bm25 k1=1.5 b=0.75"]
    assert distinct_labels([first, first]) == ["bm25 #1", "bm25 #2"]


def test_one_retriever_over_two_chunkings_is_labelled_by_the_corpus_file() -> None:
    from realrecall.evaluate.results import distinct_labels

    def over(corpus: str):
        document = results_document([("r", [per_query("q1", "real", rank=1)])], retriever="bm25")
        document["corpus"] = {"path": f"/data/{corpus}", "chunks": 240}
        return load_results(document)

    assert distinct_labels([over("chunks-256.jsonl"), over("chunks-512.jsonl")]) == [
        "bm25 on chunks-256.jsonl",
        "bm25 on chunks-512.jsonl",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"confidence": 1.5}, "confidence must be between 0 and 1"),
        ({"n_resamples": 10}, "n_resamples must be at least 100 for an interval, got 10"),
        ({"n_resamples": 10**12}, "n_resamples must be at most 1000000"),
        ({"seed": -1}, "seed must be a whole number >= 0, got -1"),
        ({"max_age_days": -1}, "max_age_days must be a number of 0 or more, got -1.0"),
        ({"max_age_days": float("nan")}, "max_age_days must be a number or none, got nan"),
        ({"max_gap": float("nan")}, "max_gap must be a number or none, got nan"),
        ({"max_gap": -0.1}, "max_gap must be a number of 0 or more, got -0.1"),
        ({"fail_under": {"recall@10": float("inf")}}, "fail_under of 'recall@10' must be a number, got inf"),
        ({"answer_k": 0, "answers": {"r0": True}}, "answer_k must be a whole number >= 1, got 0"),
    ],
)
def test_nonsense_settings_are_input_errors(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        calibrate(results_document([("r", ranks_set("real", 1, 1, prefix="r"))]), **options)


def test_per_query_record_without_metrics_is_an_input_error() -> None:
    document = results_document([("r", [per_query("q1", "real", rank=1)])])
    document["gold_sets"][0]["per_query"][0]["metrics"] = [1.0]
    with pytest.raises(InputError, match="query 'q1' of gold set 'r' has no metrics object"):
        load_results(document)


def test_a_field_with_a_value_per_query_is_not_sliced_unless_asked() -> None:
    records = [per_query(f"q{i}", "real", rank=1, ticket=f"T-{i}", type="lookup") for i in range(60)]
    report = calibrate(results_document([("r", records)]))
    assert "ticket" not in report.slice_fields
    assert any("field 'ticket' has 60 values over 60 queries: not sliced" in w for w in report.warnings)
    forced = calibrate(results_document([("r", records)]), by=["ticket"])
    assert len(forced.slices()) == 60


def test_bookkeeping_fields_are_never_default_slices_and_user_fields_are() -> None:
    real = [
        per_query(f"r{i}", "real", rank=1 + i % 3, type=("lookup", "howto")[i % 2],
                  product=("a", "b", "c")[i % 3], imported_from="tickets.csv", imported_rows=[i + 2],
                  language_detected=(0.91, 0.42, 0.77)[i % 3], type_rule=("howto", "default")[i % 2])
        for i in range(40)
    ]  # fmt: skip
    synthetic = [
        per_query(f"s{i}", "synthetic", rank=1, type=("lookup", "howto")[i % 2], product=("a", "b")[i % 2],
                  inclusion_probability=(0.1, 0.25)[i % 2], provenance={"backend": "extractive"})
        for i in range(40)
    ]  # fmt: skip
    report = calibrate(results_document([("real", real), ("synthetic", synthetic)]), n_resamples=200)
    assert set(report.slice_fields) == {"type", "product"}
    for name in ("language_detected", "type_rule", "inclusion_probability", "imported_from"):
        assert calibrate(results_document([("real", real)]), by=[name], n_resamples=200).slices()


def test_a_field_with_a_value_for_every_two_queries_is_not_a_default_slice() -> None:
    # 20 queries, 10 values of "note" (slices of two queries), 4 values of "team".
    records = [
        per_query(f"q{i}", "real", rank=1, type="lookup", note=f"n{i // 2}", team=f"t{i % 4}")
        for i in range(20)
    ]
    report = calibrate(results_document([("r", records)]), n_resamples=200)
    assert "team" in report.slice_fields
    assert "note" not in report.slice_fields
    assert any("field 'note' has 10 values over 20 queries: not sliced" in w for w in report.warnings)


def test_a_field_that_splits_neither_set_is_not_a_default_slice() -> None:
    # One table name on every real query and none on the synthetic ones: its slices are the two sets.
    real = ranks_set("real", 5, 5, prefix="r", source="tickets.csv", type="lookup")
    synthetic = ranks_set("synthetic", 8, 2, prefix="s", type="lookup")
    report = calibrate(results_document([("real", real), ("synthetic", synthetic)]), n_resamples=200)
    assert "source" not in report.slice_fields
    mixed = [*real[:5], *ranks_set("real", 2, 3, prefix="x", source="chat.csv", type="lookup")]
    assert "source" in calibrate(results_document([("real", mixed)]), n_resamples=200).slice_fields


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("recall@10=nan", "--fail-under of 'recall@10' must be a number, got nan"),
        ("recall@10=inf", "--fail-under of 'recall@10' must be a number, got inf"),
        ("recall@10=-inf", "--fail-under of 'recall@10' must be a number, got -inf"),
        ("recall@10", "--fail-under takes KEY=VALUE items, got 'recall@10'"),
        ("=0.5", "--fail-under takes KEY=VALUE items, got '=0.5'"),
        ("recall@10=high", "--fail-under of 'recall@10' must be a number, got 'high'"),
    ],
)
def test_a_gate_that_is_not_metric_equals_a_finite_number_is_refused(text: str, message: str) -> None:
    with pytest.raises(SettingError) as caught:
        settings_from(CalibrateSettings, {"fail_under": [text]}, text=True)
    assert str(caught.value.labelled("--fail-under")).startswith(message)


def _broken(change) -> dict:  # type: ignore[no-untyped-def]
    document = results_document([("r", ranks_set("real", 2, 1, prefix="r"))])
    change(document)
    return document


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["gold_sets"][0].update(origins={"real": "many"}),
            "origins of gold set 'r' must be an object of counts",
        ),
        (lambda d: d["gold_sets"][0].update(n_queries="abc"), "n_queries of gold set 'r' must be a count"),
        (lambda d: d.update(metrics="recall@10"), '"metrics" must be a list of metric names'),
        (lambda d: d.update(retriever=["bm25"]), '"retriever" must be a string, got list'),
        (lambda d: d.update(corpus={"path": 12}), "corpus path must be a string, got int"),
        (lambda d: d.update(corpus="c.jsonl"), '"corpus" must be an object'),
        (
            lambda d: d["gold_sets"][0].update(modified=12),
            "modified of gold set 'r' must be a string, got int",
        ),
        (
            lambda d: d["gold_sets"][0]["per_query"][0].update(query_id=None),
            "a query of gold set 'r' has no query_id",
        ),
        (
            lambda d: d["gold_sets"][0]["per_query"][0].update(first_relevant_rank=float("inf")),
            "first_relevant_rank of query 'r0' of gold set 'r' must be a rank from 1 or null, got inf",
        ),
        (
            lambda d: d["gold_sets"][0]["per_query"].append(d["gold_sets"][0]["per_query"][0]),
            "query 'r0' of gold set 'r' appears twice",
        ),
    ],
)
def test_a_corrupt_results_file_is_an_input_error_not_a_crash(change, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=re.escape(message)):
        load_results(_broken(change))


def test_the_same_results_file_twice_is_refused_instead_of_counting_every_query_twice(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(results_document([("r", ranks_set("real", 2, 1, prefix="r"))])), encoding="utf-8"
    )
    with pytest.raises(
        InputError, match=r"query 'r0' of gold set 'r' is in two results files of the same retriever"
    ):
        calibrate([path, path])


@pytest.mark.parametrize(
    ("results", "options", "message"),
    [
        (5, {}, "results.json paths, parsed results.json mappings or EvaluationResult, got int"),
        ([5], {}, "got int"),
        (None, {"confidence": "0.9"}, "confidence must be a number, got '0.9'"),
        (None, {"n_resamples": 1000.5}, "n_resamples must be a whole number, got 1000.5"),
        (None, {"real_date": 20261130}, "real_date must be text or none, got 20261130"),
        (None, {"real_date": "last week"}, "real_date must be an ISO date, got 'last week'"),
        (None, {"answers": {"r0": "yes"}}, "the answer label of query 'r0' is 'yes', not true or false"),
    ],
)
def test_wrong_arguments_from_python_are_input_errors_not_type_errors(results, options, message) -> None:  # type: ignore[no-untyped-def]
    document = results_document([("r", ranks_set("real", 2, 1, prefix="r"))])
    with pytest.raises(InputError, match=re.escape(message)):
        calibrate(document if results is None else results, **options)


def test_by_given_as_one_string_is_one_field() -> None:
    report = calibrate(
        results_document([("r", ranks_set("real", 2, 1, prefix="r", type="lookup"))]), by="type"
    )
    assert report.slice_fields == ("type",)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x80\x81{}", "results.json:1: not valid UTF-8 (byte 0x80"),
        ('{"gold_sets": "é"}'.encode("latin-1"), "byte 0xe9"),
    ],
)
def test_a_results_file_that_is_not_utf8_is_one_line_naming_the_line(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=re.escape(expected)):
        load_results(path)


@pytest.mark.parametrize("value", ["high", True, [0.5], float("nan")])
def test_a_metric_value_that_is_not_a_number_is_named_not_dropped(value: object) -> None:
    document = results_document([("r", ranks_set("real", 2, 1, prefix="r"))])
    document["gold_sets"][0]["per_query"][0]["metrics"]["recall@10"] = value
    with pytest.raises(InputError, match=r"recall@10 of query 'r0' of gold set 'r' is .*, not a number"):
        load_results(document)


def test_a_null_metric_value_is_left_out_of_that_metric() -> None:
    document = results_document([("r", ranks_set("real", 2, 1, prefix="r"))])
    document["gold_sets"][0]["per_query"][0]["metrics"]["recall@10"] = None
    assert "recall@10" not in load_results(document).queries[0].metrics


def test_a_corpus_the_user_names_must_exist_while_one_named_in_the_results_may_not(tmp_path: Path) -> None:
    document = results_document([("r", ranks_set("real", 2, 1, prefix="r"))], corpus_path="gone.jsonl")
    with pytest.raises(InputError, match=r"nothere\.jsonl: file not found"):
        calibrate(document, corpus=tmp_path / "nothere.jsonl")
    report = calibrate(document)
    assert any("corpus gone.jsonl (named in the results) not found" in w for w in report.warnings)

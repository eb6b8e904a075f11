"""results.json's text: indented outline, the per-query values as columns (one line each, C-encoded),
read back as the records evaluate made."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.evaluate import evaluate, load_results, write_results
from realrecall.evaluate.results import PER_QUERY_COLUMNS
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run


def _result():
    gold = GoldSet(
        tuple(
            GoldQuery(f"q{i}", f"question {i} \u00e9 \"quoted\" realrecall-per-query-0", {f"p{i % 3}": 1},
                      "real", "lookup", "en", metadata={"ticket": {"id": i}})
            for i in range(5)
        ),
        name="real",
    )  # fmt: skip
    empty = GoldSet((GoldQuery("x", "unjudged", {"p9": 0}, "real"),), name="other")
    run = Run.from_lists({f"q{i}": ["p0", "p1", "p2"] for i in range(5)} | {"x": ["p0"]}, name="r")
    return evaluate([gold, empty], run=run, k=(1, 3))


def test_per_query_values_are_columns_one_a_line_and_read_back_as_the_records(tmp_path: Path):
    result = _result()
    path = tmp_path / "results.json"
    write_results(result, path)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    table = data["gold_sets"][0]["per_query"]
    assert list(table) == [*PER_QUERY_COLUMNS, "metrics"]
    assert table["query_id"] == ["q0", "q1", "q2", "q3", "q4"]
    assert [fields["ticket"] for fields in table["fields"]] == [{"id": i} for i in range(5)]
    assert table["metrics"]["recall@1"] == [q.metrics["recall@1"] for q in result.gold_sets[0].queries]
    column_lines = [line for line in text.splitlines() if line.lstrip().startswith('"query_id": [')]
    assert len(column_lines) == 2  # one line a column, per gold set
    assert '"per_query": {' in text
    assert "\n  " in text
    assert "\u00e9" in text  # text kept readable (not \\u-escaped)
    # The placeholder-like question text is data, not the writer's marker.
    assert table["query"][0] == 'question 0 \u00e9 "quoted" realrecall-per-query-0'
    assert load_results(path).to_dict() == result.to_dict()
    # The records form (to_dict, earlier files) reads the same.
    assert load_results(result.to_dict()).to_dict() == result.to_dict()


def test_columns_are_the_same_written_a_block_of_values_at_a_time(tmp_path: Path, monkeypatch):
    import realrecall.evaluate.results.columns as results

    result = _result()
    write_results(result, tmp_path / "whole.json")
    monkeypatch.setattr(results, "_VALUES_PER_CHUNK", 2)  # 5 queries: blocks of 2, 2 and 1
    write_results(result, tmp_path / "blocks.json")
    assert (tmp_path / "blocks.json").read_text() == (tmp_path / "whole.json").read_text()


def test_a_gold_set_with_no_query_writes_empty_columns(tmp_path: Path):
    result = _result()
    empty = replace(result, gold_sets=(replace(result.gold_sets[1], queries=()),))
    write_results(empty, tmp_path / "results.json")
    table = json.loads((tmp_path / "results.json").read_text())["gold_sets"][0]["per_query"]
    assert table == {**{name: [] for name in PER_QUERY_COLUMNS}, "metrics": {}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.update(extra=[1] * 5), "unknown column 'extra'"),
        (lambda t: t.pop("query_id"), 'needs a "query_id" column'),
        (lambda t: t.update(metrics=[]), 'a "metrics" object of columns'),
        (lambda t: t.update(gold="p0"), "column 'gold' must be a list"),
        (lambda t: t["origin"].pop(), "column 'origin' has 4 values for 5 query ids"),
        (lambda t: t["metrics"]["recall@1"].append(1.0), "column 'metrics.recall@1' has 6 values"),
        (lambda t: t["fields"].__setitem__(0, [1]), 'each "fields" value must be an object'),
        (lambda t: t["metrics"]["recall@1"].__setitem__(0, "high"), "recall@1"),
        (lambda t: t["query_id"].__setitem__(1, "q0"), "appears twice"),
    ],
)
def test_a_malformed_table_is_an_error_naming_the_file(tmp_path: Path, change, message):
    path = tmp_path / "results.json"
    write_results(_result(), path)
    data = json.loads(path.read_text())
    change(data["gold_sets"][0]["per_query"])
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=re.escape(message)) as error:
        load_results(path)
    assert str(path) in str(error.value)


def test_a_null_metric_is_one_the_query_lacks(tmp_path: Path):
    data = json.loads(_written(tmp_path))
    data["gold_sets"][0]["per_query"]["metrics"]["recall@3"][2] = None
    query = load_results(data).gold_sets[0].queries[2]
    assert "recall@3" not in query.metrics
    assert "recall@1" in query.metrics


def _written(tmp_path: Path) -> str:
    write_results(_result(), tmp_path / "results.json")
    return (tmp_path / "results.json").read_text()


@pytest.mark.parametrize("by", [(), ("type",), ("source",)])
def test_queries_with_and_without_fields_of_their_own_read_back_as_evaluate_made_them(tmp_path: Path, by):
    # No metadata, no provenance, no text (a qrels query), or some: the columns' quick path for a
    # query with no field of its own gives the fields its record gives.
    queries = (
        GoldQuery("bare", "", {"p0": 1, "p1": 0}),
        GoldQuery("asked", "how do I reset it?", {"p1": 2}),
        GoldQuery("tagged", "reset", {"p2": 1}, "real", metadata={"source": "tickets"}),
    )
    result = evaluate(
        GoldSet(queries, name="g"), run=Run.from_lists({"bare": ["p1", "p0"], "asked": ["p1"]}), by=by
    )
    write_results(result, tmp_path / "results.json")
    table = json.loads((tmp_path / "results.json").read_text())["gold_sets"][0]["per_query"]
    assert table["gold"] == [["p0"], ["p1"], ["p2"]]
    assert load_results(tmp_path / "results.json").to_dict() == result.to_dict()


def test_a_table_of_query_ids_and_metrics_alone_is_enough():
    # A table written by another tool may hold only what calibrate needs.
    data = {
        "metrics": ["recall@10"],
        "gold_sets": [
            {
                "name": "real",
                "origins": {"real": 2},
                "overall": {"n": 2, "metrics": {"recall@10": 0.5}},
                "per_query": {"query_id": ["a", "b"], "metrics": {"recall@10": [1.0, 0.0]}},
            }
        ],
    }
    queries = load_results(data).gold_sets[0].queries
    assert [(q.query_id, q.origin, q.metrics, q.gold, q.fields) for q in queries] == [
        ("a", "real", {"recall@10": 1.0}, (), {}),
        ("b", "real", {"recall@10": 0.0}, (), {}),
    ]

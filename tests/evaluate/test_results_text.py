"""results.json's text: indented outline, one per-query record a line (C-encoded), read back the same."""

from __future__ import annotations

import json
from pathlib import Path

from realrecall.evaluate import evaluate, load_results, write_results
from realrecall.evaluate.results import results_text
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


def test_records_are_one_a_line_and_the_file_reads_as_the_indented_one(tmp_path: Path):
    result = _result()
    path = tmp_path / "results.json"
    write_results(result, path)
    text = path.read_text(encoding="utf-8")
    data = result.to_dict()
    assert json.loads(text) == json.loads(json.dumps(data, indent=2, ensure_ascii=False))
    lines = text.splitlines()
    records = [line for line in lines if line.lstrip().startswith('{"query_id"')]
    assert len(records) == 6  # every per-query record is one line
    assert all(json.loads(line.rstrip(",")) for line in records)
    assert '"per_query": [' in text  # the outline is indented
    assert "\u00e9" in text  # text kept readable (not \u-escaped)
    assert load_results(path).to_dict() == data


def test_a_results_mapping_without_records_is_plain_indented_json():
    data = {"gold_sets": [{"name": "g", "per_query": []}], "metrics": ["recall@1"]}
    assert json.loads(results_text(data)) == data
    assert results_text({"a": 1}) == json.dumps({"a": 1}, indent=2) + "\n"

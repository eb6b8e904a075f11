"""Per-query outcomes made on demand (issue 13): evaluate keeps them as columns, results.json streams
them as columns, and the top ids (ranking every query of the run) are computed only for the per-query
file or a caller reading the queries."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from realrecall.evaluate import evaluate, load_results, read_per_query, write_per_query, write_results
from realrecall.evaluate.results import RESERVED_FIELDS, QueryRecords
from realrecall.gold import GoldQuery, GoldSet
from realrecall.provenance import Provenance
from realrecall.runs import Run


def _gold() -> GoldSet:
    queries = [
        GoldQuery(f"q{i}", f"how do I fix error {i}?", {f"p{i % 5}": 1 + i % 2, f"p{9 - i % 5}": 0},
                  "synthetic" if i % 3 else "real", metadata={"source": "tickets", "nested": {"n": i}},
                  provenance=Provenance.from_dict({"backend": "extractive"}) if i % 3 else None)
        for i in (12, 3, 7, 0, 25, 1)
    ]  # fmt: skip
    return GoldSet(tuple(queries), name="mixed")


def _run() -> Run:
    ids = [f"p{j}" for j in range(10)]
    scores = {f"q{i}": {pid: float((j * 7 + i) % 10) for j, pid in enumerate(ids)} for i in (12, 3, 7, 0, 99)}
    return Run.from_scores(scores)


def test_results_json_is_written_from_the_columns_without_ranking_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = evaluate(_gold(), run=_run(), k=(1, 3), by=["source"])
    queries = result.gold_sets[0].queries
    assert isinstance(queries, QueryRecords)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("results.json needs no top ids")

    with monkeypatch.context() as patch:
        patch.setattr(Run, "ranked_many", refuse)
        write_results(result, tmp_path / "results.json")
    written = (tmp_path / "results.json").read_text()
    # The same text as the columns read off every QueryResult give (made now, tops included).
    materialised = replace(result, gold_sets=(replace(result.gold_sets[0], queries=tuple(queries)),))
    write_results(materialised, tmp_path / "materialised.json")
    assert written == (tmp_path / "materialised.json").read_text()
    table = json.loads(written)["gold_sets"][0]["per_query"]
    assert table["query_id"] == ["q12", "q3", "q7", "q0", "q25", "q1"]  # the gold set's order
    records = [q.to_dict(with_top=False) for q in queries]
    assert table["gold"] == [r["gold"] for r in records]
    assert table["first_relevant_rank"] == [r["first_relevant_rank"] for r in records]
    assert table["fields"] == [{k: v for k, v in r.items() if k not in RESERVED_FIELDS} for r in records]
    assert table["fields"][0]["nested"] == {"n": 12}
    assert "provenance" in table["fields"][2]
    assert table["metrics"] == {name: [r["metrics"][name] for r in records] for name in records[0]["metrics"]}
    assert load_results(tmp_path / "results.json").to_dict() == result.to_dict()
    # Read back, they are the queries evaluate returned, but for the top ids results.json leaves out.
    assert load_results(tmp_path / "results.json").gold_sets[0].queries == tuple(
        replace(query, top=()) for query in queries
    )


@pytest.mark.parametrize("by", [(), ("type",)])
def test_queries_with_no_fields_of_their_own_write_the_columns_their_records_give(
    tmp_path: Path, by: tuple[str, ...]
) -> None:
    # TREC and BEIR qrels queries: no metadata, no provenance, so no field (results.json shares one
    # empty record among them); their form is the rules', read when asked for, not written.
    texts = ["", "how do I reset my password?", "password reset", "", "error 42 on login", "why?"]
    numbers = (12, 3, 7, 0, 25, 1)
    queries = (GoldQuery(f"q{i}", text, {f"p{i % 5}": 1}) for i, text in zip(numbers, texts, strict=True))
    gold = GoldSet(tuple(queries), name="qrels")
    result = evaluate(gold, run=_run(), k=(1, 3), by=by)
    queries = result.gold_sets[0].queries
    write_results(result, tmp_path / "results.json")
    materialised = replace(result, gold_sets=(replace(result.gold_sets[0], queries=tuple(queries)),))
    write_results(materialised, tmp_path / "materialised.json")
    written = (tmp_path / "results.json").read_text()
    assert written == (tmp_path / "materialised.json").read_text()
    fields = json.loads(written)["gold_sets"][0]["per_query"]["fields"]
    assert fields == [{k: v for k, v in q.fields.items() if k not in RESERVED_FIELDS} for q in queries]
    assert fields == [{}] * len(texts)
    assert {q.field("form") for q in queries} >= {"keywords", "question"}  # the rules' forms differ


def test_results_json_is_the_same_when_the_columns_are_listed_a_block_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import realrecall.evaluate.results.columns as results

    result = evaluate(_gold(), run=_run(), k=(1, 3), by=["source"])
    write_results(result, tmp_path / "whole.json")
    monkeypatch.setattr(results, "_VALUES_PER_CHUNK", 4)  # 6 queries: a block of 4, then one of 2
    write_results(result, tmp_path / "blocks.json")

    assert (tmp_path / "blocks.json").read_text() == (tmp_path / "whole.json").read_text()


def test_metric_values_follow_each_query_not_the_scoring_order() -> None:
    gold, run = _gold(), _run()
    result = evaluate(gold, run=run, k=(1, 3))
    for query in result.gold_sets[0].queries:
        alone = evaluate(GoldSet((gold[query.query_id],), name="one"), run=run, k=(1, 3))
        assert query.metrics == alone.gold_sets[0].queries[0].metrics
        assert query.first_relevant_rank == alone.gold_sets[0].queries[0].first_relevant_rank
        assert query.top == tuple(run.ranked(query.query_id)[:3])


def test_per_query_file_has_the_top_ids(tmp_path: Path) -> None:
    result = evaluate(_gold(), run=_run(), k=(1, 3))
    assert write_per_query(result, tmp_path / "per_query.jsonl") == 6
    read = read_per_query(tmp_path / "per_query.jsonl")
    assert [r.top for r in read] == [q.top for q in result.gold_sets[0].queries]
    assert read[4].top == ()  # q25 is not in the run


def test_labels_are_columns_beside_the_gold_set_not_a_labelled_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    import realrecall.curate.type_rules as type_rules

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("evaluate copies no query to label it")

    monkeypatch.setattr(type_rules, "label_gold_set", refuse)
    gold = GoldSet(
        (
            GoldQuery("a", "error 500 when uploading", {"p1": 1}),
            GoldQuery("b", "how do I reset my password?", {"p2": 1}, type="lookup"),
            GoldQuery("c", "password reset", {"p3": 1}, metadata={"form": "mine", "team": "x"}),
        ),
        name="unlabelled",
    )
    result = evaluate(gold, run=_run(), k=(1,), by=["type", "form"])
    labelled = [type_rules.label_query(query, record_rule=False) for query in gold]
    queries = result.gold_sets[0].queries
    assert [q.field("type") for q in queries] == [q.type for q in labelled]
    assert [q.field("form") for q in queries] == [q.metadata["form"] for q in labelled]
    assert [q.fields for q in queries] == [dict(q.metadata) for q in gold]  # only the records' own
    slices = {(s.field, s.value): s.n for s in result.gold_sets[0].slices}
    forms = [q.metadata["form"] for q in labelled]
    assert sum(n for (name, _), n in slices.items() if name == "form") == 3
    assert all(slices[("form", form)] == forms.count(form) for form in forms)
    assert slices[("type", "lookup")] == sum(q.type == "lookup" for q in labelled)


def test_a_big_gold_sets_freed_memory_goes_back_between_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The C library keeps freed heap pages: given back after resolving and after scoring a big set,
    # they no longer stack on the peak of the steps that follow (1M queries: ~125 MB while writing).
    # (``give_back_memory`` itself acts only in bulk mode: tests/core/test_bulk.py.)
    import realrecall.evaluate.evaluation as evaluation

    calls: list[int] = []
    monkeypatch.setattr(evaluation, "give_back_memory", lambda: calls.append(1))
    evaluate(_gold(), run=_run(), k=(1, 3))
    assert calls == []  # a small set: nothing to give back, no call paid

    monkeypatch.setattr(evaluation, "_GIVE_BACK_QUERIES", 6)
    evaluate(_gold(), run=_run(), k=(1, 3))
    assert calls == [1, 1]


@pytest.mark.parametrize("lowest", [1, 0, -1])
def test_the_gold_column_is_each_querys_relevant_ids_sorted(tmp_path: Path, lowest: int) -> None:
    # With no grade below 1 (most qrels) the column is each query's judged ids sorted, made in one
    # pass; a grade below 1 anywhere leaves that passage out of its query's list.
    judged = {"q0": {"p9": 2, "p1": 1, "p5": lowest}, "q3": {"p7": 1}, "q7": {"p4": 3, "p0": 1, "p2": 1}}
    gold = GoldSet(tuple(GoldQuery(qid, "", grades) for qid, grades in judged.items()), name="qrels")
    result = evaluate(gold, run=_run(), k=(1, 3))
    write_results(result, tmp_path / "results.json")

    table = json.loads((tmp_path / "results.json").read_text())["gold_sets"][0]["per_query"]
    first = ["p1", "p5", "p9"] if lowest >= 1 else ["p1", "p9"]
    assert table["gold"] == [first, ["p7"], ["p0", "p2", "p4"]]
    assert table["gold"] == [sorted(query.relevant()) for query in gold]

"""evaluate(): overall, sliced and per-query figures of a run or a retriever, and the files it writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate import evaluate, write_per_query, write_results
from realrecall.evaluate.scoring import score
from realrecall.gold import GoldQuery, GoldSet
from realrecall.runs import Run

GOLD = GoldSet(
    (
        GoldQuery("q1", "reset password", {"p1": 1}, "real", "lookup", "en"),
        GoldQuery("q2", "sync stopped", {"p2": 1, "p3": 2}, "real", "troubleshooting", "en"),
        GoldQuery("q3", "Passwort ändern", {"p4": 1}, "real", "lookup", "de"),
        GoldQuery("q4", "no run for me", {"p1": 1}, "real", "conceptual", None),
    ),
    name="tiny",
)
RUN = Run.from_lists(
    {"q1": ["p1", "p2"], "q2": ["p9", "p3", "p2"], "q3": ["p8", "p7", "p6"]}, name="tiny-run"
)


def test_overall_figures_equal_score_on_the_whole_set():
    result = evaluate([GOLD], run=RUN, k=(1, 3), by=("type",))
    (gold_set,) = result.gold_sets
    assert gold_set.overall.n == 4
    assert dict(gold_set.overall.metrics) == score(GOLD, RUN, list(result.metrics))


def test_each_slice_equals_score_on_its_own_queries():
    result = evaluate([GOLD], run=RUN, k=(1, 3), by=("type", "language"))
    slices = {(s.field, s.value): s for s in result.gold_sets[0].slices}
    assert {key: s.n for key, s in slices.items()} == {
        ("type", "lookup"): 2,
        ("type", "troubleshooting"): 1,
        ("type", "conceptual"): 1,
        ("language", "en"): 2,
        ("language", "de"): 1,
        ("language", None): 1,
        # q2 needs two passages: the set is also sliced by how many each query needs.
        ("gold_count", 1): 3,
        ("gold_count", 2): 1,
    }
    lookups = GoldSet(tuple(q for q in GOLD if q.type == "lookup"))
    assert dict(slices[("type", "lookup")].metrics) == score(lookups, RUN, list(result.metrics))


def test_missing_run_queries_score_zero_and_are_reported():
    result = evaluate([GOLD], run=RUN, metrics=["recall@3"])
    (gold_set,) = result.gold_sets
    assert gold_set.missing_run == 1
    assert next(q for q in gold_set.queries if q.query_id == "q4").top == ()
    assert gold_set.overall.metrics["recall@3"] == 0.5
    assert any("1 of 4 queries have no entry in the run" in w for w in result.warnings)


def test_gold_passages_absent_from_the_corpus_are_counted_in_a_warning():
    corpus = Corpus((Chunk("p1", "a"), Chunk("p2", "b"), Chunk("p3", "c")))
    result = evaluate([GOLD], run=RUN, corpus=corpus, metrics=["recall@1"])
    assert result.gold_sets[0].missing_passages == 1
    assert any("1 gold passage ids are not in the corpus" in w for w in result.warnings)


def test_per_query_outcomes_give_first_gold_rank_and_top_ids(tmp_path):
    result = evaluate([GOLD], run=RUN, k=(1, 3))
    queries = {q.query_id: q for q in result.gold_sets[0].queries}
    assert queries["q2"].first_relevant_rank == 2
    assert queries["q3"].first_relevant_rank is None
    assert queries["q2"].top == ("p9", "p3", "p2")
    assert queries["q2"].metrics["recall@1"] == 0.0
    assert queries["q2"].metrics["recall@3"] == 1.0

    path = tmp_path / "pq.jsonl"
    assert write_per_query(result, path) == 4
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[1]["top"] == ["p9", "p3", "p2"]
    assert records[1]["gold"] == ["p2", "p3"]
    assert records[3]["first_relevant_rank"] is None


def test_results_json_holds_figures_counts_and_input_hashes(tmp_path):
    gold_path = tmp_path / "gold.jsonl"
    gold_path.write_text("".join(json.dumps(q.to_record()) + "\n" for q in GOLD))
    from realrecall.gold import load_gold

    result = evaluate([load_gold(gold_path)], run=RUN, k=(1, 3), by=("type",))
    out = tmp_path / "results.json"
    write_results(result, out)
    data = json.loads(out.read_text())
    assert data["retriever"]["name"] == "run"
    assert data["metrics"] == list(result.metrics)
    (gold_set,) = data["gold_sets"]
    assert gold_set["n_queries"] == 4
    assert len(gold_set["sha256"]) == 64
    assert gold_set["origins"] == {"real": 4}
    assert gold_set["overall"]["n"] == 4
    assert {s["value"] for s in gold_set["slices"] if s["field"] == "type"} == {
        "lookup",
        "troubleshooting",
        "conceptual",
    }
    assert {s["value"] for s in gold_set["slices"] if s["field"] == "gold_count"} == {1, 2}  # q2 needs two
    assert gold_set["per_query"]["query_id"] == ["q1", "q2", "q3", "q4"]
    assert gold_set["per_query"]["metrics"]["recall@1"][0] == 1.0


def test_retriever_and_run_are_exclusive():
    with pytest.raises(InputError, match="either a retriever or a run"):
        evaluate([GOLD])


def test_queries_without_text_cannot_be_retrieved():
    class Echo:
        description = "echo"

        def search(self, queries, k):
            return [["p1"] for _ in queries]

    no_text = GoldSet((GoldQuery("q1", "", {"p1": 1}),), name="qrels", path="qrels.txt")
    with pytest.raises(InputError, match="1 queries have no text"):
        evaluate([no_text], retriever=Echo())


def test_a_retriever_is_asked_for_the_deepest_cutoff(tmp_path: Path):
    asked = []

    class Recorder:
        description = "records k"

        def search(self, queries, k):
            asked.append(k)
            return [["p1", "p2"] for _ in queries]

    result = evaluate([GOLD], retriever=Recorder(), k=(1, 5, 20))
    assert asked
    assert set(asked) == {20}
    assert result.retriever == {"name": "Recorder", "description": "records k"}


CORPUS = Corpus(tuple(Chunk(f"p{n}", f"passage {n}") for n in range(1, 10)))


def test_a_retriever_returning_ids_not_in_the_corpus_is_warned_with_count_and_examples():
    from realrecall.evaluate.retrievers import FunctionRetriever

    def store_ids(query: str, k: int) -> list[str]:
        return ["vec-17", "p1", "vec-18"] if query == "reset password" else ["vec-17", "vec-99"]

    result = evaluate([GOLD], corpus=CORPUS, retriever=FunctionRetriever(store_ids), metrics=["recall@3"])
    (warning,) = [w for w in result.warnings if "not in the corpus" in w]
    assert warning == (
        "tiny: the retriever returned 3 ids that are not in the corpus, for 4 of 4 queries "
        "(e.g. 'vec-17', 'vec-18', 'vec-99'); they can never match a gold passage: "
        "return the corpus' chunk ids"
    )
    assert "tiny: the retriever returned" in json.dumps(result.to_dict()["warnings"])


def test_a_run_naming_ids_the_corpus_lacks_is_warned_and_one_within_it_is_not():
    result = evaluate([GOLD], run=RUN, corpus=Corpus((Chunk("p1", "a"), Chunk("p2", "b"), Chunk("p3", "c"))))
    assert any(
        "tiny: the run returned 4 ids that are not in the corpus, for 2 of 4" in w for w in result.warnings
    )
    clean = evaluate([GOLD], run=RUN, corpus=CORPUS)
    assert not any("ids that are not in the corpus" in w for w in clean.warnings)


def test_a_query_without_type_or_form_gets_them_from_the_rules_and_its_own_labels_win():
    # A BEIR or TREC set has no type: without one, no calibration stratum could match a synthetic set.
    bare = GoldSet(
        (
            GoldQuery("q1", "Why does sync fail?", {"p1": 1}),
            GoldQuery("q2", "reset password", {"p2": 1}, type="mine", metadata={"form": "chat"}),
        ),
        name="bare",
    )
    result = evaluate([bare], run=RUN, metrics=["recall@1"], by=("type", "form"))
    first, second = result.gold_sets[0].queries
    assert (first.field("type"), first.field("form")) == ("troubleshooting", "question")
    assert (second.field("type"), second.field("form")) == ("mine", "chat")
    assert (first.type, first.fields) == (None, {})  # the record's own labels: the rules' are not written
    assert "type_rule" not in first.fields  # no rule names: each would be one more slice of the report
    slices = {(s.field, s.value): s.n for s in result.gold_sets[0].slices}
    assert slices == {
        ("type", "mine"): 1,
        ("type", "troubleshooting"): 1,
        ("form", "chat"): 1,
        ("form", "question"): 1,
    }
    assert bare.queries[0].type is None  # the caller's gold set is left as it was


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        ({}, [("conceptual", "keywords")] * 3),  # TREC qrels: one text, no labels; one answer for all
        ({"type": "mine"}, [("conceptual", "keywords"), ("mine", "keywords"), ("conceptual", "keywords")]),
        (
            {"metadata": {"form": "chat"}},
            [("conceptual", "keywords"), ("conceptual", "chat"), ("conceptual", "keywords")],
        ),
    ],
    ids=["no-labels", "one-own-type", "one-own-form"],
)
def test_queries_of_one_text_are_labelled_alike_and_their_own_labels_still_win(own, expected):
    gold = GoldSet(tuple(GoldQuery(f"q{i}", "", {"p1": 1}, **(own if i == 1 else {})) for i in range(3)))
    run = Run.from_scores({"q0": {"p1": 1.0}})
    result = evaluate([gold], run=run, metrics=["recall@1"], by=("type", "form"))
    assert [(query.field("type"), query.field("form")) for query in result.gold_sets[0].queries] == expected


def test_slicing_by_a_field_no_query_has_is_warned_naming_the_fields_present():
    with_source = GoldSet(
        (GoldQuery("q9", "x", {"p1": 1}, "real", metadata={"source": "chat"}),), name="other"
    )
    result = evaluate([GOLD, with_source], run=RUN, metrics=["recall@1"], by=("tpye", "language", "source"))
    assert result.warnings[0] == (
        "no query has the field 'tpye': its only slice is (none) "
        "(fields present: origin, type, language, form, source)"
    )
    assert not any("'language'" in w or "'source'" in w for w in result.warnings)
    assert [(s.field, s.value) for s in result.gold_sets[0].slices if s.field == "tpye"] == [("tpye", None)]


def test_the_same_gold_set_twice_or_two_of_one_name_are_refused(tmp_path):
    path = tmp_path / "gold.jsonl"
    twice = GoldSet(GOLD.queries, name="gold", path=str(path))
    with pytest.raises(InputError, match=r"gold set .*gold\.jsonl is given twice"):
        evaluate(
            [twice, GoldSet(GOLD.queries, name="gold", path=str(tmp_path / "." / "gold.jsonl"))], run=RUN
        )
    other = GoldSet(GOLD.queries, name="gold", path=str(tmp_path / "b" / "gold.jsonl"))
    with pytest.raises(InputError, match="two gold sets are named 'gold'"):
        evaluate([twice, other], run=RUN)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"k": ("a",)}, "k must be a list of whole numbers, got ('a',)"),
        ({"k": (0, 5)}, "k must hold whole numbers >= 1, got [0, 5]"),
        ({"depth": -1}, "depth must be a whole number >= 1, got -1"),
        ({"depth": 0}, "depth must be a whole number >= 1, got 0"),
        ({"corpus": "corpus.jsonl"}, "corpus must be a Corpus, got str; read it with load_corpus(path)"),
        ({"run": {"q1": ["p1"]}}, "run must be a Run, got dict"),
    ],
)
def test_wrong_arguments_from_python_are_input_errors_not_type_errors(arguments, message):
    options = {"run": RUN, **arguments}
    with pytest.raises(InputError, match=re.escape(message)):
        evaluate([GOLD], **options)


def test_wrong_gold_sets_or_retriever_from_python_are_input_errors():
    with pytest.raises(InputError, match="gold sets must be GoldSet objects, got str"):
        evaluate(["gold.jsonl"], run=RUN)
    with pytest.raises(InputError, match="retriever must have a search"):
        evaluate([GOLD], retriever="bm25")


def test_a_single_gold_set_cutoff_slice_field_or_metric_counts_as_a_list_of_one():
    result = evaluate(GOLD, run=RUN, k=3, by="type", metrics="recall@3")
    assert result.metrics == ("recall@3",)
    # gold_count: q2 needs two passages, so the set is sliced by it too (test_complete_at_k.py).
    assert {s.field for s in result.gold_sets[0].slices} == {"type", "gold_count"}
    assert not any("no query has the field" in w for w in result.warnings)


@pytest.mark.parametrize("grade", [float("nan"), float("inf"), 1.5, True, "1", 10**12])
def test_a_gold_query_built_in_python_with_a_bad_grade_is_refused(grade):
    with pytest.raises(InputError, match="grade of passage 'p1'"):
        GoldQuery("q1", "x", {"p1": grade})

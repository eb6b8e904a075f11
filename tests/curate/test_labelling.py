"""Labels filled into gold queries: a missing type and form from the rules, a query's own kept."""

from __future__ import annotations

from realrecall.curate.type_rules import label_gold_set, label_query
from realrecall.gold import GoldQuery, GoldSet


def test_label_query_fills_only_what_is_missing_and_says_which_rule() -> None:
    bare = GoldQuery("q1", "Why does sync fail?", {"p": 1})
    labelled = label_query(bare)
    assert labelled.type == "troubleshooting"
    assert dict(labelled.metadata) == {"type_rule": "troubleshooting", "form": "question"}
    assert dict(label_query(bare, record_rule=False).metadata) == {"form": "question"}
    written = GoldQuery("q2", "Why does sync fail?", {"p": 1}, type="mine", metadata={"form": "chat"})
    assert label_query(written) is written  # a record's own labels always win
    typed = label_query(GoldQuery("q3", "sync fails", {"p": 1}, type="mine"))
    assert typed.type == "mine"
    assert dict(typed.metadata) == {"form": "keywords"}


def test_label_gold_set_keeps_names_and_returns_a_complete_set_unchanged() -> None:
    gold = GoldSet((GoldQuery("q1", "dog age by teeth", {"p": 1}),), name="real", path="real.jsonl")
    labelled = label_gold_set(gold)
    assert (labelled.name, labelled.path) == ("real", "real.jsonl")
    assert labelled.queries[0].field("form") == "keywords"
    assert labelled.queries[0].type == "conceptual"
    assert "type_rule" not in labelled.queries[0].metadata  # a rule name would be one more slice
    assert label_gold_set(labelled) is labelled

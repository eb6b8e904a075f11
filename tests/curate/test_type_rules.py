"""Labels and languages of gold queries: the rules' labels filled in, and the language detector."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.curate import LanguageDetector, default_type_rules
from realrecall.errors import InputError


def test_language_detection_restricted_to_the_corpus_languages() -> None:
    detector = LanguageDetector.for_languages(["en", "de"])
    assert detector.detect("Wie setze ich mein Passwort zurück?")[0] == "de"
    assert detector.detect("How do I reset my password?")[0] == "en"


def test_text_without_letters_has_no_language() -> None:
    assert LanguageDetector().detect("4031 / 42") == (None, 0.0)


def test_an_unknown_language_code_is_refused() -> None:
    with pytest.raises(InputError, match="unknown language code"):
        LanguageDetector.for_languages(["en", "klingon"])


SAMPLE = Path(__file__).resolve().parents[2] / "src" / "realrecall" / "data" / "real_questions.jsonl"


@pytest.mark.skipif(not SAMPLE.is_file(), reason="sample data not in this checkout")
def test_on_the_sample_questions_rules_and_detection_agree_with_the_written_labels() -> None:
    # The figures docs/gold.md quotes: 82% of types and 173 of 175 languages (with en,de).
    questions = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    rules = default_type_rules()
    detector = LanguageDetector.for_languages(["en", "de"])
    types = sum(rules.classify(q["query"])[0] == q["type"] for q in questions)
    languages = sum(detector.detect(q["query"])[0] == q["language"] for q in questions)
    assert types / len(questions) >= 0.8
    assert languages >= len(questions) - 2


def test_labelling_a_set_equals_labelling_each_query_with_repeated_texts_classified_once(monkeypatch):
    from realrecall.curate import type_rules
    from realrecall.gold import GoldQuery, GoldSet

    queries = [
        GoldQuery("q1", "ERR_SYNC_042", {"p": 1}),
        GoldQuery("q2", "ERR_SYNC_042", {"p": 2}, metadata={"source": "x"}),
        GoldQuery("q3", "sync not working after upgrade", {"p": 1}, type="lookup"),  # its own type wins
        GoldQuery("q4", "how do I reset it?", {"p": 1}, metadata={"form": "statement"}),  # its own form
        GoldQuery("q5", "", {"p": 1}),
        GoldQuery("q6", "", {"p": 0}),
        GoldQuery("q7", "done", {"p": 1}, type="lookup", metadata={"form": "keywords"}),
    ]
    gold = GoldSet(tuple(queries), name="g", path="g.jsonl")
    rules = default_type_rules()
    expected = tuple(type_rules.label_query(query, rules, record_rule=False) for query in queries)
    calls: list[str] = []
    classify = type(rules).classify
    monkeypatch.setattr(
        type(rules), "classify", lambda self, text: calls.append(text) or classify(self, text)
    )
    labelled = type_rules.label_gold_set(gold, rules)
    assert labelled.queries == expected
    assert labelled.queries[6] is queries[6]  # a query with both labels is kept as it is
    assert labelled.queries[1].metadata == {"source": "x", "form": "keywords"}
    assert queries[1].metadata == {"source": "x"}  # the input is never changed
    assert sorted(calls) == ["", "ERR_SYNC_042", "how do I reset it?"]  # each distinct text once

"""Query types from readable rules: the shipped defaults, a user's own file, and bad rule files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.curate import LanguageDetector, default_type_rules, load_type_rules
from realrecall.errors import InputError


@pytest.mark.parametrize(
    ("question", "expected", "rule"),
    [
        ("ERR_SYNC_042", "lookup", "error-code"),
        ("what does HN-4031 mean", "lookup", "error-code"),
        ("where is sync.interval_ms set", "lookup", "config-key"),
        ("where do I set max_upload_size", "lookup", "config-key"),
        ("SyncManager options", "lookup", "camel-case"),
        ("what is in /etc/harbor/harbord.toml", "lookup", "path"),
        ("what does --dry-run do", "lookup", "flag"),
        ("desktop app vs web app", "comparison", "comparison"),
        ("What is the difference between archive and delete?", "comparison", "comparison"),
        ("Unterschied zwischen Archivieren und Löschen", "comparison", "comparison"),
        ("sync not working after upgrade", "troubleshooting", "troubleshooting"),
        ("login fails with ERR_AUTH_001", "lookup", "error-code"),  # the code has one right page
        ("login fails since the upgrade", "troubleshooting", "troubleshooting"),
        ("how many devices can one user sign in on", "lookup", "fact"),
        ("wie groß darf ein Anhang sein", "lookup", "fact"),
        ("docker or apt package, which is recommended?", "comparison", "comparison"),
        ("Synchronisierung funktioniert nicht", "troubleshooting", "troubleshooting"),
        ("How does end-to-end encryption protect my notes?", "conceptual", None),
        ("Why would a team self-host its notes?", "conceptual", None),
    ],
)
def test_default_rules_classify_typical_questions(question: str, expected: str, rule: str | None) -> None:
    assert default_type_rules().classify(question) == (expected, rule)


def test_a_toml_rules_file_replaces_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(
        'default = "other"\n[[rules]]\nname = "pricing"\ntype = "billing"\n'
        'pattern = "price|cost"\nignore_case = true\n'
    )
    rules = load_type_rules(path)
    assert rules.classify("What does the Team plan COST?") == ("billing", "pricing")
    assert rules.classify("ERR_SYNC_042") == ("other", None)


def test_a_json_rules_file_reads_the_same_keys(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"default": "x", "rules": [{"name": "n", "type": "t", "pattern": "^how"}]}))
    assert load_type_rules(path).classify("how so") == ("t", "n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '[[rules]]\nname = "bad"\ntype = "t"\npattern = "(unclosed"\n',
            r"rule 1 \(bad\): bad regular expression",
        ),
        ('[[rules]]\nname = "n"\ntype = "t"\n', r'rule 1 needs a non-empty "pattern" string'),
        (
            '[[rules]]\nname = "n"\ntype = "t"\npattern = "x"\nflags = "i"\n',
            r"rule 1 has unknown key\(s\) flags",
        ),
        ("rules = [", "cannot parse type rules"),
    ],
)
def test_bad_rules_files_are_refused_naming_the_rule(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_type_rules(path)


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


def test_a_rules_file_that_is_not_utf8_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_bytes(b'default = "lookup"\n\x80\x81\n')
    with pytest.raises(InputError, match=r"rules\.toml:2: not valid UTF-8 \(byte 0x80"):
        load_type_rules(path)


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

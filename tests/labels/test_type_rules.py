"""Query types from readable rules: the shipped defaults, a user's own file, and bad rule files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.labels import default_type_rules, load_type_rules


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


def test_a_rules_file_that_is_not_utf8_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_bytes(b'default = "lookup"\n\x80\x81\n')
    with pytest.raises(InputError, match=r"rules\.toml:2: not valid UTF-8 \(byte 0x80"):
        load_type_rules(path)

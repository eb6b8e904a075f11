"""Validation of model answers, and the offline extractive backend."""

from __future__ import annotations

import json

import pytest

from realrecall.corpus import Chunk
from realrecall.generate.answers import MAX_QUESTION_CHARS, parse_question, parse_verdict
from realrecall.generate.extractive import extract_query, sentences
from realrecall.text_features import lexical_overlap


@pytest.mark.parametrize(
    ("text", "question", "reason"),
    [
        ('{"question": "how do I  reset\\nmy password?"}', "how do I reset my password?", None),
        ('```json\n{"question": "where is the invoice?"}\n```', "where is the invoice?", None),
        ('{"question": "cut', None, "invalid_json"),
        ("[1, 2]", None, "schema_mismatch"),
        ('{"q": "x"}', None, "schema_mismatch"),
        ('{"question": "x?", "answer": "y"}', None, "schema_mismatch"),
        ('{"question": 3}', None, "schema_mismatch"),
        ('{"question": " ?? "}', None, "empty_question"),
        (json.dumps({"question": "why " * MAX_QUESTION_CHARS}), None, "question_too_long"),
        ('{"question": "what is in <passage> above?"}', None, "prompt_echo"),
    ],
)
def test_question_answers_are_validated(text, question, reason):
    assert parse_question(text) == (question, reason)


def test_verdicts_are_validated():
    verdict, reason = parse_verdict('{"answerable": false, "reason": "off topic"}')
    assert reason is None
    assert verdict is not None
    assert verdict.answerable is False
    assert parse_verdict('{"answerable": "yes", "reason": "x"}') == (None, "schema_mismatch")
    assert parse_verdict("nope") == (None, "invalid_json")


TEXT = (
    "# Backups\n"
    "The backup agent copies every folder at night. Restores need the admin password.\n\n"
    "- Run `rr-restore --id 7` to bring a file back.\n"
    "Short one. Also: the retention is thirty days for every file on the server."
)


def test_sentences_are_split_and_cleaned_of_markup():
    assert sentences(TEXT) == [
        "The backup agent copies every folder at night.",
        "Restores need the admin password.",
        "Run rr-restore --id 7 to bring a file back.",
        "Also: the retention is thirty days for every file on the server.",
    ]


def test_extractive_query_is_a_sentence_of_the_chunk_and_deterministic():
    chunk = Chunk("c1", TEXT)
    queries = [extract_query(chunk, seed=3, position=p) for p in range(4)]
    assert queries == [extract_query(chunk, seed=3, position=p) for p in range(4)]
    assert len(set(queries)) == 4  # different positions take different sentences
    for query in queries:
        assert query is not None
        assert lexical_overlap(query, TEXT, "en") == 1.0  # the worst case of vocabulary reuse
    assert [extract_query(chunk, seed=4, position=p) for p in range(4)] != queries


def test_extractive_query_is_cut_to_twenty_words():
    chunk = Chunk("c", " ".join(f"word{i}" for i in range(40)) + ".")
    query = extract_query(chunk, seed=0, position=0)
    assert query is not None
    assert len(query.split()) == 20


def test_chunk_without_a_usable_sentence_yields_none_or_its_whole_text():
    assert extract_query(Chunk("c", "Hi"), seed=0, position=0) is None
    assert extract_query(Chunk("c", "Port 8080."), seed=0, position=0) == "Port 8080"

"""A synthetic question's provenance is a type on the gold query, read and written with the same keys."""

from __future__ import annotations

import json

import pytest

from generate.fakes import make_corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, generate
from realrecall.gold import GoldQuery, Provenance, load_gold, write_gold
from realrecall.provenance import PromptRef, TokenUsage

LLM_PROVENANCE = {
    "generator": "realrecall 0.9.0",
    "backend": "llm",
    "model": "gpt-4o-mini",
    "prompt": {"name": "question_generation", "sha256": "a" * 64},
    "temperature": 0.7,
    "seed": 13,
    "request_seed": 99,
    "persona": None,
    "chunk_hash": "b" * 64,
    "question_index": 0,
    "attempt": 1,
    "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    "created": "2026-11-30T06:00:00+00:00",
    "overlap": 0.25,
    "style_example_ids": ["r1", "r2"],
    "judge": {"model": "gpt-4o", "prompt": {"name": "answerability_judge", "sha256": "c" * 64},
              "answerable": True, "reason": "step 2 says so"},
    "slot_key": "d" * 64,
}  # fmt: skip


def a_record(**changes: object) -> dict:
    record = {"query_id": "s1", "query": "how do I reset it?", "gold": {"c1": 1}, "origin": "synthetic"}
    return {**record, "type": "lookup", "language": "en", "provenance": LLM_PROVENANCE, **changes}


def test_provenance_is_parsed_into_its_type_and_written_back_unchanged(tmp_path):
    source = tmp_path / "synthetic.jsonl"
    source.write_text(json.dumps(a_record()) + "\n")
    (query,) = load_gold(source)
    assert "provenance" not in query.metadata
    assert query.provenance is not None
    assert query.provenance.prompt == PromptRef("question_generation", "a" * 64)
    assert query.provenance.usage == TokenUsage(100, 10)
    assert query.provenance.style_example_ids == ("r1", "r2")
    assert query.provenance.judge is not None
    assert query.provenance.judge["answerable"] is True
    assert query.field("provenance") == LLM_PROVENANCE  # slicing and results still see the object
    copy = tmp_path / "copy.jsonl"
    write_gold(copy, [query])
    written = json.loads(copy.read_text())
    assert written == a_record()
    assert list(written["provenance"]) == list(LLM_PROVENANCE)  # the order generate writes


def test_unknown_provenance_keys_are_kept_and_missing_ones_read_as_none(tmp_path):
    source = tmp_path / "synthetic.jsonl"
    older = {"backend": "llm", "model": "m", "vendor": {"run": 7}}  # an older or another tool's record
    source.write_text(json.dumps(a_record(provenance=older)) + "\n")
    (query,) = load_gold(source)
    assert query.provenance is not None
    assert query.provenance.extra == {"vendor": {"run": 7}}
    assert query.provenance.slot_key is None
    written = query.to_record()["provenance"]
    assert written["vendor"] == {"run": 7}
    assert (written["backend"], written["model"], written["slot_key"]) == ("llm", "m", None)


def test_a_record_without_provenance_has_none():
    query = GoldQuery("q1", "where?", {"p1": 1}, origin="real")
    assert query.provenance is None
    assert "provenance" not in query.to_record()


@pytest.mark.parametrize(
    ("provenance", "expected"),
    [
        ("made by hand", '"provenance" must be an object, got "made by hand"'),
        ({"seed": "13"}, '"provenance.seed" must be a whole number, got "13"'),
        ({"overlap": True}, '"provenance.overlap" must be a number'),
        ({"prompt": {"name": "p", "sha": "x"}}, "\"provenance.prompt\" has an unknown key 'sha'"),
        ({"usage": [1, 2]}, '"provenance.usage" must be an object'),
        ({"style_example_ids": "r1"}, '"provenance.style_example_ids" must be a list of query ids'),
        ({"judge": "yes"}, '"provenance.judge" must be an object or null'),
    ],
)
def test_a_wrong_provenance_is_one_line_naming_the_file_line_and_key(tmp_path, provenance, expected):
    source = tmp_path / "synthetic.jsonl"
    source.write_text(
        json.dumps(a_record(query_id="s0")) + "\n" + json.dumps(a_record(provenance=provenance)) + "\n"
    )
    with pytest.raises(InputError) as info:
        load_gold(source)
    assert str(info.value).startswith(f"{source}:2: {expected}")
    assert "\n" not in str(info.value)


def test_generate_writes_through_the_gold_record_function(tmp_path):
    output = tmp_path / "synthetic.jsonl"
    generate(make_corpus(4), output, GenerateConfig(backend="extractive", near_duplicate=None))
    gold = load_gold(output)
    assert all(isinstance(query.provenance, Provenance) for query in gold)
    rewritten = tmp_path / "rewritten.jsonl"
    write_gold(rewritten, gold)
    assert rewritten.read_text() == output.read_text()  # byte for byte: one writer, one record shape

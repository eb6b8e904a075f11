"""Evidence in gold sets and chunk origins in corpora: read, written back, and refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.evidence import Evidence, normalise, normalise_with_offsets
from realrecall.gold import GoldQuery, load_gold, write_gold


def jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


EVIDENCE = {"doc_id": "D1", "text": "The reset button is on the back.", "grade": 2, "start": 10, "end": 42}
SHORT = {"doc_id": "D2", "text": "x", "grade": 1}
SPAN = {"doc_id": "D3", "grade": 1, "start": 0, "end": 5, "chunk_id": "c9"}


def test_evidence_is_read_and_written_back_byte_for_byte(tmp_path):
    records = [
        {"query_id": "q1", "query": "where is reset", "evidence": [EVIDENCE], "origin": "real"},
        {"query_id": "q2", "query": "both", "gold": {"c1": 1}, "evidence": [SHORT]},
        {"query_id": "q3", "query": "ids only", "gold": {"c1": 1}},
        {"query_id": "q4", "query": "kept", "evidence": [SPAN]},
    ]  # fmt: skip
    source = jsonl(tmp_path / "g.jsonl", *records)
    gold = load_gold(source)
    assert gold["q1"].gold == {}
    assert gold["q1"].evidence == (Evidence("D1", "The reset button is on the back.", 2, 10, 42),)
    assert gold["q3"].evidence == ()
    assert gold["q4"].evidence[0].chunk_id == "c9"
    assert gold["q4"].evidence[0].span == (0, 5)
    written = write_gold(tmp_path / "out.jsonl", gold)
    assert written == 4
    assert (tmp_path / "out.jsonl").read_bytes() == source.read_bytes()


def test_numeric_document_ids_read_as_text(tmp_path):
    path = jsonl(
        tmp_path / "g.jsonl", {"query_id": "q", "query": "x", "evidence": [{"doc_id": 4983, "text": "a"}]}
    )
    assert load_gold(path)["q"].evidence[0].doc_id == "4983"


@pytest.mark.parametrize(
    ("evidence", "fragment"),
    [
        ("D1", '"evidence" must be a list'),
        (["D1"], "must be an object"),
        ([{"text": "x"}], 'needs a "doc_id"'),
        ([{"doc_id": "D", "text": "x", "page": 3}], "unknown key 'page'"),
        ([{"doc_id": "D"}], 'neither "text" nor "start"/"end"'),
        ([{"doc_id": "D", "text": "  \n"}], "text is empty"),
        ([{"doc_id": "D", "text": 3}], '"text" must be a string'),
        ([{"doc_id": "D", "text": "x", "grade": 1.5}], "must be an integer"),
        ([{"doc_id": "D", "text": "x", "start": 4}], 'only one of "start" and "end"'),
        ([{"doc_id": "D", "text": "x", "start": 4, "end": 4}], "must be after"),
        ([{"doc_id": "D", "text": "x", "start": -1, "end": 4}], "whole number >= 0"),
        ([{"doc_id": "D", "text": "x", "chunk_id": ""}], '"chunk_id" must be'),
    ],
)
def test_bad_evidence_is_one_line_naming_file_line_and_fix(tmp_path, evidence, fragment):
    path = jsonl(
        tmp_path / "g.jsonl",
        {"query_id": "q0", "query": "fine", "gold": {"c": 1}},
        {"query_id": "q1", "query": "x", "evidence": evidence},
    )
    with pytest.raises(InputError) as info:
        load_gold(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ")
    assert fragment in message
    assert "\n" not in message


def test_a_query_with_neither_ids_nor_evidence_is_still_refused(tmp_path):
    path = jsonl(tmp_path / "g.jsonl", {"query_id": "q1", "query": "x", "evidence": []})
    with pytest.raises(InputError, match=r'g\.jsonl:1: query has no "gold" or "gold_ids"'):
        load_gold(path)


def test_evidence_built_in_python_is_checked_too():
    with pytest.raises(InputError, match="neither"):
        Evidence("D")
    query = GoldQuery("q", "x", {}, evidence=[Evidence("D", "t")])  # type: ignore[arg-type]
    assert query.evidence == (Evidence("D", "t"),)


def test_chunk_origin_is_read_from_our_names_and_the_frameworks(tmp_path):
    path = jsonl(
        tmp_path / "c.jsonl",
        {"id": "a", "text": "hello", "doc_id": "D", "start": 3, "end": 8},
        {"id": "b", "text": "hello", "metadata": {"doc_id": "D", "start": 3}},
        {"id": "c", "text": "hello", "metadata": {"source": "f.txt", "start_index": 10}},
        {"id": "d", "text": "hello", "metadata": {"source": "f.txt", "start_index": -1}},
        {"id": "e", "text": "hello", "start_char_idx": 7, "end_char_idx": 12, "metadata": {"ref_doc_id": 1}},
        {"id": "f", "text": "hello", "metadata": {"document_id": 12, "source": "f.txt"}},
        {"id": "g", "text": "hello", "metadata": {"section": "intro"}},
        {"_id": "h", "title": "t", "text": "hello"},
    )  # fmt: skip
    corpus = load_corpus(path)
    origins = {chunk.id: (chunk.doc_id, chunk.start, chunk.end) for chunk in corpus}
    assert origins == {
        "a": ("D", 3, 8),
        "b": ("D", 3, 8),
        "c": ("f.txt", 10, 15),
        "d": ("f.txt", None, None),
        "e": ("1", 7, 12),
        "f": ("12", None, None),
        "g": (None, None, None),
        "h": (None, None, None),
    }


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"id": "a", "text": "x", "doc_id": ""}, "document id must be a non-empty string"),
        ({"id": "a", "text": "x", "doc_id": "D", "start": "3"}, "start offset must be a whole number"),
        ({"id": "a", "text": "x", "doc_id": "D", "start": 5, "end": 2}, "ends (offset 2) before it starts"),
    ],
)
def test_bad_chunk_origin_is_one_line(tmp_path, record, fragment):
    path = jsonl(tmp_path / "c.jsonl", {"id": "z", "text": "fine"}, record)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert fragment in str(info.value)


def test_normalise_is_nfkc_and_one_space():
    assert normalise("  ﬁne\u00a0\u00a0tuning\n\tof  the ①  ") == "fine tuning of the 1"
    assert normalise("cafe\u0301 au lait") == normalise("caf\u00e9 au lait") == "caf\u00e9 au lait"
    text, origins = normalise_with_offsets("a  ﬁ\u00a0b")
    assert text == "a fi b"
    assert [("a  ﬁ\u00a0b")[i] for i in origins] == ["a", " ", "ﬁ", "ﬁ", "\u00a0", "b"]

"""A big gold set stays small in memory: repeated labels are one string object (issue 13 goal 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.formats import jsonl
from realrecall.formats.record_fields import RecordFields
from realrecall.gold import load_gold


def test_labels_repeated_across_records_are_one_object(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": f"q{i}", "query": f"question {i}", "gold": {"p1": 1}, "origin": "real",
         "type": "lookup", "language": "en"}
        for i in range(3)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    first, *others = load_gold(path)
    for query in others:
        assert query.origin is first.origin
        assert query.type is first.type
        assert query.language is first.language
    assert [query.query_id for query in load_gold(path)] == ["q0", "q1", "q2"]


def test_records_without_extra_fields_share_one_empty_metadata(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": "q0", "query": "question 0", "gold": {"p1": 1}},
        {"query_id": "q1", "query": "question 1", "gold": {"p1": 1}, "origin": "real"},
        {"query_id": "q2", "query": "question 2", "gold": {"p1": 1}, "source": "tickets"},
        {"query_id": "q3", "query": "question 3", "gold": {"p1": 1}, "form": "keyword"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    plain, also_plain, tickets, keyword = load_gold(path)

    assert plain.metadata == {}
    assert plain.metadata is also_plain.metadata
    assert tickets.metadata == {"source": "tickets"}
    assert keyword.metadata == {"form": "keyword"}
    assert [query.to_record() for query in load_gold(path)] == lines


def test_other_fields_share_their_names_and_repeated_texts(tmp_path: Path) -> None:
    # JSON gives every record its own strings: a million queries each with "form": "question" and
    # "source": "tickets" held 300 MB more than one copy of each does.
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": f"q{i}", "query": f"question {i}", "gold": {"p1": 1},
         "form": ["question", "keywords"][i % 2], "source": "tickets", "ticket": f"T-{i}",
         "tags": ["a", "b"], "score": 0.5}
        for i in range(6)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    queries = load_gold(path).queries
    first = queries[0].metadata
    for query in queries[2::2]:
        assert query.metadata["form"] is first["form"]
    for query in queries[1:]:
        assert query.metadata["source"] is first["source"]
        assert next(iter(query.metadata)) is next(iter(first))  # the field name "form"
    assert [query.to_record() for query in queries] == lines  # every value as written, in order


def test_a_field_of_many_distinct_texts_is_no_longer_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An id per record is not worth remembering: past a bound, the field's texts are let go (each
    # record keeps its own), and every value still reads as written.
    monkeypatch.setattr(jsonl, "_SHARED_VALUES", 3)
    tickets = ["T-0", "T-1", "T-2", "T-0", "T-1", "T-2", "T-6", "T-7", "T-0"]  # a 4th distinct at T-6
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": f"q{i}", "query": f"question {i}", "gold": {"p1": 1}, "ticket": ticket, "form": "x"}
        for i, ticket in enumerate(tickets)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    queries = load_gold(path).queries
    assert [query.to_record() for query in queries] == lines
    assert queries[3].metadata["ticket"] is queries[0].metadata["ticket"]  # remembered: T-0
    assert queries[8].metadata["ticket"] is not queries[0].metadata["ticket"]  # let go after T-6
    assert all(query.metadata["form"] is queries[0].metadata["form"] for query in queries)


def test_records_of_one_shape_share_one_name_table(tmp_path: Path) -> None:
    # A dict per record took 184 bytes for three fields; records with the same names in the same
    # order keep their values only, beside one shared table of names.
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": "q0", "query": "question 0", "gold": {"p1": 1}, "form": "x", "source": "s"},
        {"query_id": "q1", "query": "question 1", "gold": {"p1": 1}, "source": "s", "form": "x"},
        {"query_id": "q2", "query": "question 2", "gold": {"p1": 1}, "form": "y", "source": "t"},
        {"query_id": "q3", "query": "question 3", "gold": {"p1": 1}, "form": "y"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    first, reordered, same_shape, shorter = load_gold(path).queries

    assert isinstance(first.metadata, RecordFields)
    assert same_shape.metadata._positions is first.metadata._positions
    assert reordered.metadata._positions is not first.metadata._positions  # its own order
    assert shorter.metadata._positions is not first.metadata._positions
    assert list(reordered.metadata) == ["source", "form"]
    assert first.metadata == reordered.metadata == {"form": "x", "source": "s"}
    assert [query.to_record() for query in load_gold(path)] == lines


def test_shapes_past_the_bound_are_kept_as_they_come(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "_SHARED_VALUES", 2)
    path = tmp_path / "gold.jsonl"
    lines = [
        {"query_id": f"q{i}", "query": "?", "gold": {"p1": 1}, "a": "x", "b": "y", f"c{i % 4}": "z"}
        for i in range(8)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    queries = load_gold(path).queries
    assert [query.to_record() for query in queries] == lines
    assert queries[3].metadata["b"] is queries[0].metadata["b"]  # a known name's texts are still shared
    tables = [query.metadata._positions for query in queries]
    # The first two shapes are remembered, later ones are not.
    assert tables[4] is tables[0]
    assert tables[5] is tables[1]
    assert tables[6] is not tables[2]
    assert tables[7] is not tables[3]

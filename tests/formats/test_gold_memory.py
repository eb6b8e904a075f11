"""A big gold set stays small in memory: repeated labels are one string object (issue 13 goal 2)."""

from __future__ import annotations

import json
from pathlib import Path

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

"""`realrecall gold migrate`: chunk ids rewritten for a new chunking, evidence kept, no query dropped."""

from __future__ import annotations

import json
from pathlib import Path

from realrecall.curate import migrate_gold
from realrecall.gold import load_gold
from support import cli

OLD = [
    {"id": "old1", "doc_id": "A", "text": "Reset the router by holding the button. The light turns amber."},
    {"id": "old2", "doc_id": "B", "text": "Backups are kept for thirty days."},
]
NEW = [
    {"id": "A#0", "doc_id": "A", "start": 0, "text": "Reset the router by holding the button."},
    {"id": "A#1", "doc_id": "A", "start": 40, "text": "The light turns amber."},
    {"id": "B#0", "doc_id": "B", "start": 0, "text": "Backups are kept for thirty days."},
]
GOLD = [
    {"query_id": "q1", "query": "reset", "gold": {"old1": 2},
     "evidence": [{"doc_id": "A", "text": "holding the button", "grade": 2, "chunk_id": "old1"}]},
    {"query_id": "q2", "query": "backups", "gold": {"old2": 1},
     "evidence": [{"doc_id": "B", "text": "thirty days", "grade": 1}]},
    {"query_id": "q3", "query": "warranty", "evidence": [{"doc_id": "C", "text": "two years", "grade": 1}]},
    {"query_id": "q4", "query": "no evidence", "gold": {"old9": 1}},
]  # fmt: skip


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_ids_are_rewritten_evidence_kept_and_nothing_dropped(tmp_path):
    gold = write(tmp_path / "gold.jsonl", GOLD)
    new = write(tmp_path / "new.jsonl", NEW)
    before = gold.read_bytes()
    result = migrate_gold(gold, new, output=tmp_path / "out.jsonl")
    migrated = load_gold(tmp_path / "out.jsonl")
    assert [q.query_id for q in migrated] == ["q1", "q2", "q3", "q4"]
    assert {q.query_id: dict(q.gold) for q in migrated} == {
        "q1": {"A#0": 2},
        "q2": {"B#0": 1},
        "q3": {},
        "q4": {"old9": 1},
    }
    assert migrated["q1"].evidence[0].chunk_id is None  # the old chunk's id says nothing here
    assert migrated["q3"].evidence[0].text == "two years"
    assert result.resolution.lost_queries == ("q3",)
    assert result.mapped == 2
    assert gold.read_bytes() == before
    # and back: the old chunking's ids again
    old = write(tmp_path / "old.jsonl", OLD)
    migrate_gold(tmp_path / "out.jsonl", old, output=tmp_path / "back.jsonl")
    back = load_gold(tmp_path / "back.jsonl")
    assert {q.query_id: dict(q.gold) for q in back}["q1"] == {"old1": 2}
    assert {q.query_id: dict(q.gold) for q in back}["q2"] == {"old2": 1}


def test_cli_reports_and_refuses_to_overwrite_an_input(tmp_path):
    gold = write(tmp_path / "gold.jsonl", GOLD)
    new = write(tmp_path / "new.jsonl", NEW)
    report = tmp_path / "report.jsonl"
    done = cli.run(
        "gold", "migrate", str(gold), "--corpus", str(new), "-o", str(tmp_path / "out.jsonl"),
        "--report", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "migrated 4 queries" in done.stdout
    assert "q3: 0 chunk(s), 0 split, 1 lost (kept, scores 0)" in done.stdout
    assert "1 evidence item(s) of 1 queries were found in no chunk" in done.stderr
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows[0] == {"query_id": "q1", "chunks": 1, "by_id": 0, "from_evidence": 1, "split": 0, "lost": 0}
    before = gold.read_bytes()
    same = cli.run("gold", "migrate", str(gold), "--corpus", str(new), "-o", str(gold))
    assert same.returncode == 2
    assert len(same.err_lines) == 1
    assert "is the same file as GOLD" in same.stderr
    assert gold.read_bytes() == before
    bad = cli.run(
        "gold", "migrate", str(gold), "--corpus", str(new), "-o", str(tmp_path / "x.jsonl"), "--coverage", "0"
    )
    assert bad.returncode == 2
    assert "coverage must be a number in (0, 1]" in bad.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_a_query_without_evidence_is_named_in_a_warning(tmp_path):
    gold = write(tmp_path / "gold.jsonl", GOLD)
    new = write(tmp_path / "new.jsonl", NEW)
    done = cli.run("gold", "migrate", str(gold), "--corpus", str(new), "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.err_lines if line.startswith("warning:") and "no evidence" in line]
    assert len(warnings) == 1
    assert "1 queries have no evidence and no id in the new corpus (q4)" in warnings[0]
    assert migrate_gold(gold, new, output=tmp_path / "again.jsonl").without_evidence == ("q4",)


def test_queries_carried_by_id_alone_are_named_in_a_warning(tmp_path):
    records = [{"query_id": f"q{n}", "query": f"question {n}", "gold": {"A#0": 1}} for n in range(7)]
    gold = write(tmp_path / "gold.jsonl", records)
    new = write(tmp_path / "new.jsonl", NEW)
    done = cli.run("gold", "migrate", str(gold), "--corpus", str(new), "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "7 mapped" in done.stdout
    (warning,) = [line for line in done.err_lines if line.startswith("warning:")]
    assert (
        "7 queries have no evidence and were carried by id alone (q0, q1, q2, q3, q4 and 2 more)" in warning
    )


def test_a_set_without_any_evidence_or_id_in_the_new_corpus_is_refused_and_nothing_written(tmp_path):
    records = [{"query_id": f"q{n}", "query": f"question {n}", "gold": {f"old{n}": 1}} for n in range(3)]
    gold = write(tmp_path / "gold.jsonl", records)
    new = write(tmp_path / "new.jsonl", NEW)
    out = tmp_path / "out.jsonl"
    done = cli.run("gold", "migrate", str(gold), "--corpus", str(new), "-o", str(out))
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert "no query has evidence" in done.stderr
    assert "0 mapped" not in done.stdout
    assert not out.exists()

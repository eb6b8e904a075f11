"""`realrecall gold review --interactive`, driven through a real pseudo-terminal with pexpect."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from realrecall.curate import add_judgements, read_judgements
from realrecall.gold import load_gold
from support import process

pexpect = pytest.importorskip("pexpect")

PROMPT = r"\[r\]elevant / \[n\]ot / \[s\]kip / \[q\]uit \? "


def spawn(args: list[str], cwd: Path):
    """The CLI as a real process on a pseudo-terminal (``support.process``'s command and environment)."""
    env = process.environment({**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"})
    program, *arguments = process.command(args)
    return pexpect.spawn(program, arguments, cwd=str(cwd), env=env, encoding="utf-8", timeout=60)


def review_args(results: Path, per_query: Path, judgements: Path) -> list[str]:
    return ["gold", "review", str(results), "--per-query", str(per_query), "--interactive",
            "--judgements", str(judgements), "--by", "ana"]  # fmt: skip


def test_interactive_review_records_relevant_and_not_relevant_and_stops_on_quit(
    results_file: Path, per_query_file: Path, gold_file: Path, tmp_path: Path
) -> None:
    judgements = tmp_path / "judged.jsonl"
    child = spawn(review_args(results_file, per_query_file, judgements), tmp_path)
    child.expect("Query: What happens when two devices edit the same note")
    child.expect(r"#1 en-release-034")
    child.expect(PROMPT)
    child.send("r")
    child.expect(r"#2 en-sync-002")
    child.expect(PROMPT)
    child.send("x")  # not a choice: asked again
    child.expect(PROMPT)
    child.send("n")
    child.expect(r"#3 de-sync-001")
    child.expect(PROMPT)
    child.send("s")
    child.expect("Query: How do I restore a backup")
    child.expect(PROMPT)
    child.send("q")
    child.expect("judged 1 relevant, 1 not relevant, skipped 1")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    records = [json.loads(line) for line in judgements.read_text().splitlines()]
    assert [(r["query_id"], r["passage_id"], r["grade"], r["by"]) for r in records] == [
        ("q1", "en-release-034", 1, "ana"),
        ("q1", "en-sync-002", 0, "ana"),
    ]
    assert all(r["at"] and "rank" in r["why"] for r in records)

    # The file it wrote is what `gold add --judgements` applies.
    add_judgements(gold_file, read_judgements(judgements).items)
    query = load_gold(gold_file)["q1"]
    assert dict(query.gold) == {"en-sync-001": 1, "en-release-034": 1, "en-sync-002": 0}
    assert [h["at"] for h in query.metadata["gold_history"]] == [r["at"] for r in records]


def test_a_second_interactive_review_skips_what_was_already_judged(
    results_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    judgements = tmp_path / "judged.jsonl"
    judgements.write_text(
        '{"query_id": "q1", "passage_id": "en-release-034", "grade": 1, "by": "ana"}\n'
        '{"query_id": "q1", "passage_id": "en-sync-002", "grade": 0, "by": "ana"}\n'
    )
    child = spawn(review_args(results_file, per_query_file, judgements), tmp_path)
    child.logfile_read = transcript = io.StringIO()
    child.expect(r"#3 de-sync-001")
    child.expect(PROMPT)
    child.send("\x03")  # Ctrl-C quits, keeping what was recorded
    child.expect("judged 0 relevant, 0 not relevant, skipped 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert len(judgements.read_text().splitlines()) == 2
    assert "#1 en-release-034" not in transcript.getvalue()
    assert "#2 en-sync-002" not in transcript.getvalue()


def test_interactive_review_without_a_terminal_exits_2(results_file: Path, per_query_file: Path, cli) -> None:
    result = cli("gold", "review", results_file, "--per-query", per_query_file, "--interactive")
    assert result.returncode == 2
    assert "--interactive needs a terminal" in result.stderr

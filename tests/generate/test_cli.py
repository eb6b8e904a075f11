"""`realrecall generate` on the command line (offline backend; the HTTP tests drive the llm backend)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from realrecall.cli import app

TEXT = (
    "The VPN client disconnects after ten minutes of idle time. Set keepalive to 60 in vpn.conf to stop it."
)


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    rows = [{"id": f"c{i}", "text": f"{TEXT} Office {i} uses gateway number {i * 7}."} for i in range(4)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, ["generate", *args])


def test_extractive_run_writes_a_gold_set_and_a_summary(corpus_file, tmp_path):
    output = tmp_path / "synthetic.jsonl"
    result = invoke("--corpus", str(corpus_file), "--output", str(output), "--backend", "extractive")
    assert result.exit_code == 0, result.output
    assert "4 questions for 4 chunks (added 4, kept 0, removed 0)" in result.output
    lines = output.read_text().splitlines()
    assert len(lines) == 4
    assert json.loads(lines[0])["origin"] == "synthetic"
    rerun = invoke("--corpus", str(corpus_file), "--output", str(output), "--backend", "extractive")
    assert "(added 0, kept 4, removed 0)" in rerun.output


def test_dry_run_prints_requests_tokens_and_cost_method(corpus_file, tmp_path):
    result = invoke(
        "--corpus",
        str(corpus_file),
        "--output",
        str(tmp_path / "s.jsonl"),
        "--dry-run",
        "--per-chunk",
        "2",
        "--price-in",
        "0.15",
        "--price-out",
        "0.6",
    )
    assert result.exit_code == 0, result.output
    assert "requests: 8" in result.output
    assert "characters a token" in result.output or "tiktoken" in result.output
    assert not (tmp_path / "s.jsonl").exists()


def test_missing_corpus_exits_2_naming_the_file(tmp_path):
    result = invoke("--corpus", str(tmp_path / "nope.jsonl"), "--output", str(tmp_path / "s.jsonl"))
    assert result.exit_code == 2
    assert "nope.jsonl: file not found" in result.output


def test_unknown_question_type_exits_2(corpus_file, tmp_path):
    result = invoke("--corpus", str(corpus_file), "--output", str(tmp_path / "s.jsonl"), "--types", "riddle")
    assert result.exit_code == 2
    assert "unknown question type 'riddle'" in result.output


def test_malformed_corpus_line_exits_2_with_its_line(tmp_path):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n')
    result = invoke("--corpus", str(corpus), "--output", str(tmp_path / "s.jsonl"), "--backend", "extractive")
    assert result.exit_code == 2
    assert "bad.jsonl:2: malformed JSON" in result.output


def test_run_that_keeps_nothing_exits_1(corpus_file, tmp_path):
    result = invoke(
        "--corpus",
        str(corpus_file),
        "--output",
        str(tmp_path / "s.jsonl"),
        "--backend",
        "extractive",
        "--max-overlap",
        "0.2",
    )
    assert result.exit_code == 1
    assert "no question was kept" in result.output

"""The style-leak warning reaches the user: evaluate, calibrate and run print it when a real set holds
questions that were style examples of the synthetic set beside it (issue 12 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient
from realrecall.corpus import load_corpus
from realrecall.generate import GenerateConfig, generate
from support import cli
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler

CHUNKS = [
    ("c1", "To reset your password open Settings, choose Account and press Reset password."),
    ("c2", "Sync runs every five minutes by default; set sync.interval_seconds to change it."),
    ("c3", "Backups are kept for thirty days, then deleted; backup.retention_days changes that."),
]
REAL = [
    {"query_id": "r1", "query": "forgot my password how to change it", "gold": {"c1": 1}},
    {"query_id": "r2", "query": "how long do you keep backups", "gold": {"c3": 1}},
    {"query_id": "r3", "query": "sync how often", "gold": {"c2": 1}},
]
LEAK = "question(s) of real set 'real' were style examples for synthetic set 'synthetic'"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in CHUNKS), encoding="utf-8")
    real = tmp_path / "real.jsonl"
    real.write_text("".join(json.dumps({**q, "origin": "real"}) + "\n" for q in REAL), encoding="utf-8")
    synthetic = tmp_path / "synthetic.jsonl"
    config = GenerateConfig(style_examples=real, n_style_examples=2)
    generate(load_corpus(corpus), synthetic, config, client=FakeChatClient())
    return {"corpus": corpus, "real": real, "synthetic": synthetic, "folder": tmp_path}


def test_evaluate_warns_when_the_real_set_holds_style_examples(files: dict[str, Path]) -> None:
    done = cli.run(
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["real"]),
        "--gold", str(files["synthetic"]), "--output", str(files["folder"] / "results.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"warning: 2 {LEAK}" in done.stderr
    results = json.loads((files["folder"] / "results.json").read_text("utf-8"))
    assert any(LEAK in warning for warning in results["warnings"])


def test_calibrate_warns_from_results_and_in_one_call(files: dict[str, Path]) -> None:
    results = files["folder"] / "results.json"
    cli.run(
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["real"]),
        "--gold", str(files["synthetic"]), "--output", str(results),
    )  # fmt: skip
    done = cli.run("calibrate", str(results), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert f"warning: 2 {LEAK}" in done.stderr
    assert any(LEAK in warning for warning in json.loads(done.stdout)["warnings"])
    one_call = cli.run(
        "calibrate", "--synthetic", str(files["synthetic"]), "--real", str(files["real"]),
        "--corpus", str(files["corpus"]), "--format", "json",
    )  # fmt: skip
    assert one_call.returncode == 0, one_call.stderr
    assert LEAK in one_call.stderr


def test_run_warns(files: dict[str, Path], fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_handler = http_question_handler
    config = files["folder"] / "pipeline.toml"
    config.write_text(
        """
[corpus]
path = "corpus.jsonl"
[real]
path = "real.jsonl"
date = "2026-11-30"
[generate]
output = "synthetic-run.jsonl"
backend = "llm"
model = "test-model"
per_chunk = 1
concurrency = 2
style_examples = "real.jsonl"
n_style_examples = 2
[evaluate]
k = [1, 3]
[calibrate]
metric = "recall@3"
""",
        encoding="utf-8",
    )
    done = cli.run("run", str(config))
    assert done.returncode == 0, done.stderr
    assert (
        "question(s) of real set 'real' were style examples for synthetic set 'synthetic-run'" in done.stderr
    )


def test_no_warning_without_style_examples(files: dict[str, Path]) -> None:
    plain = files["folder"] / "plain.jsonl"
    generate(load_corpus(files["corpus"]), plain, GenerateConfig(), client=FakeChatClient())
    done = cli.run(
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["real"]), "--gold", str(plain)
    )
    assert done.returncode == 0, done.stderr
    assert "style examples" not in done.stderr

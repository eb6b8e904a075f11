"""Ctrl-C (SIGINT) ends a command with exit 130 and one line saying it was interrupted and what was kept.

Typer turns a KeyboardInterrupt into exit 130 without a word, so a user could not tell an interrupted
run from a crash, nor whether an output was left half-written. Outputs written whole (by a rename) are
left as they were; generate, judge and run keep the records appended so far and resume from them.
These are real processes sent a real SIGINT, as a terminal's Ctrl-C does.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from support import cli
from support.fake_openai import FakeOpenAI
from support.process import start
from support.questions import http_question_handler

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "realrecall" / "data"


def _wait_for(path: Path, process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120  # reached only if the run is broken
    while not path.exists():
        assert process.poll() is None, f"ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"never got to {what}"
        time.sleep(0.02)


def _interrupt(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def test_ctrl_c_during_evaluate_says_it_was_interrupted_and_writes_no_output(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(
        "import pathlib, time\n"
        "def search(query, k):\n"
        "    pathlib.Path('started').touch()\n"
        "    time.sleep(0.2)\n"
        "    return []\n"
    )
    process = start(
        "evaluate", "--gold", str(SAMPLE / "real_questions.jsonl"), "--corpus",
        str(SAMPLE / "docs_corpus.jsonl"), "--retriever", "slow.py:search", "-o", "results.json",
        "--query-timeout", "60", cwd=tmp_path, ctrl_c=True,
    )  # fmt: skip
    _wait_for(tmp_path / "started", process, "the first query")

    code, _, err = _interrupt(process)

    assert code == 130, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("interrupted: nothing was written half-way"), err
    assert not (tmp_path / "results.json").exists()
    assert {path.name for path in tmp_path.iterdir()} - {"__pycache__"} == {"slow.py", "started"}


def test_ctrl_c_during_generate_keeps_whole_records_and_says_a_rerun_resumes(tmp_path: Path) -> None:
    corpus = tmp_path / "chunks.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": f"k{i}", "text": f"Item {i}: the printer queue {i} empties every {i} minutes."})
            + "\n"
            for i in range(30)
        )
    )
    answered = itertools.count()
    release = threading.Event()

    def answer_5_then_hold(body: dict[str, Any]) -> Any:
        if next(answered) >= 5:
            release.wait(timeout=60)
        return http_question_handler(body)

    args = ["generate", "--corpus", str(corpus), "--output", "synthetic.jsonl", "--concurrency", "2",
            "--strategy", "direct", "--model", "m"]  # fmt: skip
    with FakeOpenAI() as server:
        server.chat_handler = answer_5_then_hold
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-placeholder-key"}
        process = start(*args, cwd=tmp_path, env=env, ctrl_c=True)
        output = tmp_path / "synthetic.jsonl"
        deadline = time.monotonic() + 120
        while not (output.exists() and len(output.read_bytes().splitlines()) >= 3):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no record was written"
            time.sleep(0.02)

        code, _, err = _interrupt(process)
        release.set()

        assert code == 130, err
        assert "Traceback" not in err, err
        last = [line for line in err.splitlines() if line.strip()][-1]
        assert last.startswith("interrupted: the records finished so far are kept"), err
        assert "rerun the same realrecall generate" in last, err
        kept = [json.loads(line) for line in output.read_text().splitlines()]
        assert 3 <= len(kept) < 30
        finished = cli.run(*args, cwd=tmp_path, env=env)
        assert finished.returncode == 0, finished.stderr
        ids = [json.loads(line)["query_id"] for line in output.read_text().splitlines()]
        assert sorted(ids) == sorted(f"syn-k{i}-0" for i in range(30))

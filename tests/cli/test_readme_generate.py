"""The README's generate line, run as written (in-process) against the fake server started as a process.

The command as a real process is test_smoke.py's; what this checks is the line itself.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "realrecall" / "data"


def readme_command(name: str) -> list[str]:
    """The README's first ``realrecall NAME`` command, its continuation lines joined, as arguments."""
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"realrecall {name} "))
    text = ""
    for line in lines[start:]:
        text += line.rstrip().removesuffix("\\") + " "
        if not line.rstrip().endswith("\\"):
            break
    return shlex.split(text)


@pytest.mark.slow
def test_the_readme_generate_line_works_against_the_standalone_fake_server(tmp_path: Path) -> None:
    args = readme_command("generate")
    assert args[:2] == ["realrecall", "generate"]
    # The files it names, from the packaged sample data.
    shutil.copy(DATA / "docs_corpus.jsonl", tmp_path / "chunks.jsonl")
    shutil.copy(DATA / "real_questions.jsonl", tmp_path / "real.jsonl")
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "fake_openai.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = server.stdout.readline().strip() if server.stdout else ""
        env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-fake"}
        done = cli.run(*args[1:], cwd=tmp_path, env=env)
    finally:
        server.kill()
        server.wait(timeout=10)
        if server.stdout:
            server.stdout.close()
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "synthetic.jsonl").read_text("utf-8").splitlines()]
    chunks = (tmp_path / "chunks.jsonl").read_text("utf-8").count("\n")
    assert len(records) == chunks
    assert all(record["origin"] == "synthetic" and record["query"] for record in records)

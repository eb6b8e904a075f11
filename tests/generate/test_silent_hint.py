"""An endpoint that answers nothing ends generate with one line advising more time, naming the setting
the way the user gives it where they are: ``--request-timeout`` on the command line, ``[generate]
request_timeout`` under ``realrecall run``, the client's own timeout from Python (issue 28).

A real client against a loopback server that accepts and never answers; one attempt a request (the
default six, with their waits between, would only make the test slow)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from generate.fakes import make_corpus
from realrecall.errors import EndpointSilent
from realrecall.generate import GenerateConfig, generate
from realrecall.llm import LLMConfig, OpenAIChatClient
from support import cli
from support.silent_server import SilentServer

ADVICE = ": check that the endpoint is running, or allow more time with {} (a rerun resumes)"


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The API root of a silent server; the client realrecall makes tries each request once."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder-key")
    made = GenerateConfig.llm_config
    monkeypatch.setattr(
        GenerateConfig, "llm_config", lambda self: dataclasses.replace(made(self), max_attempts=1)
    )
    with SilentServer() as server:
        yield f"{server.url}/v1"


@pytest.fixture
def chunks(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps({"id": c.id, "text": c.text}) + "\n" for c in make_corpus(3)))
    return path


def test_from_python_the_advice_is_the_clients_timeout(silent, tmp_path):
    client = OpenAIChatClient(LLMConfig(base_url=silent, timeout=0.2, max_attempts=1))
    with pytest.raises(EndpointSilent) as caught:
        generate(make_corpus(3), tmp_path / "s.jsonl", client=client, strategy="direct")
    assert str(caught.value).endswith(
        "none of the 3 questions got an answer" + ADVICE.format("the client's LLMConfig(timeout=...)")
    )


def test_on_the_command_line_the_advice_is_the_option(silent, chunks, tmp_path):
    done = cli.run(
        "generate", "--corpus", str(chunks), "--output", "s.jsonl", "--base-url", silent,
        "--request-timeout", "0.2", "--strategy", "direct", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.err_lines[-1].startswith("error: timed out after 1 attempt")
    assert done.err_lines[-1].endswith(
        "none of the 3 questions got an answer" + ADVICE.format("--request-timeout")
    )


def test_under_run_the_advice_is_the_pipelines_key(silent, chunks, tmp_path):
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(
        f'[corpus]\npath = "{chunks.name}"\n[generate]\noutput = "s.jsonl"\nbackend = "llm"\nmodel = "m"\n'
        f'strategy = "direct"\nbase_url = "{silent}"\nrequest_timeout = 0.2\n'
    )
    done = cli.run("run", str(pipeline), cwd=tmp_path)
    assert done.returncode == 1
    assert done.err_lines[-1].endswith(
        "none of the 3 questions got an answer" + ADVICE.format(f"[generate] request_timeout in {pipeline}")
    )
    assert "--request-timeout" not in done.stderr

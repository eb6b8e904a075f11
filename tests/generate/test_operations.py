"""Operating generate against real endpoints: parameters they refuse, a dead endpoint, the job's spend.

Every test talks to the fake OpenAI-compatible HTTP server (tests/support/fake_openai.py) through the
real client, as a scheduled job would.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from generate.fakes import make_corpus
from realrecall.errors import LLMError, RealrecallError
from realrecall.generate import GenerateConfig, generate
from realrecall.llm import LLMConfig, OpenAIChatClient
from support import cli
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler


def fast_client(base_url: str, **options: Any) -> OpenAIChatClient:
    settings: dict[str, Any] = {"timeout": 2.0, "max_attempts": 3, "max_wait": 0.05, "initial_wait": 0.01}
    return OpenAIChatClient(LLMConfig(base_url=base_url, **{**settings, **options}))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture
def server(fake_openai: FakeOpenAI) -> FakeOpenAI:
    fake_openai.chat_handler = http_question_handler
    return fake_openai


# -- parameters the endpoint refuses -------------------------------------------------------------------


def test_a_refused_temperature_is_reported_and_provenance_says_it_was_not_sent(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.unsupported_parameters = frozenset({"temperature", "max_tokens"})
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(temperature=0.7, concurrency=1)

    summary = generate(make_corpus(3), output, config, client=fast_client(server.base_url))

    assert summary.total == 3
    [warning] = [w for w in summary.warnings if "refused" in w]
    assert "temperature (3 answers)" in warning
    assert "max_tokens" in warning
    for record in records(output):
        provenance = record["provenance"]
        assert provenance["temperature"] is None  # the endpoint's default applied, not 0.7
        assert provenance["dropped_parameters"] == ["max_tokens", "temperature"]
    written = json.loads(output.with_name("s.summary.json").read_text("utf-8"))
    assert written["stages"]["generation"]["dropped_parameters"] == {"max_tokens": 3, "temperature": 3}


def test_a_parameter_the_endpoint_takes_leaves_provenance_as_asked(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    output = tmp_path / "s.jsonl"
    summary = generate(
        make_corpus(2), output, GenerateConfig(temperature=0.7), client=fast_client(server.base_url)
    )
    assert not [w for w in summary.warnings if "refused" in w]
    for record in records(output):
        assert record["provenance"]["temperature"] == 0.7
        assert "dropped_parameters" not in record["provenance"]
        assert isinstance(record["provenance"]["request_seed"], int)


def test_a_rerun_from_the_cache_still_knows_what_the_endpoint_refused(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.unsupported_parameters = frozenset({"temperature"})
    output = tmp_path / "s.jsonl"
    generate(make_corpus(2), output, GenerateConfig(concurrency=1), client=fast_client(server.base_url))
    output.unlink()  # the questions are written again, from the cached answers alone
    sent = server.count("chat")

    summary = generate(
        make_corpus(2), output, GenerateConfig(concurrency=1), client=fast_client(server.base_url)
    )

    assert server.count("chat") == sent
    assert any("temperature (2 answers)" in w for w in summary.warnings)
    assert all(record["provenance"]["temperature"] is None for record in records(output))


def test_an_endpoint_that_refuses_seed_is_asked_again_without_it(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    server = fake_openai  # its own answers: they vary with the messages when no seed is sent
    server.unsupported_parameters = frozenset({"seed"})
    output = tmp_path / "s.jsonl"

    summary = generate(
        make_corpus(3), output, GenerateConfig(concurrency=1), client=fast_client(server.base_url)
    )

    assert summary.total == 3  # every question kept, not failed
    bodies = server.bodies("chat")
    assert sum("seed" in body for body in bodies) == 1  # refused once, then left out from the start
    assert any("seed (3 answers)" in w for w in summary.warnings)
    for record in records(output):
        assert record["provenance"]["request_seed"] is None
        assert record["provenance"]["dropped_parameters"] == ["seed"]


def test_a_seed_refused_in_other_words_is_recognised(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    server = fake_openai
    server.script([{"error": "Unrecognized request argument supplied: seed", "status": 400}])
    client = fast_client(server.base_url)

    summary = generate(make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(), client=client)

    assert summary.total == 1
    assert client.dropped_parameters == {"seed"}
    assert "seed" not in server.bodies("chat")[-1]


# -- the job's spend -----------------------------------------------------------------------------------


def test_the_summary_file_keeps_every_runs_spend(server: FakeOpenAI, tmp_path: Path) -> None:
    output = tmp_path / "s.jsonl"
    priced = {"price_in": 1.0, "price_out": 2.0}
    first = generate(make_corpus(3), output, GenerateConfig(**priced), client=fast_client(server.base_url))
    first_stage = first.stage("generation")
    assert first_stage is not None
    assert first_stage.requests == 3

    rerun = generate(make_corpus(3), output, GenerateConfig(**priced), client=fast_client(server.base_url))
    rerun_stage = rerun.stage("generation")
    assert rerun_stage is not None
    assert rerun_stage.requests == 0

    written = json.loads(output.with_name("s.summary.json").read_text("utf-8"))
    assert [run["requests"] for run in written["runs"]] == [3, 0]
    assert written["spend"]["runs"] == 2
    assert written["spend"]["requests"] == 3
    assert written["spend"]["tokens_in"] == first_stage.tokens_in
    assert written["spend"]["tokens_out"] == first_stage.tokens_out
    assert written["spend"]["cost"] == pytest.approx(first_stage.cost)
    assert written["stages"]["generation"]["requests"] == 0  # the latest run's own figures stay as they were


def test_a_summary_written_before_runs_were_kept_counts_as_one_run(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    output = tmp_path / "s.jsonl"
    generate(make_corpus(2), output, GenerateConfig(), client=fast_client(server.base_url))
    summary_path = output.with_name("s.summary.json")
    old = json.loads(summary_path.read_text("utf-8"))
    del old["runs"], old["spend"]
    summary_path.write_text(json.dumps(old), "utf-8")

    generate(make_corpus(2), output, GenerateConfig(), client=fast_client(server.base_url))

    written = json.loads(summary_path.read_text("utf-8"))
    assert written["spend"] == {
        "runs": 2,
        "requests": 2,
        "tokens_in": old["stages"]["generation"]["tokens_in"],
        "tokens_out": old["stages"]["generation"]["tokens_out"],
        "cost": None,  # no prices were given for the run that sent requests
    }


# -- an endpoint nobody answers at ---------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_endpoint_that_drops_every_connection_stops_the_run_after_a_few_attempts(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.inject_fault("disconnect", times=10_000)
    client = fast_client(server.base_url, max_attempts=6, max_connection_failures=5)
    corpus = make_corpus(40)

    with pytest.raises(LLMError) as caught:
        generate(corpus, tmp_path / "s.jsonl", GenerateConfig(concurrency=4), client=client)

    message = str(caught.value)
    assert message.startswith(f"no connection to {server.base_url} in 5 attempts in a row")
    assert "\n" not in message
    # Attempts stop once five in a row made no connection (plus those already on their way), not
    # after every question's six attempts.
    assert server.count("chat") < 5 + 4
    assert len(records(tmp_path / "s.failures.jsonl")) <= 4


def test_an_answer_between_connection_errors_keeps_the_run_going(server: FakeOpenAI, tmp_path: Path) -> None:
    def answer_then_drop_two(body: dict[str, Any]) -> str:
        server.inject_fault("disconnect", times=2)  # the next two attempts make no connection
        return http_question_handler(body)

    server.inject_fault("disconnect", times=2)
    server.chat_handler = answer_then_drop_two
    client = fast_client(server.base_url, max_attempts=3, max_connection_failures=3)

    summary = generate(make_corpus(4), tmp_path / "s.jsonl", GenerateConfig(concurrency=1), client=client)

    assert summary.total == 4  # two failed attempts, an answer, two failed attempts...: never three in a row
    assert server.count("chat") == 4 * 3


def test_cli_on_a_closed_port_fails_fast_with_one_line_naming_the_server(tmp_path: Path) -> None:
    corpus = tmp_path / "chunks.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"c{i}", "text": f"Setting number {i} restarts the nightly job."}) + "\n"
                for i in range(60)),
        "utf-8",
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{closed_port()}/v1"

    result = cli.run(
        "generate", "--corpus", str(corpus), "--output", str(tmp_path / "s.jsonl"), "--model", "m",
        env={"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-placeholder-key"},
    )  # fmt: skip

    assert result.returncode == 1, result.stderr
    [line] = [line for line in result.err_lines if base_url in line]
    assert f"no connection to {base_url}" in line
    assert "Traceback" not in result.stderr


def test_a_run_that_keeps_nothing_names_max_attempts(server: FakeOpenAI, tmp_path: Path) -> None:
    server.chat_handler = lambda body: "not json"

    with pytest.raises(RealrecallError, match=r"no question was kept.*--max-attempts 5"):
        generate(
            make_corpus(1),
            tmp_path / "s.jsonl",
            GenerateConfig(max_attempts=2),
            client=fast_client(server.base_url),
        )

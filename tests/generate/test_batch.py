"""--batch: answers through the Batch API of the fake server, in rounds, resumable from the batch id."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from generate.fakes import FakeChatClient, fill_disk_at, make_corpus
from realrecall.errors import InputError, LLMError, OutputError, RealrecallError, SettingError
from realrecall.generate import BatchOptions, GenerateConfig, agenerate, generate
from realrecall.generate.batch import batch_state_path
from realrecall.generate.store import GenerationStore
from realrecall.llm import BatchStatus, LLMConfig, OpenAIChatClient
from realrecall.settings import BatchSettings, EngineSettings, settings_from
from support import cli
from support.fake_openai import FakeOpenAI


def handler(body: dict[str, Any]) -> str:
    if body["response_format"]["json_schema"]["name"] == "verdict":
        return json.dumps({"answerable": True, "reason": "yes"})
    seed = int(body.get("seed") or 0)
    return json.dumps({"question": f"where do I find the thing numbered {seed} and {seed // 7}?"})


@pytest.fixture
def options(fake_openai: FakeOpenAI) -> dict[str, Any]:
    """generate's keywords for a Batch API run at the fake server, polled often."""
    fake_openai.chat_handler = handler
    return {"batch": True, "poll_interval": 0.01, "base_url": fake_openai.base_url}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_batch_run_writes_the_same_records_without_live_requests(fake_openai, options, tmp_path):
    output = tmp_path / "s.jsonl"
    statuses: list[BatchStatus] = []
    summary = generate(make_corpus(4), output, per_chunk=2, batch_status=statuses.append, **options)
    assert [s.status for s in statuses][-1] == "completed"
    assert len(statuses) >= 2
    assert summary.total == 8
    assert fake_openai.count("batches") == 1
    assert fake_openai.count("chat") == 0
    stage = summary.stage("generation")
    assert stage.requests == 8
    assert stage.tokens_in > 0
    assert not batch_state_path(GenerationStore(output)).exists()
    rerun = generate(make_corpus(4), output, GenerateConfig(per_chunk=2), **options)
    assert fake_openai.count("batches") == 1
    assert rerun.kept == 8


def test_filtered_answers_and_the_judge_take_further_rounds(fake_openai, options, tmp_path):
    fake_openai.script([json.dumps({"question": "Topic0 configuration lives in settings file number 0?"})])
    config = GenerateConfig(max_overlap=0.5, judge=True, concurrency=1)
    summary = generate(make_corpus(2), tmp_path / "s.jsonl", config, **options)
    assert summary.total == 2
    assert fake_openai.count("batches") >= 3  # questions, then judge and the regenerated question, ...
    assert summary.filtered.get("overlap") == 1
    assert summary.stage("judge").requests == 2


def test_run_stopped_while_the_batch_runs_resumes_the_same_batch(fake_openai, options, tmp_path):
    output = tmp_path / "s.jsonl"
    with pytest.raises(LLMError, match=r"still .*run the same command again"):
        generate(make_corpus(3), output, **options, batch_timeout=0.0)
    state = json.loads(batch_state_path(GenerationStore(output)).read_text())
    assert len(state["requests"]) == 3
    summary = generate(make_corpus(3), output, **options)
    assert fake_openai.count("batches") == 1  # resumed, not submitted again
    assert summary.total == 3


def test_a_failed_item_is_asked_again_in_the_next_batch(fake_openai, options, tmp_path):
    fake_openai.inject_fault("500", times=1, endpoint="chat")
    summary = generate(make_corpus(2), tmp_path / "s.jsonl", **options)
    assert summary.total == 2
    assert fake_openai.count("batches") == 2
    failures = summary.stage("generation").failures
    assert sum(failures.values()) == 1
    assert all(reason.startswith("batch_") for reason in failures)


def test_items_no_batch_answers_are_recorded_as_failures(fake_openai, options, tmp_path):
    fake_openai.inject_fault("500", times=100, endpoint="chat")
    output = tmp_path / "s.jsonl"
    with pytest.raises(RealrecallError, match="no question was kept"):
        generate(make_corpus(1), output, max_attempts=1, **options)
    [failure] = records(output.with_name("s.failures.jsonl"))
    assert failure["reason"] == "batch_unanswered"
    assert fake_openai.count("batches") == 2  # max_attempts + 1 rounds


def test_a_full_disk_while_caching_a_batch_keeps_its_id_and_the_rerun_downloads_it_again(
    fake_openai, options, tmp_path, monkeypatch
):
    output = tmp_path / "s.jsonl"
    cache = tmp_path / "s.cache.jsonl"
    cache.touch()
    fill_disk_at(monkeypatch, cache, limit=10)
    with pytest.raises(OutputError, match="the disk is full"):
        generate(make_corpus(3), output, **options)
    state = json.loads(batch_state_path(GenerationStore(output)).read_text())
    assert state["batch_id"] is not None  # the answers paid for can still be fetched

    monkeypatch.undo()
    summary = generate(make_corpus(3), output, **options)
    assert summary.total == 3
    assert fake_openai.count("batches") == 1  # downloaded again, not paid for twice


def test_a_state_left_before_submitting_is_dropped_and_its_requests_asked_again(
    fake_openai, options, tmp_path
):
    output = tmp_path / "s.jsonl"
    state = batch_state_path(GenerationStore(output))
    state.write_text(json.dumps({"batch_id": None, "requests": {}}) + "\n")
    summary = generate(make_corpus(2), output, **options)
    assert summary.total == 2
    assert fake_openai.count("batches") == 1
    assert not state.exists()


def test_the_batch_api_and_the_ray_engine_are_one_rule_wherever_both_are_asked(tmp_path):
    with pytest.raises(SettingError, match=r"^batch and the Ray engine are two ways to send the requests"):
        GenerateConfig(batch_settings=BatchSettings(batch=True), engine_settings=EngineSettings(engine="ray"))
    with pytest.raises(SettingError, match=r"^batch and the Ray engine"):
        settings_from(GenerateConfig, {"batch": True, "engine": "ray"})
    done = cli.run(
        "generate", "--corpus", "c.jsonl", "--output", "s.jsonl", "--batch", "--engine", "ray", cwd=tmp_path
    )
    assert done.err_lines == [
        "error: --batch and the Ray engine are two ways to send the requests; choose one"
    ]


def test_the_settings_batch_fields_make_a_batch_run_from_python_and_the_command_line(
    fake_openai, options, tmp_path
):
    # In Python: GenerateConfig's batch fields, as an object or as keywords over one, the same run.
    config = GenerateConfig(
        batch_settings=BatchSettings(batch=True, poll_interval=0.01), base_url=fake_openai.base_url
    )
    by_object = generate(make_corpus(2), tmp_path / "a.jsonl", config)
    assert by_object.total == 2
    assert (fake_openai.count("batches"), fake_openai.count("chat")) == (1, 0)
    (tmp_path / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": chunk.id, "text": chunk.text}) + "\n" for chunk in make_corpus(2))
    )
    done = cli.run(
        "generate", "--corpus", "chunks.jsonl", "--output", "b.jsonl", "--batch", "--poll-interval", "0.01",
        "--base-url", fake_openai.base_url, "--strategy", "direct", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("batch ") and "completed" in line for line in done.err_lines)
    assert (fake_openai.count("batches"), fake_openai.count("chat")) == (2, 0)


def test_batchoptions_given_as_batch_is_refused_naming_what_replaced_it(tmp_path):
    with pytest.raises(SettingError, match=r"^batch is a setting now, true or false: BatchOptions are no "):
        generate(make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(), batch=BatchOptions())


def test_realrecalls_own_client_gives_the_batches_their_endpoint(fake_openai, monkeypatch, tmp_path):
    fake_openai.chat_handler = handler
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: not asked
    client = OpenAIChatClient(LLMConfig(base_url=fake_openai.base_url, max_attempts=2))
    summary = generate(make_corpus(2), tmp_path / "s.jsonl", client=client, batch=True, poll_interval=0.01)
    assert summary.total == 2
    assert (fake_openai.count("batches"), fake_openai.count("chat")) == (1, 0)


def test_a_client_that_names_no_endpoint_cannot_send_batches(tmp_path):
    with pytest.raises(InputError, match=r"^the Batch API is asked at an endpoint, and a FakeChatClient "):
        generate(make_corpus(1), tmp_path / "s.jsonl", client=FakeChatClient(), batch=True)


def test_agenerate_takes_the_settings_fields_as_keywords_too(fake_openai, options, tmp_path):
    summary = asyncio.run(agenerate(make_corpus(2), tmp_path / "s.jsonl", per_chunk=2, **options))
    assert summary.total == 4
    with pytest.raises(
        SettingError, match=r"^'per_chunks' is not a setting of generate; did you mean 'per_chunk'"
    ):
        asyncio.run(agenerate(make_corpus(2), tmp_path / "s.jsonl", per_chunks=2))

"""The Batch API against the real HTTP fake: input file, submit, poll, download, resume, item errors."""

from __future__ import annotations

import asyncio
import json

import pytest

from realrecall.errors import InputError, LLMError
from realrecall.llm import (
    BatchItemError,
    ChatRequest,
    ChatResult,
    LLMConfig,
    download_batch_results,
    get_batch,
    poll_batch,
    submit_batch,
    write_batch_input,
)
from support.fake_openai import FakeOpenAI


@pytest.fixture
def requests(question_request: ChatRequest) -> dict[str, ChatRequest]:
    plain = ChatRequest(messages=({"role": "user", "content": "Say hi"},), model="gpt-4o-mini")
    return {"q1": question_request, "q2": plain, "q3": question_request}


def test_input_file_has_one_post_line_per_request(requests: dict[str, ChatRequest]) -> None:
    lines = [json.loads(line) for line in write_batch_input(requests).decode("utf-8").splitlines()]

    assert [line["custom_id"] for line in lines] == ["q1", "q2", "q3"]
    assert {(line["method"], line["url"]) for line in lines} == {("POST", "/v1/chat/completions")}
    assert lines[0]["body"] == requests["q1"].to_body()
    assert lines[0]["body"]["response_format"]["type"] == "json_schema"
    assert "response_format" not in lines[1]["body"]


def test_empty_batch_is_refused() -> None:
    with pytest.raises(InputError, match="at least one request"):
        write_batch_input({})


def test_whole_lifecycle_submit_poll_download(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    batch_id = asyncio.run(submit_batch(config, requests))
    status = asyncio.run(poll_batch(config, batch_id, interval=0.01))
    results = asyncio.run(download_batch_results(config, status, requests=requests))

    [upload] = fake_openai.bodies("files")
    assert upload["purpose"] == "batch"
    assert upload["content"] == write_batch_input(requests)
    [created] = fake_openai.bodies("batches")
    assert created["completion_window"] == "24h"
    assert created["endpoint"] == "/v1/chat/completions"
    assert fake_openai.count("batch_get") == 2  # validating -> in_progress -> completed
    assert status.status == "completed"
    assert (status.counts.total, status.counts.completed, status.counts.failed) == (3, 3, 0)
    assert set(results) == {"q1", "q2", "q3"}
    assert all(isinstance(result, ChatResult) for result in results.values())
    assert json.loads(results["q1"].text)["questions"]  # type: ignore[union-attr]
    assert results["q1"].response_format_used == "json_schema"  # type: ignore[union-attr]
    assert results["q2"].response_format_used == "none"  # type: ignore[union-attr]


def test_a_stopped_run_resumes_from_the_batch_id(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    batch_id = asyncio.run(submit_batch(config, requests))
    # A later process knows only the id.
    first_look = asyncio.run(get_batch(config, batch_id))
    assert not first_look.is_terminal
    with pytest.raises(LLMError, match="no result files yet"):
        asyncio.run(download_batch_results(config, first_look))

    status = asyncio.run(poll_batch(config, batch_id, interval=0.01))
    once = asyncio.run(download_batch_results(config, status))
    again = asyncio.run(download_batch_results(config, status))

    assert once == again
    assert fake_openai.count("batches") == 1


def test_poll_with_a_timeout_returns_the_last_status_seen(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    batch_id = asyncio.run(submit_batch(config, requests))
    status = asyncio.run(poll_batch(config, batch_id, interval=10, timeout=1))
    assert status.status == "in_progress"
    assert fake_openai.count("batch_get") == 1


def test_poll_retries_a_transient_error(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    batch_id = asyncio.run(submit_batch(config, requests))
    fake_openai.inject_fault("502", endpoint="batch_get")
    status = asyncio.run(poll_batch(config, batch_id, interval=0.01))
    assert status.status == "completed"


def test_failed_and_missing_items_come_back_as_item_errors(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    batch_id = asyncio.run(submit_batch(config, {"q1": requests["q1"], "q2": requests["q2"]}))
    fake_openai.inject_fault("500")  # the first item the batch runs fails
    status = asyncio.run(poll_batch(config, batch_id, interval=0.01))
    results = asyncio.run(download_batch_results(config, status, requests=requests))

    assert status.error_file_id is not None
    assert (status.counts.completed, status.counts.failed) == (1, 1)
    assert isinstance(results["q1"], BatchItemError)
    assert results["q1"].status_code == 500
    assert isinstance(results["q2"], ChatResult)
    assert results["q3"] == BatchItemError("q3", None, "missing", "the batch reported nothing for it")


def test_endpoint_without_json_schema_reports_those_items_as_errors(
    fake_openai: FakeOpenAI, config: LLMConfig, requests: dict[str, ChatRequest]
) -> None:
    fake_openai.supports_json_schema = False
    batch_id = asyncio.run(submit_batch(config, requests))
    results = asyncio.run(
        download_batch_results(config, asyncio.run(poll_batch(config, batch_id, interval=0.01)))
    )

    assert isinstance(results["q1"], BatchItemError)
    assert results["q1"].status_code == 400
    assert "response_format" in results["q1"].message
    assert isinstance(results["q2"], ChatResult)


def test_a_key_echoed_in_batch_answers_and_errors_is_redacted(
    fake_openai: FakeOpenAI,
    config: LLMConfig,
    requests: dict[str, ChatRequest],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-proj-SECRETSECRET0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    fake_openai.script(
        [
            {"content": json.dumps({"questions": [f"key {secret}?"]}), "model": f"m-{secret}"},
            {"error": f"bad request from {secret}", "status": 400},
        ]
    )
    batch_id = asyncio.run(submit_batch(config, requests))
    status = asyncio.run(poll_batch(config, batch_id, interval=0.01))
    results = asyncio.run(download_batch_results(config, status, requests=requests))

    assert "SECRETSECRET" not in repr(results)
    answered = [result for result in results.values() if isinstance(result, ChatResult)]
    assert any("[redacted]" in result.text and result.model == "m-[redacted]" for result in answered)
    (failed,) = [result for result in results.values() if isinstance(result, BatchItemError)]
    assert failed.message == "bad request from [redacted]"

"""OpenAIChatClient against the real HTTP fake: request shape, every fault, fallback, refusal, secrets."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from realrecall.errors import LLMCallError, LLMError
from realrecall.llm import ChatRequest, ChatResult, LLMConfig, OpenAIChatClient, Usage
from support.fake_openai import FakeOpenAI, answer_together


def complete(client: OpenAIChatClient, request: ChatRequest) -> ChatResult:
    """One call in a loop of its own, closing the connections after it; the client stays usable."""

    async def run() -> ChatResult:
        try:
            return await client.complete(request)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_request_carries_model_messages_and_strict_json_schema(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    result = complete(OpenAIChatClient(config), question_request)

    [(endpoint, body, headers)] = fake_openai.requests
    assert endpoint == "chat"
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == list(question_request.messages)
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 200
    assert body["seed"] == 7
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "questions",
            "strict": True,
            "schema": dict(question_request.json_schema or {}),
        },
    }
    assert headers["x-stainless-retry-count"] == "0"
    assert "authorization" not in headers
    assert json.loads(result.text)["questions"]
    assert result.finish_reason == "stop"
    assert result.model == "gpt-4o-mini"
    assert result.attempts == 1
    assert result.refusal is None
    assert result.response_format_used == "json_schema"


def test_request_without_schema_sends_no_response_format(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    fake_openai.script(["plain answer"])
    request = ChatRequest(messages=({"role": "user", "content": "hi"},), model="m")
    result = complete(OpenAIChatClient(config), request)

    assert "response_format" not in fake_openai.bodies("chat")[0]
    assert result.text == "plain answer"
    assert result.response_format_used == "none"


class RecordedSleep:
    """Stands in for asyncio.sleep: records each wait the retry policy asks for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_429_waits_at_least_retry_after_then_succeeds(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("429", retry_after=1)
    sleep = RecordedSleep()
    client = OpenAIChatClient(config, sleep=sleep)

    result = complete(client, question_request)

    assert len(sleep.waits) == 1
    assert 1.0 <= sleep.waits[0] <= config.max_wait
    assert result.attempts == 2
    assert fake_openai.count("chat") == 2
    assert client.stats.retries == {"rate_limited": 1}


def test_retry_after_longer_than_max_wait_is_capped(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("429", retry_after=30)
    sleep = RecordedSleep()
    result = complete(OpenAIChatClient(replace(config, max_wait=0.2), sleep=sleep), question_request)

    assert sleep.waits == [0.2]
    assert result.attempts == 2


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("500", "server_error"),
        ("503", "server_error"),
        ("timeout", "timeout"),
        ("disconnect", "connection"),
        ("malformed", "malformed_response"),
        ("empty", "empty_response"),
    ],
)
def test_transient_fault_is_retried_then_succeeds(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest, kind: str, reason: str
) -> None:
    fake_openai.inject_fault(kind)
    client = OpenAIChatClient(replace(config, timeout=0.5))

    result = complete(client, question_request)

    assert json.loads(result.text)["questions"]
    assert result.attempts == 2
    assert fake_openai.count("chat") == 2
    assert client.stats.retries == {reason: 1}
    assert client.stats.failures == {}


def test_spent_budget_raises_llm_error_naming_reason_and_attempts(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("429", times=5)
    client = OpenAIChatClient(config)

    with pytest.raises(LLMError, match=r"^rate limited \(429\) after 3 attempts") as caught:
        complete(client, question_request)

    error = caught.value
    assert isinstance(error, LLMCallError)
    assert (error.reason, error.status, error.attempts) == ("rate_limited", 429, 3)
    assert fake_openai.count("chat") == 3  # the SDK's own retries are off: N attempts are N requests
    assert client.stats.failures == {"rate_limited": 1}
    assert client.stats.retries == {"rate_limited": 2}


def test_one_attempt_budget_sends_exactly_one_request(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("500")
    with pytest.raises(LLMCallError, match=r"server error \(500\) after 1 attempt\b"):
        complete(OpenAIChatClient(replace(config, max_attempts=1)), question_request)
    assert fake_openai.count("chat") == 1


def test_non_retryable_400_fails_at_once(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("400")
    client = OpenAIChatClient(config)

    with pytest.raises(
        LLMCallError, match=r"^bad request \(400\) after 1 attempt: Injected client error 400"
    ) as caught:
        complete(client, question_request)

    assert caught.value.reason == "bad_request"
    assert fake_openai.count("chat") == 1
    assert client.stats.retries == {}


def test_rejected_json_schema_falls_back_to_json_object_and_remembers(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.supports_json_schema = False
    client = OpenAIChatClient(config)

    first = complete(client, question_request)
    second = complete(client, question_request)

    formats = [body["response_format"]["type"] for body in fake_openai.bodies("chat")]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert (first.response_format_used, first.attempts) == ("json_object", 2)
    assert (second.response_format_used, second.attempts) == ("json_object", 1)
    assert client.response_format == "json_object"
    assert client.stats.fallbacks == {"json_object": 1}
    # Without Structured Outputs the model still has to see the schema.
    last_message = fake_openai.bodies("chat")[1]["messages"][-1]
    assert last_message["role"] == "system"
    assert '"questions"' in last_message["content"]


def test_one_off_json_schema_rejection_fault_also_falls_back(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("reject_json_schema")
    result = complete(OpenAIChatClient(config), question_request)
    assert result.response_format_used == "json_object"


def test_endpoint_without_json_mode_gets_no_response_format(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.supports_json_schema = False
    fake_openai.supports_json_object = False
    client = OpenAIChatClient(config)

    result = complete(client, question_request)

    bodies = fake_openai.bodies("chat")
    assert [body.get("response_format", {}).get("type") for body in bodies] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert (result.response_format_used, result.attempts) == ("none", 3)
    assert client.stats.failures == {}


def test_schema_breaking_strict_rules_fails_without_fallback(
    fake_openai: FakeOpenAI, config: LLMConfig
) -> None:
    loose = {
        "type": "object",
        "properties": {"questions": {"type": "array"}},
    }  # no required, no additionalProperties
    request = ChatRequest(messages=({"role": "user", "content": "hi"},), model="m", json_schema=loose)
    client = OpenAIChatClient(config)

    with pytest.raises(
        LLMCallError, match=r"^invalid schema \(400\) after 1 attempt: Invalid schema for"
    ) as caught:
        complete(client, request)

    assert caught.value.reason == "invalid_schema"
    assert fake_openai.count("chat") == 1
    assert client.response_format == "json_schema"


def test_handler_error_answer_is_a_client_error(fake_openai: FakeOpenAI, config: LLMConfig) -> None:
    fake_openai.script([{"error": "This model's maximum context length is 8192 tokens.", "status": 400}])
    request = ChatRequest(messages=({"role": "user", "content": "hi"},), model="m")
    with pytest.raises(LLMCallError, match="maximum context length") as caught:
        complete(OpenAIChatClient(config), request)
    assert caught.value.reason == "bad_request"


def test_refusal_is_returned_not_retried(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("refusal")
    result = complete(OpenAIChatClient(config), question_request)

    assert result.refusal
    assert result.text == ""
    assert fake_openai.count("chat") == 1


def test_truncated_output_reports_finish_reason_length(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("truncated")
    result = complete(OpenAIChatClient(config), question_request)

    assert result.finish_reason == "length"
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.text)
    assert fake_openai.count("chat") == 1


def test_usage_and_stats_add_up_over_calls(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.script(
        [
            {"content": "{}", "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
            {"content": "{}", "usage": {"prompt_tokens": 20, "completion_tokens": 4}},
        ]
    )
    fake_openai.inject_fault("500")
    client = OpenAIChatClient(config)

    first = complete(client, question_request)
    second = complete(client, question_request)

    assert first.usage + second.usage == Usage(30, 7)
    stats = client.stats
    assert (stats.requests, stats.prompt_tokens, stats.completion_tokens) == (3, 30, 7)
    assert stats.retries == {"server_error": 1}


def test_api_key_never_appears_in_error_repr_or_stats(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-proj-SECRETSECRET0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    fake_openai.expected_api_key = "sk-the-right-one"  # the fake echoes the wrong key, as the real API does
    client = OpenAIChatClient(config)

    with pytest.raises(LLMCallError) as caught:
        complete(client, question_request)

    error = caught.value
    assert error.reason == "auth"
    assert "Incorrect API key provided" in str(error)
    for text in (str(error), repr(error), repr(client), repr(client.stats), repr(config)):
        assert secret not in text
        assert "SECRETSECRET" not in text
    assert error.__cause__ is None
    assert error.__suppress_context__
    assert all(secret not in str(value) for value in fake_openai.requests)


def test_concurrent_completions_overlap(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.chat_handler = answer_together(16)  # no answer until all 16 are in flight at once
    client = OpenAIChatClient(replace(config, timeout=60.0, max_attempts=1))

    async def many() -> list[ChatResult]:
        async with client:
            return await asyncio.gather(*(client.complete(question_request) for _ in range(16)))

    results = asyncio.run(many())

    assert len(results) == 16
    assert fake_openai.count("chat") == 16


def test_one_client_serves_several_event_loops(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    client = OpenAIChatClient(config)
    complete(client, question_request)
    complete(client, question_request)
    assert fake_openai.count("chat") == 2


def test_client_works_as_an_async_context_manager(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    async def use() -> str:
        async with OpenAIChatClient(config) as client:
            return (await client.complete(question_request)).text

    assert json.loads(asyncio.run(use()))["questions"]


def test_a_key_echoed_inside_an_answer_is_redacted_before_anyone_stores_it(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-proj-SECRETSECRET0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    half_masked = f"{secret[:14]}****{secret[-8:]}"
    fake_openai.script(
        [
            {
                "content": json.dumps({"questions": [f"is {secret} the key? or {half_masked}?"]}),
                "model": secret,
            },
            {"content": None, "refusal": f"I will not repeat {secret}"},
        ]
    )
    client = OpenAIChatClient(config)

    answer = complete(client, question_request)
    refused = complete(client, question_request)

    assert json.loads(answer.text) == {"questions": ["is [redacted] the key? or [redacted]****[redacted]?"]}
    assert answer.model == "[redacted]"
    assert refused.refusal == "I will not repeat [redacted]"
    for result in (answer, refused):
        assert "SECRETSECRET" not in repr(result)


def test_answers_without_the_key_are_left_exactly_as_written() -> None:
    from realrecall.llm.endpoint import redact

    secret = "sk-proj-SECRETSECRET0123456789abcdef"
    text = '{"question": "why does my printer fail with [error] on my SECRET 0123 folder?"}'
    assert redact(text, secret) == text


def test_answers_are_read_without_the_sdks_typed_create(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The typed create() walks every body against the SDK's TypedDicts and builds pydantic models of
    # the answer (a third of the client's CPU a request): the client posts the plain body instead.
    from openai.resources.chat.completions import AsyncCompletions

    async def typed_create(*args: object, **kwargs: object) -> None:
        raise AssertionError("chat.completions.create was called")

    monkeypatch.setattr(AsyncCompletions, "create", typed_create)
    fake_openai.script(
        [{"content": '{"questions": ["q"]}', "usage": {"prompt_tokens": 11, "completion_tokens": 3}}]
    )
    result = complete(OpenAIChatClient(config), question_request)

    assert fake_openai.bodies("chat")[0] == question_request.to_body()
    assert (result.text, result.usage, result.model) == ('{"questions": ["q"]}', Usage(11, 3), "gpt-4o-mini")


@pytest.mark.parametrize(
    ("body", "fault"),
    [
        ("[1, 2]", "malformed_response"),
        ('"text"', "malformed_response"),
        ("{}", "empty_response"),
        ('{"choices": []}', "empty_response"),
        ('{"choices": {"a": 1}}', "malformed_response"),
        ('{"choices": [{"index": 0}]}', "malformed_response"),
        ('{"choices": [{"message": {"content": ["a", "b"]}}]}', "malformed_response"),
        ('{"choices": [{"message": {"content": null, "refusal": 7}}]}', "malformed_response"),
        ('{"choices": [{"message": ', "malformed_response"),
    ],
)
def test_a_body_that_is_no_chat_completion_is_a_retryable_fault(body: str, fault: str) -> None:
    from realrecall.llm.client import first_choice
    from realrecall.llm.retry import classify

    try:
        first_choice(body)
    except Exception as exc:  # whatever it raises, the retry policy must know it as the endpoint's fault
        found = classify(exc)
    else:
        pytest.fail("no fault raised")
    assert found is not None
    assert (found.reason, found.retryable) == (fault, True)


def test_an_answer_without_usage_model_or_finish_reason_still_reads() -> None:
    from realrecall.llm.client import answer_result, first_choice

    completion = first_choice(
        '{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": true}}'
    )
    result = answer_result(completion, attempts=2, response_format="json_object")
    assert result == ChatResult("hi", "unknown", Usage(0, 0), "", 2, None, "json_object")


def test_a_call_that_succeeds_at_once_skips_the_retry_machinery(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Setting tenacity up costs more CPU than most calls that succeed at once: it is built only
    # after a first fault, which it then sees as attempt 1 (replayed, not sent again).
    from realrecall.llm import retry

    built = []
    real = retry.AsyncRetrying
    monkeypatch.setattr(retry, "AsyncRetrying", lambda **kwargs: built.append(kwargs) or real(**kwargs))
    client = OpenAIChatClient(config, sleep=RecordedSleep())
    assert complete(client, question_request).attempts == 1
    assert built == []

    fake_openai.inject_fault("500")
    assert complete(client, question_request).attempts == 2
    assert len(built) == 1
    assert fake_openai.count("chat") == 3
    assert client.stats.requests == 3
    assert client.stats.retries == {"server_error": 1}


def test_an_endpoint_that_never_answers_is_named_in_the_one_line(
    config: LLMConfig, question_request: ChatRequest
) -> None:
    from support.silent_server import SilentServer

    with SilentServer() as server:
        silent = replace(config, base_url=f"{server.url}/v1", timeout=0.3, max_attempts=2)
        with pytest.raises(LLMCallError) as caught:
            complete(OpenAIChatClient(silent), question_request)

    assert str(caught.value).startswith(f"timed out after 2 attempts at {server.url}/v1")
    assert caught.value.reason == "timeout"


def test_a_refused_request_does_not_name_the_endpoint(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.inject_fault("400")
    with pytest.raises(LLMCallError) as caught:
        complete(OpenAIChatClient(config), question_request)
    assert fake_openai.base_url not in str(caught.value)  # the endpoint answered: what it said matters

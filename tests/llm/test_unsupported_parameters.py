"""An endpoint that refuses max_tokens or temperature (reasoning models): dropped and remembered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from generate.fakes import make_corpus
from realrecall.errors import LLMCallError
from realrecall.generate import GenerateConfig, generate
from realrecall.llm import ChatRequest, ChatResult, LLMConfig, OpenAIChatClient
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler


def complete_all(client: OpenAIChatClient, requests: list[ChatRequest]) -> list[ChatResult]:
    async def run() -> list[ChatResult]:
        try:
            return [await client.complete(request) for request in requests]
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_refused_parameters_are_dropped_then_left_out_from_the_start(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.unsupported_parameters = frozenset({"max_tokens", "temperature"})
    client = OpenAIChatClient(config)
    first, second = complete_all(client, [question_request, question_request])
    assert json.loads(first.text)["questions"]
    assert json.loads(second.text)["questions"]
    sent = fake_openai.bodies("chat")
    # Refused max_tokens, then refused temperature, then answered; the second call asks once.
    assert [sorted({"max_tokens", "temperature"} & set(body)) for body in sent] == [
        ["max_tokens", "temperature"],
        ["temperature"],
        [],
        [],
    ]
    assert client.dropped_parameters == {"max_tokens", "temperature"}
    assert first.attempts == 3
    assert first.dropped == second.dropped == {"max_tokens", "temperature"}


def test_a_parameter_the_endpoint_takes_is_kept(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    client = OpenAIChatClient(config)
    complete_all(client, [question_request])
    [body] = fake_openai.bodies("chat")
    assert body["max_tokens"] == 200
    assert body["temperature"] == 0.2
    assert client.dropped_parameters == frozenset()


def test_another_bad_request_is_not_mistaken_for_a_refused_parameter(
    fake_openai: FakeOpenAI, config: LLMConfig, question_request: ChatRequest
) -> None:
    fake_openai.script(
        [{"error": "Invalid 'messages': the temperature of the sun is unknown", "status": 400}]
    )
    client = OpenAIChatClient(config)
    with pytest.raises(LLMCallError) as caught:
        complete_all(client, [question_request])
    assert caught.value.reason == "bad_request"
    assert fake_openai.count("chat") == 1
    assert client.dropped_parameters == frozenset()


def test_generate_against_a_reasoning_model_keeps_every_question(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.chat_handler = http_question_handler
    fake_openai.unsupported_parameters = frozenset({"max_tokens", "temperature"})
    client = OpenAIChatClient(LLMConfig(base_url=fake_openai.base_url, max_attempts=2, initial_wait=0.01))
    summary = generate(make_corpus(4), tmp_path / "s.jsonl", GenerateConfig(concurrency=1), client=client)
    assert summary.total == 4
    assert summary.missing == 0
    refused = [body for body in fake_openai.bodies("chat") if {"max_tokens", "temperature"} & set(body)]
    assert len(refused) == 2  # once each, then remembered

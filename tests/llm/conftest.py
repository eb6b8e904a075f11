"""Fixtures of the LLM tests: a fast retry config aimed at the fake server, and a typical request."""

from __future__ import annotations

from typing import Any

import pytest

from realrecall.llm import ChatRequest, LLMConfig
from support.fake_openai import FakeOpenAI

QUESTIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"questions": {"type": "array", "items": {"type": "string"}}},
    "required": ["questions"],
    "additionalProperties": False,
}


@pytest.fixture
def config(fake_openai: FakeOpenAI) -> LLMConfig:
    """Three attempts, short waits, a 2 s timeout: every fault test stays well under a few seconds."""
    return LLMConfig(
        base_url=fake_openai.base_url, timeout=2.0, max_attempts=3, max_wait=2.0, initial_wait=0.01
    )


@pytest.fixture
def question_request() -> ChatRequest:
    return ChatRequest(
        messages=(
            {"role": "system", "content": "You write search questions about a passage."},
            {"role": "user", "content": "Passage: The Eiffel Tower was finished in 1889."},
        ),
        model="gpt-4o-mini",
        temperature=0.2,
        max_tokens=200,
        json_schema=QUESTIONS_SCHEMA,
        schema_name="questions",
        seed=7,
    )

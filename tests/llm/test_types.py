"""The plain LLM types: request bodies, validation, usage arithmetic, and the package's public names."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

import realrecall.llm
from realrecall.errors import InputError
from realrecall.llm import ChatRequest, LLMConfig, Usage
from realrecall.llm.types import SCHEMA_INSTRUCTION

SCHEMA = MappingProxyType({"type": "object", "properties": {"a": {"type": "string"}}, "required": ("a",)})


def request(**changes: object) -> ChatRequest:
    fields: dict[str, object] = {
        "messages": ({"role": "user", "content": "hi"},),
        "model": "m",
        "json_schema": SCHEMA,
    }
    fields.update(changes)
    return ChatRequest(**fields)  # type: ignore[arg-type]


def test_body_is_plain_json_even_from_read_only_schema() -> None:
    body = request().to_body()
    assert json.loads(json.dumps(body)) == body
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["a"]


def test_body_leaves_out_unset_options() -> None:
    body = request(json_schema=None).to_body()
    assert body == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.7}


@pytest.mark.parametrize("mode", ["json_object", "none"])
def test_weaker_formats_carry_the_schema_in_a_system_message(mode: str) -> None:
    body = request().to_body(response_format=mode)  # type: ignore[arg-type]

    last = body["messages"][-1]
    assert last["role"] == "system"
    assert last["content"].startswith(SCHEMA_INSTRUCTION)
    assert json.loads(last["content"][len(SCHEMA_INSTRUCTION) :])["required"] == ["a"]
    assert body.get("response_format") == ({"type": "json_object"} if mode == "json_object" else None)


def test_request_keeps_its_own_copy_of_the_messages() -> None:
    message = {"role": "user", "content": "hi"}
    made = ChatRequest(messages=(message,), model="m")
    message["content"] = "changed"
    made.to_body()["messages"][0]["content"] = "changed too"
    assert made.messages[0]["content"] == "hi"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"messages": ()}, "at least one message"),
        ({"messages": ({"role": "user"},)}, "message 1"),
        ({"model": ""}, "model name"),
        ({"temperature": 3.0}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"schema_name": "has space"}, "schema_name"),
    ],
)
def test_bad_request_values_are_input_errors(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        request(**changes)


@pytest.mark.parametrize(
    "changes", [{"timeout": 0}, {"max_attempts": 0}, {"max_wait": -1}, {"api_key_env": ""}]
)
def test_bad_config_values_are_input_errors(changes: dict[str, object]) -> None:
    with pytest.raises(InputError):
        LLMConfig(**changes)  # type: ignore[arg-type]


def test_equal_requests_share_fingerprint_and_hash() -> None:
    first, second = request(), request(json_schema=dict(SCHEMA))
    assert first == second
    assert first.fingerprint() == second.fingerprint()
    assert len({first, second}) == 1
    assert request(seed=1).fingerprint() != first.fingerprint()


def test_usage_adds_up() -> None:
    total = Usage(1, 2) + Usage(10, 20)
    assert total == Usage(11, 22)
    assert total.total_tokens == 33


def test_public_names_are_all_exported() -> None:
    # The clients are exported lazily, and dir() lists only what is loaded: load every export first
    # (run alone, this test saw only the plain types; after the client tests, everything).
    for name in realrecall.llm.__all__:
        getattr(realrecall.llm, name)
    public = {name for name in dir(realrecall.llm) if not name.startswith("_")}
    modules = {"batch", "client", "deferred", "embeddings", "endpoint", "retry", "types", "annotations"}
    assert public - modules == set(realrecall.llm.__all__)

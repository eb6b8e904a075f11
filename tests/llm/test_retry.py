"""Retry-After parsing, key redaction, and where the API key may come from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.llm import LLMConfig, OpenAIChatClient
from realrecall.llm.endpoint import PLACEHOLDER_KEY, is_loopback, redact, resolve_endpoint
from realrecall.llm.retry import parse_retry_after


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds


def test_retry_after_as_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    waited = parse_retry_after({"retry-after": format_datetime(when, usegmt=True)})
    assert waited is not None
    assert 28 <= waited <= 30


def test_redact_removes_the_key_and_its_long_pieces() -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    text = f"Incorrect API key provided: {key}. Also sk-proj-abcd****************z0123 and plain words."
    cleaned = redact(text, key)
    assert key not in cleaned
    assert "sk-proj-abcd" not in cleaned
    assert "plain words" in cleaned


KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


@given(
    # The loopback placeholder is no secret and redact leaves it alone on purpose (Hypothesis draws
    # string constants from the code under test, so it does come up).
    key=st.text(KEY_ALPHABET, min_size=8, max_size=80).filter(lambda key: key != PLACEHOLDER_KEY),
    before=st.text(max_size=40),
    after=st.text(max_size=40),
)
def test_redacted_text_never_holds_the_key(key: str, before: str, after: str) -> None:
    assert key not in redact(f"{before}{key}{after}{key}", key)


def test_missing_key_for_a_remote_endpoint_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(InputError, match="MY_KEY is not set"):
        OpenAIChatClient(LLMConfig(base_url="https://models.example.org/v1", api_key_env="MY_KEY"))


def test_missing_key_for_a_loopback_endpoint_uses_a_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    endpoint = resolve_endpoint(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key_env="MY_KEY"))
    assert endpoint.api_key == PLACEHOLDER_KEY


def test_base_url_comes_from_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-shown-anywhere-123456")
    endpoint = resolve_endpoint(LLMConfig())
    assert endpoint.base_url == "http://localhost:8000/v1"
    assert "sk-not-shown" not in repr(endpoint)


def test_base_url_must_be_http() -> None:
    with pytest.raises(InputError, match="not an http"):
        resolve_endpoint(LLMConfig(base_url="127.0.0.1:8000"))


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:1/v1", True),
        ("http://127.9.9.9/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://localhost/v1", True),
        ("http://10.0.0.1/v1", False),
        ("https://models.example.org/v1", False),
    ],
)
def test_loopback_detection(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_a_short_key_is_redacted_only_where_it_stands_alone() -> None:
    # A one-letter key once turned every "x" of every answer into [redacted].
    assert (
        redact("max_tokens x exceeds the box; key=x.", "x")
        == "max_tokens [redacted] exceeds the box; key=[redacted]."
    )
    assert redact("none of them: none", "none") == "[redacted] of them: [redacted]"

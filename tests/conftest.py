"""Fixtures shared by every test area. Area-specific fixtures live in that area's conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.fake_openai import FakeOpenAI
from support.reference import find_reference_data


@pytest.fixture(scope="session")
def reference_data() -> Path:
    """The shared IR reference data (research licences: read by path, never copied into the repo)."""
    found = find_reference_data()
    if found is None:
        pytest.skip("shared reference data not found beside the project root or any folder above it")
    return found


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started fake OpenAI server on 127.0.0.1; OPENAI_BASE_URL and a placeholder key point at it."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder-key")
        yield server

"""Fixtures shared by every test area. Area-specific fixtures live in that area's conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DATA = ROOT.parent / "shared" / "reference-data"


@pytest.fixture(scope="session")
def reference_data() -> Path:
    """The shared IR reference data (research licences: read by path, never copied into the repo)."""
    if not REFERENCE_DATA.is_dir():
        pytest.skip(f"shared reference data not found at {REFERENCE_DATA} (it sits beside the project root)")
    return REFERENCE_DATA


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started fake OpenAI server on 127.0.0.1; OPENAI_BASE_URL and a placeholder key point at it."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder-key")
        yield server

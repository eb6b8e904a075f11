"""Fixtures of the generate tests (the fakes themselves live in fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generate.fakes import FakeChatClient, make_corpus
from realrecall.corpus import Corpus


@pytest.fixture
def fake_client() -> FakeChatClient:
    return FakeChatClient()


@pytest.fixture
def corpus() -> Corpus:
    return make_corpus()


@pytest.fixture
def output(tmp_path: Path) -> Path:
    return tmp_path / "synthetic.jsonl"

"""Fixtures of the generate tests (the fakes themselves live in fakes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient, make_corpus
from realrecall.corpus import Corpus
from realrecall.generate.config import GenerateConfig

# Modules that test situation-first generation itself, under the real default strategy.
SITUATION_MODULES = ("test_prompting",)


@pytest.fixture(autouse=True)
def direct_strategy_by_default(request: pytest.FixtureRequest) -> Iterator[None]:
    """The engine tests (cache, resume, filters, batch, faults) script one answer per question and count
    requests: in this process they run the ``direct`` strategy unless a config names another. The
    situation strategy, the default outside the tests, is tested on the same engine in
    test_prompting.py; CLI subprocesses run the real default (their fake endpoint answers both steps).
    """
    if request.module.__name__.rsplit(".", 1)[-1] in SITUATION_MODULES:
        yield
        return
    # Not through monkeypatch: some tests call monkeypatch.undo() mid-test.
    defaults = GenerateConfig.__init__.__kwdefaults__
    assert defaults is not None
    assert "strategy" in defaults
    defaults["strategy"] = "direct"
    try:
        yield
    finally:
        defaults["strategy"] = None


@pytest.fixture
def fake_client() -> FakeChatClient:
    return FakeChatClient()


@pytest.fixture
def corpus() -> Corpus:
    return make_corpus()


@pytest.fixture
def output(tmp_path: Path) -> Path:
    return tmp_path / "synthetic.jsonl"

"""Adding a prompt strategy is one file (keyword_strategy.py, with its prompt) plus one registry line:
a register() call here. Nothing else names it, and it runs, dry-runs and is recorded under its name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generate import keyword_strategy
from generate.fakes import FakeChatClient, make_corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, estimate, generate
from realrecall.generate.strategies import STRATEGIES, choices, register, unregister
from realrecall.generate.templates import load_prompt
from realrecall.llm.types import ChatRequest
from realrecall.settings import settings_from
from support import cli
from support.questions import question_for_seed


@pytest.fixture
def keywords() -> Iterator[None]:
    register(keyword_strategy.STRATEGY)  # the one line that makes "keywords" a strategy
    yield
    unregister("keywords")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def keywords_after_feedback(request: ChatRequest) -> str:
    """A question ending in "?" at first; keywords once the feedback has said why it was rejected."""
    words = question_for_seed(request.seed or 0).removeprefix("why does my ").rstrip("?")
    told = any(
        keyword_strategy.PROBLEMS["not_keywords"] in message["content"] for message in request.messages
    )
    return json.dumps({"question": words if told else f"{words}?"})


@pytest.mark.usefixtures("keywords")
def test_a_registered_strategy_writes_the_questions_and_is_recorded_under_its_own_name(tmp_path):
    corpus, output = make_corpus(3), tmp_path / "s.jsonl"
    client = FakeChatClient(keywords_after_feedback)
    summary = generate(corpus, output, GenerateConfig(strategy="keywords", concurrency=1), client=client)
    assert summary.total == 3
    prompt = load_prompt(keyword_strategy.PROMPT)
    # Every request came from its own prompt, and every first answer was rejected by its own check.
    assert len(client.requests) == 6
    assert all(prompt.system.splitlines()[0] in request.messages[0]["content"] for request in client.requests)
    assert summary.filtered == {"not_keywords": 3}
    assert summary.generator["strategy"] == "keywords"
    for record in records(output):
        assert not record["query"].endswith("?")
        assert record["provenance"]["strategy"] == "keywords"
        assert record["provenance"]["prompt"] == {"name": "keyword_queries", "sha256": prompt.sha256}
        assert record["provenance"]["attempt"] == 1
    # Its answers are cached under its slot keys: a rerun asks nothing.
    generate(corpus, output, GenerateConfig(strategy="keywords"), client=client)
    assert len(client.requests) == 6


@pytest.mark.usefixtures("keywords")
def test_the_slot_keys_hold_the_strategy_so_another_strategy_asks_again(tmp_path):
    corpus, output = make_corpus(2), tmp_path / "s.jsonl"
    generate(corpus, output, GenerateConfig(strategy="direct"), client=FakeChatClient())
    direct_keys = {record["provenance"]["slot_key"] for record in records(output)}
    summary = generate(
        corpus, output, GenerateConfig(strategy="keywords"), client=FakeChatClient(keywords_after_feedback)
    )
    assert (summary.added, summary.removed) == (2, 2)
    assert direct_keys.isdisjoint(record["provenance"]["slot_key"] for record in records(output))


@pytest.mark.usefixtures("keywords")
def test_the_dry_run_prices_a_registered_strategy_first_when_it_is_the_runs_own(tmp_path):
    corpus, output = make_corpus(4), tmp_path / "s.jsonl"
    own = estimate(corpus, output, GenerateConfig(strategy="keywords"))
    assert [row.strategy for row in own.strategies] == [
        "keywords",
        *(name for name in STRATEGIES if name != "keywords"),
    ]
    assert (own.requests, own.strategies[0].requests) == (4, 4)
    assert own.tokens_out == 4 * keyword_strategy.ANSWER_TOKENS
    other = estimate(corpus, output, GenerateConfig(strategy="direct"))
    assert {row.strategy: row.requests for row in other.strategies}["keywords"] == 4
    result = cli.run("generate", "--corpus", str(corpus_file(tmp_path)), "--output", str(output), "--dry-run",
                     "--strategy", "keywords")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "strategy keywords (this run): 2 requests" in result.stdout


def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    rows = [
        {"id": f"a{i}", "text": f"The printer on floor {i} jams on A3 paper unless the tray is set."}
        for i in range(2)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.usefixtures("keywords")
def test_the_help_and_the_refusal_of_an_unknown_name_list_the_registry(tmp_path):
    assert "keywords: " + keyword_strategy.STRATEGY.summary in " ".join(
        cli.run("generate", "--help").stdout.split()
    )
    with pytest.raises(InputError) as caught:
        GenerateConfig(strategy="keyword")
    assert caught.value.message == "unknown strategy 'keyword'"
    assert caught.value.hint == f"choose from {choices()}"
    assert all(name in choices() for name in ("situation", "direct", "keywords"))


@pytest.mark.usefixtures("keywords")
def test_a_registered_strategy_refuses_what_it_cannot_run_when_the_config_is_made(tmp_path):
    with pytest.raises(InputError, match="the keywords strategy has a prompt of its own"):
        GenerateConfig(strategy="keywords", prompt=tmp_path / "mine.md")
    assert settings_from(GenerateConfig, {"strategy": "keywords"}).effective_strategy == "keywords"


def test_an_unregistered_strategy_is_refused(tmp_path):
    with pytest.raises(InputError, match="unknown strategy 'keywords'"):
        GenerateConfig(strategy="keywords")
    with pytest.raises(InputError, match="unknown strategy 'keywords'"):
        GenerateConfig(strategy="keywords", backend="extractive")

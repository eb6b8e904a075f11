"""Generation's footguns (issue 12 item 9), each pinned by a test that fails without its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generate.fakes import FakeChatClient, make_corpus, passage_of
from realrecall.corpus import Corpus
from realrecall.generate import GenerateConfig, generate
from realrecall.generate.batch import retryable
from realrecall.generate.config import Shard
from realrecall.generate.store import sidecar_paths
from realrecall.llm import BatchItemError
from realrecall.settings import settings_from
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler


def _gold_chunks(output: Path) -> set[str]:
    """The chunks an output's questions were written for."""
    return {chunk for line in output.read_text("utf-8").splitlines() for chunk in json.loads(line)["gold"]}


def _cache_keys(output: Path) -> set[str]:
    path = sidecar_paths(output)["cache"]
    return {json.loads(line)["key"] for line in path.read_text("utf-8").splitlines() if line.strip()}


# -- the cache is never pruned by a run over another shard or other parameters ---------------------


def test_a_run_over_another_shard_keeps_the_cached_answers_of_the_first(tmp_path: Path) -> None:
    corpus = make_corpus(12)
    output = tmp_path / "synthetic.jsonl"
    client = FakeChatClient()
    generate(corpus, output, GenerateConfig(shard=Shard(0, 2)), client=client)
    first = _cache_keys(output)
    paid = len(client.requests)
    assert paid > 0
    generate(corpus, output, GenerateConfig(shard=Shard(1, 2)), client=client)
    assert first <= _cache_keys(output)
    # Back to the first shard: every answer is replayed from the cache, none is paid for again.
    before = len(client.requests)
    summary = generate(corpus, output, GenerateConfig(shard=Shard(0, 2)), client=client)
    assert len(client.requests) == before
    assert summary.added == paid


def test_other_parameters_keep_the_cache_and_going_back_sends_nothing(tmp_path: Path) -> None:
    corpus = make_corpus(4)
    output = tmp_path / "synthetic.jsonl"
    client = FakeChatClient()
    generate(corpus, output, GenerateConfig(temperature=0.7), client=client)
    generate(corpus, output, GenerateConfig(temperature=0.2), client=client)
    sent = len(client.requests)
    generate(corpus, output, GenerateConfig(temperature=0.7), client=client)
    assert len(client.requests) == sent


def test_prune_drops_the_answers_this_run_does_not_plan(tmp_path: Path) -> None:
    corpus = make_corpus(4)
    output = tmp_path / "synthetic.jsonl"
    client = FakeChatClient()
    generate(corpus, output, GenerateConfig(temperature=0.7), client=client)
    old = _cache_keys(output)
    generate(corpus, output, GenerateConfig(temperature=0.2), client=client)
    assert old < _cache_keys(output)
    generate(corpus, output, GenerateConfig(temperature=0.2, prune=True), client=client)
    assert not old & _cache_keys(output)
    assert len(_cache_keys(output)) == 4


def test_prune_is_a_pipeline_option_too() -> None:
    assert settings_from(GenerateConfig, {"prune": True}).prune is True


# -- sampling is stable under corpus growth --------------------------------------------------------


def test_a_sample_count_keeps_its_chunks_when_the_corpus_grows(tmp_path: Path) -> None:
    # The case: --sample 50, then 40 chunks added: no sampled chunk may drop out.
    big = make_corpus(140, documents=4)
    first = Corpus(tuple(list(big)[:100]))
    output = tmp_path / "synthetic.jsonl"
    config = GenerateConfig(backend="extractive", sample=50)
    generate(first, output, config)
    before = _gold_chunks(output)
    summary_file = json.loads(sidecar_paths(output)["summary"].read_text("utf-8"))
    assert summary_file["sample_rate"] == 0.5
    summary = generate(big, output, config)
    assert summary.removed == 0
    assert before <= _gold_chunks(output)
    assert json.loads(sidecar_paths(output)["summary"].read_text("utf-8"))["sample_rate"] == 0.5
    # A share is a rate as given, whatever the corpus size: the same chunks, and new ones at that rate.
    share = tmp_path / "share.jsonl"
    generate(first, share, GenerateConfig(backend="extractive", sample=0.5))
    assert _gold_chunks(share) == before


# -- a shortfall does not stick silently ------------------------------------------------------------


def _copying_client() -> FakeChatClient:
    """Answers with the passage's own first words: every answer is above --max-overlap 0.5."""
    return FakeChatClient(
        handler=lambda request: json.dumps({"question": " ".join(passage_of(request).split()[:6]) + "?"})
    )


def test_a_shortfall_says_which_option_asks_again_and_that_option_does(tmp_path: Path) -> None:
    corpus = make_corpus(3)
    output = tmp_path / "synthetic.jsonl"
    client = _copying_client()
    client.script.append(json.dumps({"question": "why is my laptop not saving copies?"}))
    config = GenerateConfig(max_overlap=0.5, max_attempts=2, concurrency=1)
    first = generate(corpus, output, config, client=client)
    assert first.missing == 2
    assert len(client.requests) == 5
    # The rerun replays the cached rejections: nothing is sent, and the summary says what would.
    again = generate(corpus, output, config, client=client)
    assert len(client.requests) == 5
    assert again.warnings == (
        "2 question(s) fell short: all 2 attempts were rejected; a rerun with the same settings replays "
        "those answers and asks nothing new; --max-attempts 5 (max_attempts in a pipeline) asks again "
        "for them",
    )
    written = json.loads(again.summary_path.read_text("utf-8"))
    assert written["warnings"] == list(again.warnings)
    # The option it names asks the model again: attempts 3 to 5 of both questions.
    generate(corpus, output, GenerateConfig(max_overlap=0.5, max_attempts=5), client=client)
    assert len(client.requests) == 5 + 2 * 3


def test_a_run_without_shortfall_has_no_such_warning(tmp_path: Path) -> None:
    summary = generate(make_corpus(2), tmp_path / "s.jsonl", GenerateConfig(), client=FakeChatClient())
    assert summary.warnings == ()


# -- provenance.usage sums every attempt ------------------------------------------------------------


def test_usage_sums_every_attempt_also_those_replayed_after_a_resume(tmp_path: Path) -> None:
    # The fake client reports 100 tokens in and 10 out for every answer.
    corpus = make_corpus(2)
    output = tmp_path / "synthetic.jsonl"
    client = _copying_client()
    client.script.append(json.dumps({"question": "why is my laptop not saving copies?"}))
    generate(corpus, output, GenerateConfig(max_overlap=0.5, max_attempts=1, concurrency=1), client=client)
    # c1's first answer was rejected (and cached); the next run replays it and asks a second one.
    client.script.append(json.dumps({"question": "how come the badge reader ignores my card?"}))
    generate(corpus, output, GenerateConfig(max_overlap=0.5, max_attempts=2, concurrency=1), client=client)
    assert len(client.requests) == 3
    usage = {
        record["query_id"]: record["provenance"]["usage"]
        for record in map(json.loads, output.read_text("utf-8").splitlines())
    }
    assert usage["syn-c0-0"] == {"prompt_tokens": 100, "completion_tokens": 10}
    assert usage["syn-c1-0"] == {"prompt_tokens": 200, "completion_tokens": 20}


# -- non-retryable batch errors are not resubmitted -------------------------------------------------


@pytest.fixture
def batch_options(fake_openai: FakeOpenAI) -> dict[str, Any]:
    """generate's keywords for a Batch API run at the fake server, polled often."""
    fake_openai.chat_handler = http_question_handler
    return {"batch": True, "poll_interval": 0.01, "base_url": fake_openai.base_url}


def test_an_item_the_batch_refuses_for_good_is_not_submitted_again(
    fake_openai: FakeOpenAI, batch_options: dict[str, Any], tmp_path: Path
) -> None:
    # c0's request is refused (400: the request itself is wrong); c1's is answered.
    fake_openai.inject_fault("400", times=1, endpoint="chat")
    output = tmp_path / "synthetic.jsonl"
    summary = generate(make_corpus(2), output, GenerateConfig(max_attempts=3), **batch_options)
    assert fake_openai.count("batches") == 1  # without the fix: submitted again in a second batch
    assert summary.total == 1
    [failure] = [json.loads(line) for line in summary.failures_path.read_text("utf-8").splitlines()]
    assert failure["outcome"] == "failed"
    assert failure["reason"].startswith("batch_")
    assert failure["reason"] != "batch_unanswered"


def test_an_item_that_may_succeed_later_is_asked_again(
    fake_openai: FakeOpenAI, batch_options: dict[str, Any], tmp_path: Path
) -> None:
    fake_openai.inject_fault("429", times=1, endpoint="chat")
    summary = generate(make_corpus(2), tmp_path / "s.jsonl", GenerateConfig(), **batch_options)
    assert fake_openai.count("batches") == 2
    assert summary.total == 2


def test_which_batch_errors_are_worth_another_batch() -> None:
    def item(status: int | None) -> BatchItemError:
        return BatchItemError("k", status, "code", "")

    assert [retryable(item(s)) for s in (400, 401, 404, 422)] == [False] * 4
    assert [retryable(item(s)) for s in (None, 408, 409, 429, 500, 503)] == [True] * 6

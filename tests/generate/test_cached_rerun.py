"""A fully cached rerun decides from its caches: no chunk screened or read for its language again, no
question's language checked again, no SDK loaded (issue 33, item 7; the CPU is measured in
benchmarks/bench_cached_rerun.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient, make_corpus
from realrecall.corpus import Chunk, Corpus
from realrecall.generate import GenerateConfig, analysis_cache, generate, settle, setup
from realrecall.llm import DeferredChatClient, LLMConfig


class Reads:
    """Counts the calls of the functions that read chunks and questions, calling through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: dict[str, list[str]] = {"screen": [], "language": [], "check": []}
        screen, language, check = setup.screen_reason, setup.read_chunk_language, settle.wrong_language

        def counted_screen(chunk: Chunk) -> str | None:
            self.calls["screen"].append(chunk.id)
            return screen(chunk)

        def counted_language(chunk: Chunk) -> str | None:
            self.calls["language"].append(chunk.id)
            return language(chunk)

        def counted_check(question: str, expected: str, others: object = ()) -> str | None:
            self.calls["check"].append(question)
            return check(question, expected, others)  # type: ignore[arg-type]

        monkeypatch.setattr(setup, "screen_reason", counted_screen)
        monkeypatch.setattr(setup, "read_chunk_language", counted_language)
        monkeypatch.setattr(settle, "wrong_language", counted_check)

    def reset(self) -> None:
        for calls in self.calls.values():
            calls.clear()


def test_a_rerun_with_nothing_changed_reads_no_chunk_and_checks_no_question(
    monkeypatch: pytest.MonkeyPatch, output: Path
) -> None:
    reads = Reads(monkeypatch)
    corpus = make_corpus(6)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    assert sorted(reads.calls["screen"]) == sorted(corpus.ids)
    assert sorted(reads.calls["language"]) == sorted(corpus.ids)
    assert len(reads.calls["check"]) == 6  # each answer checked once, when it was kept
    reads.reset()

    client = FakeChatClient()
    summary = generate(corpus, output, GenerateConfig(), client=client)

    assert summary.kept == 6
    assert client.requests == []
    assert reads.calls == {"screen": [], "language": [], "check": []}


def test_a_changed_chunk_alone_is_read_again(monkeypatch: pytest.MonkeyPatch, output: Path) -> None:
    reads = Reads(monkeypatch)
    corpus = make_corpus(4)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    reads.reset()
    changed = Chunk("c2", "The backup job now runs every hour and keeps thirty copies of each file.")
    corpus = Corpus(tuple(changed if chunk.id == "c2" else chunk for chunk in corpus))

    summary = generate(corpus, output, GenerateConfig(), client=FakeChatClient())

    assert (summary.kept, summary.added, summary.removed) == (3, 1, 1)
    assert reads.calls["screen"] == ["c2"]
    assert reads.calls["language"] == ["c2"]
    assert len(reads.calls["check"]) == 1  # the new question's


def test_the_analysis_is_kept_by_chunk_hash_beside_the_output(output: Path) -> None:
    corpus = make_corpus(3)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())

    kept = json.loads(output.with_name("synthetic.analysis.json").read_text("utf-8"))

    assert kept["version"] == analysis_cache.VERSION
    assert set(kept["chunks"]) == {chunk.content_hash for chunk in corpus}
    assert {facts["language"] for facts in kept["chunks"].values()} == {"en"}
    assert {facts["screen"] for facts in kept["chunks"].values()} == {None}


def test_an_analysis_of_another_version_is_read_again(monkeypatch: pytest.MonkeyPatch, output: Path) -> None:
    corpus = make_corpus(3)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    path = output.with_name("synthetic.analysis.json")
    kept = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({**kept, "version": "0"}), "utf-8")
    reads = Reads(monkeypatch)

    generate(corpus, output, GenerateConfig(), client=FakeChatClient())

    assert sorted(reads.calls["language"]) == sorted(corpus.ids)
    assert json.loads(path.read_text("utf-8"))["version"] == analysis_cache.VERSION


def test_a_damaged_analysis_file_is_read_again_not_fatal(output: Path) -> None:
    corpus = make_corpus(2)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    output.with_name("synthetic.analysis.json").write_text("{not json", "utf-8")

    summary = generate(corpus, output, GenerateConfig(), client=FakeChatClient())

    assert summary.kept == 2
    assert json.loads(output.with_name("synthetic.analysis.json").read_text("utf-8"))["chunks"]


def test_a_run_answered_from_the_cache_never_makes_the_sdk_client(output: Path, monkeypatch) -> None:
    corpus = make_corpus(3)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder-key")
    deferred = DeferredChatClient(LLMConfig(base_url="http://127.0.0.1:9/v1"))

    summary = generate(corpus, output, GenerateConfig(), client=deferred)

    assert summary.kept == 3
    assert deferred._client is None  # openai's client was never needed
    assert deferred.stats.requests == 0


def test_a_deferred_client_checks_its_key_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from realrecall.errors import InputError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError, match="OPENAI_API_KEY is not set"):
        DeferredChatClient(LLMConfig(base_url="https://api.example.invalid/v1"))

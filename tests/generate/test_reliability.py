"""generate() when things go wrong around it: full disks, killed rewrites, stale temps, bad options.

The real-process versions (a small tmpfs, kill -9) are in test_disk_full.py; these run everywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from generate.fakes import FakeChatClient, fill_disk_at, make_corpus
from realrecall.corpus import Corpus
from realrecall.errors import InputError, OutputError, SettingError
from realrecall.generate import GenerateConfig, agenerate, generate
from realrecall.generate import store as store_module
from realrecall.generate.planner import select_chunks
from realrecall.llm import LLMConfig
from realrecall.llm.types import ChatRequest, ChatResult
from realrecall.settings import settings_from


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def ids(path: Path) -> list[str]:
    return [record["query_id"] for record in read_records(path)]


class DiskUsage(NamedTuple):
    total: int
    used: int
    free: int


def in_corpus_order(n: int) -> list[str]:
    return [f"syn-c{i}-0" for i in range(n)]


# -- disk full while appending ------------------------------------------------------------------------


@pytest.mark.parametrize("log", ["output", "cache"])
def test_disk_full_while_appending_is_one_output_error_and_a_rerun_resumes(monkeypatch, tmp_path, log):
    output = tmp_path / "synthetic.jsonl"
    cache = tmp_path / "synthetic.cache.jsonl"
    target = output if log == "output" else cache
    corpus = make_corpus(12)
    target.touch()
    fill_disk_at(monkeypatch, target, limit=2000)
    with pytest.raises(OutputError) as caught:
        generate(corpus, output, GenerateConfig(concurrency=1), client=FakeChatClient())
    assert str(caught.value) == (
        f"{target}: cannot write the output: the disk is full; free some space or write the output elsewhere"
    )
    # What was appended before the failure is whole lines, none cut.
    for path in (output, cache):
        text = path.read_text("utf-8")
        assert text == "" or text.endswith("\n")
        read_records(path)
    cached = len(read_records(cache))
    # An answer reaches the cache before the record made from it reaches the output.
    answered = {entry["slot"] for entry in read_records(cache)}
    assert {record["provenance"]["slot_key"] for record in read_records(output)} <= answered
    assert 0 < target.stat().st_size <= 2000  # the lines that fitted are kept

    monkeypatch.undo()
    client = FakeChatClient()
    summary = generate(corpus, output, GenerateConfig(concurrency=1), client=client)
    assert ids(output) == in_corpus_order(12)
    assert summary.total == 12
    assert len(client.requests) == 12 - cached  # an answer on disk is never asked for again


class YieldingClient(FakeChatClient):
    """Answers after giving the event loop a turn, as a real request does (workers interleave)."""

    async def complete(self, request: ChatRequest) -> ChatResult:
        await asyncio.sleep(0)
        return await super().complete(request)


def test_a_failure_in_one_worker_stops_the_others(tmp_path):
    client = YieldingClient()
    client.script.extend([json.dumps({"question": "why is my printer offline again today?"})] * 2)
    client.script.append(OutputError("cannot write the output: the disk is full", path=tmp_path / "x"))

    async def run() -> list[asyncio.Task[Any]]:
        with pytest.raises(OutputError):
            await agenerate(
                make_corpus(50), tmp_path / "s.jsonl", GenerateConfig(concurrency=4), client=client
            )
        return [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]

    assert asyncio.run(run()) == []  # no worker left running in the caller's loop


# -- the final reorder ---------------------------------------------------------------------------------


def out_of_order_output(output: Path, n: int = 8) -> Corpus:
    """An output as a run killed during its final rewrite leaves it: complete, in completion order."""
    corpus = make_corpus(n)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    lines = output.read_text("utf-8").splitlines(keepends=True)
    output.write_text("".join(reversed(lines)), "utf-8")
    return corpus


def test_a_run_that_adds_nothing_restores_corpus_order_left_by_a_killed_rewrite(tmp_path):
    output = tmp_path / "synthetic.jsonl"
    corpus = out_of_order_output(output)
    client = FakeChatClient()
    summary = generate(corpus, output, GenerateConfig(), client=client)
    assert (summary.added, client.requests) == (0, [])
    assert ids(output) == in_corpus_order(8)


def test_stale_temp_files_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    output = tmp_path / "synthetic.jsonl"
    corpus = make_corpus(4)
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    stale = [
        tmp_path / ".synthetic.jsonl.k1ll3d.tmp",
        tmp_path / ".synthetic.cache.jsonl.k1ll3d.tmp",
        tmp_path / ".synthetic.summary.json.k1ll3d.tmp",
    ]
    for path in stale:
        path.write_text("half a rewrite")
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    assert [path for path in stale if path.exists()] == []


def test_reorder_without_room_for_a_second_copy_leaves_the_file_whole_and_warns(monkeypatch, tmp_path):
    output = tmp_path / "synthetic.jsonl"
    corpus = out_of_order_output(output)
    left_as_it_was = output.read_bytes()
    size = len(left_as_it_was)
    # Room for the file once more, but not for the margin the rewrite keeps.
    monkeypatch.setattr(store_module.shutil, "disk_usage", lambda path: DiskUsage(size * 10, size * 9, size))
    summary = generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    assert output.read_bytes() == left_as_it_was
    (warning,) = summary.warnings
    assert warning.startswith(f"{output}: not rewritten in corpus order: that needs ")
    assert "the next run finishes the reorder once there is room" in warning
    assert "\n" not in warning
    assert json.loads((tmp_path / "synthetic.summary.json").read_text())["warnings"] == [warning]

    monkeypatch.undo()
    summary = generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    assert summary.warnings == ()
    assert ids(output) == in_corpus_order(8)


def test_an_output_already_in_corpus_order_is_not_rewritten(tmp_path, monkeypatch):
    output = tmp_path / "synthetic.jsonl"
    corpus = make_corpus(6)
    generate(corpus, output, GenerateConfig(concurrency=1), client=FakeChatClient())
    rewrites: list[Path] = []
    real = store_module.write_jsonl_atomic
    monkeypatch.setattr(
        store_module, "write_jsonl_atomic", lambda path, records: rewrites.append(path) or real(path, records)
    )
    generate(make_corpus(8), output, GenerateConfig(concurrency=1), client=FakeChatClient())
    assert ids(output) == in_corpus_order(8)
    assert rewrites == []  # appended in order: nothing to reorder, no second copy needed


# -- paths ---------------------------------------------------------------------------------------------


def test_output_equal_to_the_corpus_file_is_refused_before_any_work(tmp_path):
    from realrecall.corpus import load_corpus

    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{i}", "text": f"Chunk {i} text."}) + "\n" for i in range(3)))
    before = path.read_bytes()
    with pytest.raises(OutputError, match=r"the output .* is the same file as the corpus"):
        generate(load_corpus(path), path, GenerateConfig(backend="extractive"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.jsonl"]


def test_cache_equal_to_the_output_is_refused(tmp_path):
    output = tmp_path / "s.jsonl"
    with pytest.raises(OutputError, match=r"the cache .* is the same file as the output"):
        generate(make_corpus(2), output, GenerateConfig(cache_path=output), client=FakeChatClient())
    assert not output.exists()


def test_output_naming_a_folder_is_one_output_error(tmp_path):
    with pytest.raises(OutputError, match="is a folder, not a file"):
        generate(make_corpus(2), tmp_path, GenerateConfig(), client=FakeChatClient())


# -- options -------------------------------------------------------------------------------------------


def test_options_from_a_mapping_name_an_unknown_key_and_the_valid_ones():
    with pytest.raises(SettingError) as caught:
        settings_from(GenerateConfig, {"per_chunk": 2, "banana": 1})
    message = str(caught.value)
    assert message.startswith("'banana' is not a setting of GenerateConfig; (settings: backend, model, ")
    assert "request_timeout" in message
    assert "\n" not in message
    assert "unexpected keyword" not in message


def test_options_from_a_mapping_suggest_the_key_meant():
    with pytest.raises(SettingError, match=r"'per_chunks' is not a setting of .*did you mean 'per_chunk'"):
        settings_from(GenerateConfig, {"per_chunks": 2})


def test_options_from_a_mapping_read_strings_the_way_the_command_line_does(tmp_path):
    config = settings_from(
        GenerateConfig,
        {
            "types": "lookup=2,conceptual",
            "languages": {"en": 3, "de": 1},
            "shard": "1/4",
            "personas": "an admin",
            "prompt": "prompts/mine.md",
            "near_duplicate": 0,
            "temperature": 1,
            "request_timeout": 15,
        },
        base=tmp_path,
    )
    assert config.types == {"lookup": 2.0, "conceptual": 1.0}
    assert config.languages == {"en": 3.0, "de": 1.0}
    assert (config.shard.index, config.shard.count) == (1, 4)
    assert config.personas == ("an admin",)
    assert config.prompt == tmp_path / "prompts" / "mine.md"
    assert config.near_duplicate is None
    assert config.llm_config().timeout == 15.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"per_chunk": "two"}, "per_chunk must be a whole number, got 'two'"),
        ({"temperature": "hot"}, "temperature must be a number, got 'hot'"),
        ({"judge": "yes"}, "judge must be true or false, got 'yes'"),
        ({"types": ["lookup"]}, "types must be a string like"),
        ({"per_chunk": 0}, "per_chunk must be an integer within [1, 1000], got 0"),
        ({"request_timeout": 0}, "request_timeout must be a number of seconds > 0, got 0.0"),
    ],
)
def test_options_from_a_mapping_with_wrong_values_name_the_key(options, message):
    with pytest.raises(InputError) as caught:
        settings_from(GenerateConfig, options)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf")])
def test_request_timeout_must_be_positive_and_finite(seconds):
    with pytest.raises(InputError, match="request_timeout must be a number of seconds > 0"):
        GenerateConfig(request_timeout=seconds)
    with pytest.raises(InputError, match="timeout must be a number of seconds > 0"):
        LLMConfig(timeout=seconds)


def test_request_timeout_and_base_url_reach_the_client_config():
    assert GenerateConfig(request_timeout=7.5, base_url="http://127.0.0.1:1/v1").llm_config() == LLMConfig(
        base_url="http://127.0.0.1:1/v1", timeout=7.5
    )
    assert GenerateConfig().llm_config().timeout == 60.0


@pytest.mark.parametrize("price", [float("nan"), float("inf"), -1.0])
def test_prices_that_would_not_be_json_are_refused(price):
    with pytest.raises(InputError, match="prices must be numbers >= 0"):
        GenerateConfig(price_in=price, price_out=1.0)


def test_a_dry_run_refuses_what_the_run_would_refuse(tmp_path):
    from realrecall.corpus import load_corpus
    from realrecall.generate import estimate

    path = tmp_path / "chunks.jsonl"
    path.write_text(json.dumps({"id": "c0", "text": "Chunk zero text."}) + "\n")
    with pytest.raises(OutputError, match="is the same file as the corpus"):
        estimate(load_corpus(path), path, GenerateConfig(backend="extractive"))
    with pytest.raises(OutputError, match="is a folder, not a file"):
        estimate(load_corpus(path), tmp_path, GenerateConfig(backend="extractive"))


def test_new_files_follow_the_umask_and_the_reorder_keeps_the_mode(tmp_path):
    output = tmp_path / "synthetic.jsonl"
    previous = os.umask(0o022)
    try:
        corpus = out_of_order_output(output)
        for path in tmp_path.iterdir():
            if path.is_file():
                assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
        output.chmod(0o640)
        generate(corpus, output, GenerateConfig(), client=FakeChatClient())  # reorders it
    finally:
        os.umask(previous)
    assert ids(output) == in_corpus_order(8)
    assert stat.S_IMODE(output.stat().st_mode) == 0o640


# -- files found beside the output --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b'{"key": "a", "slot": "s"}\n\xff\xfe not text\n{"key": "b", "slot', ":2: not valid UTF-8"),
        (bytes(range(256)) * 8, ":2: not valid UTF-8"),
        (b"PK\x03\x04 an archive, not a log", ":1: the last line is not a cache entry"),
    ],
)
def test_a_cache_that_is_not_a_log_is_refused_unchanged_before_any_repair(tmp_path, content, where):
    cache = tmp_path / "mine.bin"
    cache.write_bytes(content)
    with pytest.raises(InputError) as caught:
        generate(
            make_corpus(2), tmp_path / "s.jsonl", GenerateConfig(cache_path=cache), client=FakeChatClient()
        )
    assert str(caught.value).startswith(f"{cache}{where}")
    assert cache.read_bytes() == content  # not truncated at a "torn last line"


def test_a_torn_last_line_is_still_repaired(tmp_path):
    output = tmp_path / "s.jsonl"
    generate(make_corpus(3), output, GenerateConfig(), client=FakeChatClient())
    cache = tmp_path / "s.cache.jsonl"
    whole = cache.read_bytes()
    cache.write_bytes(whole + '{"key": "x", "text": "caf\u00e9'.encode()[:-1])  # cut inside a character
    client = FakeChatClient()
    generate(make_corpus(3), output, GenerateConfig(), client=client)
    assert client.requests == []
    assert cache.read_bytes() == whole


def test_stratifying_by_a_field_no_chunk_has_is_refused_naming_it(tmp_path):
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(sample=2, stratify_by="documnet")
    with pytest.raises(InputError) as caught:
        generate(make_corpus(6), output, config, client=FakeChatClient())
    assert str(caught.value) == (
        "memory: no chunk has the metadata field 'documnet' to stratify the sample by; "
        "did you mean 'document'? fields the chunks have: document"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_default_stratification_field_may_be_missing(tmp_path):
    corpus = Corpus(tuple(replace(chunk, metadata={}) for chunk in make_corpus(6)), path="memory")
    config = GenerateConfig(sample=2)
    summary = generate(corpus, tmp_path / "s.jsonl", config, client=FakeChatClient())
    assert summary.total == len(select_chunks(corpus, config)) >= 1


def test_lines_that_come_within_the_commit_window_are_committed_together(monkeypatch, tmp_path):
    # Answers come back one by one: a commit (write, fsync, a wake-up of the writer thread) for each
    # would cost more CPU than the requests do, so the writer gathers a window's worth first.
    import threading

    commits: list[bytes] = []
    append = store_module._append_lines
    monkeypatch.setattr(
        store_module, "_append_lines", lambda fd, data: (commits.append(data), append(fd, data))
    )
    cue, waits = threading.Event(), []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        cue.wait(5)  # the test's cue instead of the clock: every line below is queued by then

    paths = {"cache": tmp_path / "c.jsonl", "output": tmp_path / "o.jsonl"}
    writer = store_module._GroupCommitWriter(paths, wait=wait)
    for number in range(5):
        writer.submit("cache", {"n": number})
    writer.submit("output", {"n": 9})
    cue.set()
    writer.close()

    assert waits == [store_module.COMMIT_WINDOW]
    assert commits == [b"".join(b'{"n": %d}\n' % n for n in range(5)), b'{"n": 9}\n']
    assert paths["output"].read_bytes() == b'{"n": 9}\n'

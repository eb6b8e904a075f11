"""`realrecall generate` as a real process on a disk that fills up (a small tmpfs), and killed with -9
during its final rewrite: one line and exit 2, nothing lost, the next run finishes the job.

The runs that fill the disk or are killed are real processes (an exit releases every handle before the
tmpfs is checked or unmounted); the set-up runs and the reruns that finish the job run in-process.

The tmpfs tests need root (to mount); elsewhere they are skipped with the reason. test_reliability.py
covers the same failures in-process, everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support import cli, process
from support.questions import EVERYDAY, http_question_handler

DISK_FULL = "cannot write the output: the disk is full; free some space or write the output elsewhere"

pytestmark = pytest.mark.slow

# Runs the CLI, but SIGKILLs itself at the moment the output's rewritten copy is about to replace it:
# a kill during the final rewrite, at the one instant that matters, without guessing at timing.
KILL_AT_REWRITE = """
import os, signal, sys
target = os.path.realpath(sys.argv[1])
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    if os.path.realpath(dst) == target:
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *args, **kwargs)
os.replace = replace
from realrecall.cli import main
main(sys.argv[2:])
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``small_disk("64k")``: a fresh tmpfs of that size; unmounted at the end of the test."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs to fill needs root; test_reliability.py covers it in-process")
        point = tmp_path / f"disk{len(mounted)}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(point)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", str(point)], capture_output=True)


def resize(point: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(point)], check=True, capture_output=True)


def fill(point: Path, leave: int = 0) -> Path:
    """Fill the disk at ``point`` until only ``leave`` bytes (rounded to pages) are free."""
    filler = point / "filler.bin"
    with filler.open("wb") as handle:
        try:
            while shutil.disk_usage(point).free > leave:
                handle.write(b"\0" * min(65536, max(4096, shutil.disk_usage(point).free - leave)))
                handle.flush()
        except OSError:
            pass  # full
    return filler


def write_corpus(path: Path, numbers: range) -> Path:
    rows = []
    for i in numbers:
        a, b, c = (EVERYDAY[(i * 7 + shift) % len(EVERYDAY)] for shift in (0, 11, 23))
        rows.append(
            {"id": f"c{i:03d}", "text": f"Room {i} keeps the {a} beside the {b}. Ask desk {i} for a {c}."}
        )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def run(args: list[str], *, script: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a real process, with this test's environment (the fake endpoint's, where one runs)."""
    return process.cli(*args, script=script, timeout=120)


def records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text("utf-8")
    assert text == "" or text.endswith("\n"), f"{path} ends in a part of a line"
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def ids(path: Path) -> list[str]:
    return [record["query_id"] for record in records(path)]


def expected(numbers: range) -> list[str]:
    return [f"syn-c{i:03d}-0" for i in numbers]


def assert_one_line_error(done: subprocess.CompletedProcess[str], path: Path) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"error: {path}: {DISK_FULL}"], done.stderr


def test_disk_full_while_appending_questions_is_one_line_and_a_rerun_resumes(tmp_path, small_disk):
    disk = small_disk("64k")
    corpus = write_corpus(tmp_path / "chunks.jsonl", range(300))
    output = disk / "synthetic.jsonl"
    args = ["generate", "--corpus", str(corpus), "--output", str(output)]
    args += ["--backend", "extractive", "--near-duplicate", "0"]

    done = run(args)
    assert_one_line_error(done, output)
    written = ids(output)  # whole lines only, each a complete record
    assert 0 < len(written) < 300

    resize(disk, "4m")
    done = cli.run(*args)
    assert done.returncode == 0, done.stderr
    assert ids(output) == expected(range(300))
    assert f"kept {len(written)}" in done.stdout


def test_disk_full_with_the_model_backend_loses_no_paid_answer(tmp_path, small_disk, fake_openai):
    fake_openai.chat_handler = http_question_handler
    disk = small_disk("64k")
    corpus = write_corpus(tmp_path / "chunks.jsonl", range(150))
    output = disk / "synthetic.jsonl"
    cache = disk / "synthetic.cache.jsonl"
    args = ["generate", "--corpus", str(corpus), "--output", str(output), "--concurrency", "4"]

    done = run(args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith(f": {DISK_FULL}")
    assert line.startswith((f"error: {output}:", f"error: {cache}:"))
    assert {r["provenance"]["slot_key"] for r in records(output)} <= {e["slot"] for e in records(cache)}

    resize(disk, "4m")
    done = cli.run(*args)
    assert done.returncode == 0, done.stderr
    assert ids(output) == expected(range(150))
    keys = [entry["key"] for entry in records(cache)]
    assert len(keys) == len(set(keys))
    # Every answer that reached the cache was used, none asked for twice; only those lost when the
    # disk filled were asked again: the failed commit's lines (what arrived in the writer's 10 ms
    # window, longer on a loaded machine: 9 were seen at load 16), those queued behind it and those in
    # flight (one a worker). A few windows' worth of the four workers, never the run's 150.
    assert 0 <= fake_openai.count("chat") - len(keys) <= 4 * 4


def test_batch_state_on_a_full_disk_stops_the_run_before_a_batch_is_paid_for(
    tmp_path, small_disk, fake_openai
):
    fake_openai.chat_handler = http_question_handler
    # Room for the whole run once the filler is gone (prompts with a query form, records with
    # requested_form and strategy); the filler still leaves none for the batch state.
    disk = small_disk("128k")
    corpus = write_corpus(tmp_path / "chunks.jsonl", range(40))
    output = disk / "s.jsonl"
    args = [
        "generate",
        "--corpus",
        str(corpus),
        "--output",
        str(output),
        "--batch",
        "--poll-interval",
        "0.01",
        "--strategy",
        "direct",  # one batch, and answers that fit the small disk
    ]
    filler = fill(disk)

    done = run(args)
    assert_one_line_error(done, disk / "s.batch.json")
    assert (fake_openai.count("files"), fake_openai.count("batches")) == (0, 0)

    filler.unlink()
    done = cli.run(*args)
    assert done.returncode == 0, done.stderr
    assert ids(output) == expected(range(40))
    assert fake_openai.count("batches") == 1
    assert not (disk / "s.batch.json").exists()


def test_final_reorder_without_room_warns_up_front_and_the_next_run_finishes_it(tmp_path, small_disk):
    disk = small_disk("2m")
    output = disk / "synthetic.jsonl"
    base = ["generate", "--output", str(output), "--backend", "extractive", "--near-duplicate", "0"]
    # The second half first: the first half is then appended after it, out of corpus order.
    done = cli.run(*base, "--corpus", str(write_corpus(tmp_path / "half.jsonl", range(100, 200))))
    assert done.returncode == 0, done.stderr
    half = output.stat().st_size
    # Room for the appended half and the summary, but not for a second copy of the whole file.
    filler = fill(disk, leave=half + 128 * 1024)

    everything = ["--corpus", str(write_corpus(tmp_path / "all.jsonl", range(200)))]
    done = run([*base, *everything])
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"warning: {output}: not rewritten in corpus order: that needs ")
    assert line.endswith("the next run finishes the reorder once there is room")
    assert sorted(ids(output)) == expected(range(200))  # complete, in the order the questions came
    assert ids(output) != expected(range(200))

    filler.unlink()
    done = cli.run(*base, *everything)
    assert done.returncode == 0, done.stderr
    assert "(added 0, kept 200, removed 0)" in done.stdout
    assert done.stderr == ""
    assert ids(output) == expected(range(200))


def test_kill_during_the_final_rewrite_is_finished_by_the_next_run(tmp_path):
    output = tmp_path / "synthetic.jsonl"
    base = ["generate", "--output", str(output), "--backend", "extractive", "--near-duplicate", "0"]
    done = cli.run(*base, "--corpus", str(write_corpus(tmp_path / "half.jsonl", range(20, 40))))
    assert done.returncode == 0, done.stderr

    everything = ["--corpus", str(write_corpus(tmp_path / "all.jsonl", range(40)))]
    killed = run([str(output), *base, *everything], script=KILL_AT_REWRITE)
    assert killed.returncode == -signal.SIGKILL
    stale = list(tmp_path.glob(".synthetic.jsonl.*.tmp"))
    assert len(stale) == 1  # the rewritten copy that was about to replace the output
    assert ids(output) == expected(range(20, 40)) + expected(range(20))

    done = cli.run(*base, *everything)
    assert done.returncode == 0, done.stderr
    assert "(added 0, kept 40, removed 0)" in done.stdout
    assert ids(output) == expected(range(40))
    assert list(tmp_path.glob(".*.tmp")) == []

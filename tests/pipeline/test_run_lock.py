"""One run of a pipeline at a time: a second is refused at once (or waits when asked), and the lock of a
run killed with kill -9 never blocks the next one."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pipeline.test_pipeline import write_job
from realrecall.errors import InputError
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.history import load_history
from realrecall.pipeline.lock import lock_path, run_lock
from realrecall.pipeline.run import run_pipeline
from support import cli, process

HOLD = """
import sys, time
from pathlib import Path
from realrecall.pipeline.lock import run_lock
with run_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(3600)
"""

HOLD_IN_A_CHILD = """
import os, sys, time
from pathlib import Path
from realrecall.pipeline.lock import run_lock
with run_lock(Path(sys.argv[1])):
    if os.fork() == 0:  # the child inherits the locked file and outlives the run that took the lock
        time.sleep(3600)
        os._exit(0)
    print("held", flush=True)
    os._exit(0)
"""


def _holder(script: str, config: Path) -> subprocess.Popen[str]:
    """A process holding the pipeline's lock (as a run does), once it printed "held"."""
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(config)],
        stdout=subprocess.PIPE,
        text=True,
        env=process.environment(),
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    return holder


def _stop(holder: subprocess.Popen[str]) -> None:
    holder.kill()
    holder.wait(timeout=30)


def test_a_second_run_is_refused_at_once_naming_the_run_in_progress(tmp_path: Path) -> None:
    job = write_job(tmp_path, backend="extractive")
    holder = _holder(HOLD, job)
    try:
        done = cli.run("run", str(job))
    finally:
        _stop(holder)

    assert done.returncode == 2, done.stderr
    [line] = done.err_lines
    who = f"pid {holder.pid} on {socket.gethostname()}, since "
    assert line.startswith(f"error: {job}: another run of this pipeline is in progress ({who}")
    assert line.endswith("; wait for it to finish, or pass --wait to start when it has")
    assert not (tmp_path / "history.jsonl").exists()
    assert not (tmp_path / "synthetic.jsonl").exists()  # refused before any work


def test_with_wait_a_second_run_starts_once_the_first_has_finished(tmp_path: Path) -> None:
    job = write_job(tmp_path, backend="extractive")
    holder = _holder(HOLD, job)
    waiting = process.start("run", str(job), "--wait", cwd=tmp_path)
    try:
        assert waiting.stderr is not None
        line = waiting.stderr.readline()
        assert f"waiting for the run of this pipeline in progress (pid {holder.pid} on " in line
        assert waiting.poll() is None  # still waiting, nothing written
        assert not (tmp_path / "history.jsonl").exists()
    finally:
        _stop(holder)
    _, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert len(load_history(tmp_path / "history.jsonl")) == 1


def test_two_runs_of_one_pipeline_at_once_record_one_row(tmp_path: Path) -> None:
    """Two real `realrecall run`s: the first holds the lock while its retriever waits for a file; the
    second, started meanwhile, is refused at once; the first then finishes alone."""
    job = write_job(tmp_path, backend="extractive")
    gate = tmp_path / "go"
    (tmp_path / "waiting.py").write_text(
        textwrap.dedent(
            f"""
            import time
            from pathlib import Path
            def search(query, k):
                Path({str(tmp_path / "searching")!r}).touch()
                while not Path({str(gate)!r}).exists():
                    time.sleep(0.05)
                return []
            """
        )
    )
    job.write_text(job.read_text().replace("[evaluate]\n", "[evaluate]\nretriever = 'waiting.py:search'\n"))
    first = process.start("run", str(job), cwd=tmp_path)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "searching").exists():
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() < deadline, "the first run never reached its retriever"
            time.sleep(0.1)
        second = process.cli("run", str(job), cwd=tmp_path)
    finally:
        gate.touch()
    _, err = first.communicate(timeout=300)

    assert second.returncode == 2, second.stderr
    assert f"another run of this pipeline is in progress (pid {first.pid} on " in second.stderr
    assert first.returncode == 0, err
    assert len(load_history(tmp_path / "history.jsonl")) == 1


def test_the_lock_of_a_killed_run_is_taken_over_and_said_so(tmp_path: Path) -> None:
    job = write_job(tmp_path, backend="extractive")
    holder = _holder(HOLD, job)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    warnings: list[str] = []

    run_pipeline(load_pipeline_config(job), on_warning=warnings.append)

    assert warnings[0].startswith(f"the last run of this pipeline (pid {holder.pid} on ")
    assert warnings[0].endswith("ended without finishing; this run takes its lock over")
    assert lock_path(job).read_text() == ""  # released: nothing left for the next run to take over
    assert len(load_history(tmp_path / "history.jsonl")) == 1


def test_a_lock_kept_by_a_process_the_gone_run_started_is_named_not_waited_for(tmp_path: Path) -> None:
    job = write_job(tmp_path, backend="extractive")
    parent = _holder(HOLD_IN_A_CHILD, job)
    parent.wait(timeout=30)
    try:
        with pytest.raises(InputError) as caught:
            run_pipeline(load_pipeline_config(job), wait=True)
    finally:
        _kill_lock_holders(lock_path(job))
    assert f"though the run that took it (pid {parent.pid} on " in str(caught.value)
    assert "is gone: a process it started holds it; end that process" in str(caught.value)


def test_a_finished_run_leaves_an_empty_lock_file_and_no_holder(tmp_path: Path) -> None:
    job = write_job(tmp_path, backend="extractive")
    with run_lock(job):
        record = json.loads(lock_path(job).read_text())
        assert (record["pid"], record["host"]) == (os.getpid(), socket.gethostname())
    assert lock_path(job).read_text() == ""
    with run_lock(job):  # free again at once
        pass


def _kill_lock_holders(path: Path) -> None:
    """Kill the processes holding ``path`` open (the forked child of HOLD_IN_A_CHILD)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            held = any(os.readlink(fd) == str(path) for fd in (entry / "fd").iterdir())
        except OSError:
            continue
        if held:
            os.kill(int(entry.name), signal.SIGKILL)

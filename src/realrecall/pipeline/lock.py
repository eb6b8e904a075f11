"""One run of a pipeline at a time: an exclusive lock on ``pipeline.toml.lock``, beside the config.

The lock is the operating system's (``flock``), taken for the whole run and released by the kernel when
the process ends, however it ends: a run killed with ``kill -9`` never leaves a lock that blocks the
next one. The file holds who holds it (pid, host, since when), so a second run is refused at once with
one line saying so, or, asked to ``wait``, waits for the first to finish. The file is emptied when a run
finishes; a record still in it when the lock is free is a run that ended without finishing (killed),
which the next run names as it takes over. A lock still held after its holder is gone is held by a
process the holder started: that is said too, never waited for silently.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from realrecall.errors import InputError, OutputError
from realrecall.files import output_error

__all__ = ["RunHolder", "lock_path", "run_lock"]


@dataclass(frozen=True)
class RunHolder:
    """Who holds (or last held) a pipeline's lock: the process, its machine, and since when."""

    pid: int
    host: str
    since: str

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, since {self.since}"

    def gone(self) -> bool:
        """The holder ran on this machine and its process no longer exists."""
        if self.host != socket.gethostname():
            return False  # another machine's process: it cannot be looked up from here
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # another user's process: it exists
            return False
        return False


def lock_path(config_path: Path) -> Path:
    """``pipeline.toml.lock`` beside ``pipeline.toml``: one lock per pipeline."""
    return config_path.with_name(config_path.name + ".lock")


@contextlib.contextmanager
def run_lock(
    config_path: Path,
    *,
    wait: bool = False,
    on_wait: Callable[[str], None] | None = None,
    on_takeover: Callable[[str], None] | None = None,
    now: dt.datetime | None = None,
) -> Iterator[None]:
    """Hold the pipeline's lock for the ``with`` block (see the module docstring).

    Held by another run: ``InputError`` naming it at once, or with ``wait``, ``on_wait`` hears whose run
    is awaited and the block starts once it has finished. ``on_takeover`` hears of a run that ended
    without finishing (its record was left behind), whose lock this run takes over.
    """
    path = lock_path(config_path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise output_error(exc, path) from exc
    try:
        _acquire(fd, path, config_path, wait=wait, on_wait=on_wait)
        left = _read_holder(fd)
        if left is not None and on_takeover is not None:
            on_takeover(
                f"the last run of this pipeline ({left.describe()}) ended without finishing; "
                "this run takes its lock over"
            )
        _write_holder(fd, path, now or dt.datetime.now(dt.UTC))
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # finished: nothing left behind to take over
    finally:
        os.close(fd)  # releases the lock


def _acquire(
    fd: int, path: Path, config_path: Path, *, wait: bool, on_wait: Callable[[str], None] | None
) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    except OSError as exc:  # a file system without locks (some network mounts)
        raise OutputError(
            f"cannot lock the run ({exc.strerror or exc})",
            path=path,
            hint="keep pipeline.toml on a local disk",
        ) from exc
    holder = _read_holder(fd)
    who = holder.describe() if holder is not None else "who, it does not say"
    if holder is not None and holder.gone():
        raise InputError(
            f"the lock of this pipeline is still held, though the run that took it ({who}) is gone: "
            "a process it started holds it",
            path=config_path,
            hint=f"end that process (fuser {path} names it), then run again",
        )
    if not wait:
        raise InputError(
            f"another run of this pipeline is in progress ({who})",
            path=config_path,
            hint="wait for it to finish, or pass --wait to start when it has",
        )
    if on_wait is not None:
        on_wait(f"waiting for the run of this pipeline in progress ({who}) to finish")
    fcntl.flock(fd, fcntl.LOCK_EX)


def _read_holder(fd: int) -> RunHolder | None:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8")
        record = json.loads(text) if text.strip() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    pid, host, since = record.get("pid"), record.get("host"), record.get("since")
    if not isinstance(pid, int) or not isinstance(host, str) or not isinstance(since, str):
        return None
    return RunHolder(pid, host, since)


def _write_holder(fd: int, path: Path, now: dt.datetime) -> None:
    record = {"pid": os.getpid(), "host": socket.gethostname(), "since": now.isoformat(timespec="seconds")}
    data = (json.dumps(record) + "\n").encode("utf-8")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    except OSError as exc:  # a full disk, say
        raise output_error(exc, path) from exc

"""Running the CLI in-process or as a process, and the checks every catalogue case makes."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from support import process
from support.cli import run_captured

Snapshot = dict[str, tuple[object, ...]]


@dataclass(frozen=True)
class Outcome:
    """What a command did: its exit code and everything it wrote to stdout and stderr."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def run_in_process(args: Sequence[str], stdout: io.StringIO, stderr: io.StringIO) -> Outcome:
    """``realrecall ARGS`` in this process (through ``support.cli``, the one in-process runner).

    An exception escaping ``main`` is what the real process would show as a traceback with exit 1,
    so it is turned into exactly that (the checks then fail on the ``Traceback`` line).
    """
    code = run_captured(list(args), stdout, stderr)
    return Outcome(code, stdout.getvalue(), stderr.getvalue())


def start_process(args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> subprocess.Popen[str]:
    """Start ``python -m realrecall ARGS`` as a real process (stdin closed, stdout/stderr piped)."""
    return process.start(*args, cwd=cwd, env=env)


def finish_process(process: subprocess.Popen[str], timeout: float = 120) -> Outcome:
    """Wait for a process from ``start_process`` and collect what it wrote."""
    out, err = process.communicate(timeout=timeout)
    return Outcome(process.returncode, out, err)


def snapshot(folder: Path) -> Snapshot:
    """Every entry under ``folder``: kind, content hash and mode of files, targets of symlinks, the
    numbers of devices.

    Two snapshots are equal only if no file was created, removed, changed or re-moded, so comparing
    the one before a failing command with the one after checks both "inputs unchanged" and "no
    partial output" (temp files included). ``__pycache__`` of a user's retriever module is ignored.
    """
    entries: Snapshot = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in [*dirs, *files]:
            path = Path(root, name)
            relative = str(path.relative_to(folder))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entries[relative] = ("symlink", os.readlink(path))
            elif stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):  # never read: a FIFO blocks
                entries[relative] = ("device" if stat.S_ISCHR(info.st_mode) else "fifo", info.st_rdev)
            elif stat.S_ISDIR(info.st_mode):
                entries[relative] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[relative] = ("file", digest, stat.S_IMODE(info.st_mode))
    return entries


EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def describe_changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Readable differences between two snapshots (for assertion messages).

    An empty ``*.lock`` file is not a change: generate's advisory lock file (held while a run writes
    its output, see ``realrecall.generate.store``) stays after every run by design.
    """
    created = [
        name for name in after.keys() - before.keys()
        if not (name.endswith(".lock") and after[name][:2] == ("file", EMPTY_SHA256))
    ]  # fmt: skip
    changes = [f"created {name}" for name in sorted(created)]
    changes += [f"removed {name}" for name in sorted(before.keys() - after.keys())]
    changes += [
        f"changed {name}: {before[name]} -> {after[name]}"
        for name in sorted(before.keys() & after.keys())
        if before[name] != after[name]
    ]
    return changes


def check_one_line_error(
    outcome: Outcome, expect: Sequence[str], *, allowed_before: Sequence[str] = ()
) -> None:
    """Exit 2; stderr is one ``error:`` line (after lines starting with ``allowed_before`` only); no
    traceback anywhere; the error line holds every ``expect`` substring."""
    shown = f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-2000:]}"
    assert "Traceback" not in outcome.err + outcome.out, shown
    assert outcome.code == 2, shown
    lines = outcome.err_lines
    assert lines, shown
    *before, last = lines
    assert last.startswith("error: "), shown
    assert len(last) > len("error: "), shown
    unexpected = [line for line in before if not line.startswith(tuple(allowed_before))]
    assert not unexpected, f"stderr has more than the one error line\n{shown}"
    for text in expect:
        assert text in last, f"expected {text!r} in the error line\n{shown}"

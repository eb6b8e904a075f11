"""``realrecall`` as a real process: for what is about the process (kills, full disks, pipes, start-up).

Behaviour (messages, exit codes, files) is tested in-process with ``support.cli.run``, which has the
same result shape (``returncode``, ``stdout``, ``stderr``) as :func:`cli` here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with this checkout's ``src`` as ``PYTHONPATH``, so
    the process runs the code under test even where the installed package points elsewhere."""
    return {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT / "src")}


def command(args: Sequence[str], script: str | None = None) -> list[str]:
    """``python -m realrecall ARGS``, or ``python -c SCRIPT ARGS`` for a script that wraps the CLI."""
    if script is not None:
        return [sys.executable, "-c", script, *args]
    return [sys.executable, "-m", "realrecall", *args]


def cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    script: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI to the end (stdin empty) and capture its output as text."""
    return subprocess.run(
        command(args, script),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environment(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def start(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, ctrl_c: bool = False
) -> subprocess.Popen[str]:
    """Start the CLI (stdin empty, stdout and stderr piped as text); the caller waits, kills or reads.

    ``ctrl_c``: SIGINT back to its default in the child, for a test that sends it (a test runner
    started in the background ignores SIGINT, and the child would inherit that: Python then never
    raises KeyboardInterrupt)."""
    return subprocess.Popen(
        command(args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(env),
        cwd=cwd,
        preexec_fn=_default_sigint if ctrl_c else None,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)

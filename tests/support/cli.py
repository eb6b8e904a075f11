"""``realrecall`` in this process: for behaviour (messages, exit codes, files), without a new interpreter.

``run`` has the result shape of :func:`support.process.cli` (``returncode``, ``stdout``, ``stderr``), so
a test switches between the two by its import alone. What the real process would see, this one sees:
the arguments, the current folder (``cwd``), the environment (``os.environ`` as the test left it, e.g.
``OPENAI_BASE_URL`` set by the ``fake_openai`` fixture, plus ``env``), an empty stdin, and text
stdout/stderr that are not terminals. An exception escaping the CLI is written to stderr as the
traceback a real process would print, with exit code 1, so "no traceback" checks work unchanged.

Use a real process (``support.process.cli``) only where the test is about the process: kills, full
disks, pipes, terminals, file permissions, start-up imports.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Result:
    """What a command did: its exit code and everything it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run(
    *args: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None, stdin: str = ""
) -> Result:
    """``realrecall ARGS`` in this process, from ``cwd`` with ``env`` added to the environment."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with _environment(env), contextlib.chdir(cwd or Path.cwd()):
        code = run_captured(list(args), stdout, stderr, stdin=io.StringIO(stdin))
    return Result(code, stdout.getvalue(), stderr.getvalue())


def run_captured(
    args: list[str], stdout: io.StringIO, stderr: io.StringIO, stdin: io.StringIO | None = None
) -> int:
    """Run the CLI with its streams redirected; returns the exit code a real process would have.

    The rich consoles write to ``sys.stdout``/``sys.stderr`` at print time, so redirecting them
    captures exactly what a terminal would show.
    """
    from realrecall.cli import main  # imported late: a test collecting this module loads no CLI

    with (
        _built_once(),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        _stdin(stdin),
    ):
        try:
            main(args)
        except SystemExit as exc:
            return _exit_code(exc.code, stderr)
        except Exception:
            stderr.write(traceback.format_exc())
            return 1
    return 0


def _exit_code(value: object, stderr: io.StringIO) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    stderr.write(f"{value}\n")  # sys.exit("message") prints the message and exits 1
    return 1


class _BuiltOnce:
    """The click command typer builds from the app, built once per test process instead of per call.

    Typer rebuilds it on every call (it evaluates each command's annotations: ~0.1 s CPU, most of an
    in-process command that fails on its input); a real process calls once, so building it once here
    is what each process sees. The retriever registry is part of the key, since the help and the
    "choose from" texts are built from it when the command is built (a test may register a retriever).
    ``typer.main.get_command`` is replaced only while a command runs (counted, so that runs in two
    threads at once restore it once, to the original).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._built: dict[tuple[object, ...], Any] = {}
        self._running = 0
        self._original: Any = None

    def _get_command(self, app: Any) -> Any:
        from realrecall.evaluate.retrievers import RETRIEVERS

        key = (id(app), *((name, id(spec)) for name, spec in RETRIEVERS.items()))
        with self._lock:
            if key not in self._built:
                self._built[key] = self._original(app)
            return self._built[key]

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        import typer.main

        with self._lock:
            if self._running == 0:
                self._original = typer.main.get_command
                typer.main.get_command = self._get_command
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    typer.main.get_command = self._original


_built_once = _BuiltOnce().active


@contextlib.contextmanager
def _stdin(replacement: io.StringIO | None) -> Iterator[None]:
    if replacement is None:
        yield
        return
    saved = sys.stdin
    sys.stdin = replacement
    try:
        yield
    finally:
        sys.stdin = saved


@contextlib.contextmanager
def _environment(extra: Mapping[str, str] | None) -> Iterator[None]:
    """``extra`` set in ``os.environ`` for the duration, then the environment exactly as it was."""
    if not extra:
        yield
        return
    saved = dict(os.environ)
    os.environ.update(extra)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)

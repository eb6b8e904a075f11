"""One real process per command (``python -m realrecall``) on the catalogue's workspace: it starts, does
its job, writes what it should and exits 0.

Everything else about the commands (messages, exit codes, files) is tested in-process through
``support.cli.run``: the catalogue's bad inputs too, with one of them also run as a real process
(``test_catalogue.py::test_a_failing_command_as_a_real_process_behaves_the_same``). What only a fresh
interpreter shows is checked here for every command: no traceback and no Python warning on stderr (an
import-time warning would be a stray line before a failing command's one ``error:`` line). The
processes start all at once, each in its own copy of the workspace, so the interpreter start-ups overlap.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.catalogue_cases import ADD, CAL, CMP, DUPES, EVAL, EXPAND, GEN, HIST, IMPORT, REVIEW, RUN
from cli.harness import finish_process, start_process

pytestmark = pytest.mark.slow  # every test waits for the processes, which start together

# How the warnings module prints one: "path:line: SomethingWarning: message".
PYTHON_WARNING = re.compile(r":\d+: \w*Warning: ")

# command -> (arguments, text its stdout shows, files it writes)
COMMANDS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "--help": (("--help",), "Usage: realrecall", ()),
    "--version": (("--version",), "realrecall 0.", ()),
    "evaluate": ((*EVAL, "-o", "smoke.json"), "recall@1", ("smoke.json",)),
    "calibrate": (CAL, "Quote real recall@10 = ", ()),
    "compare": (CMP, "randomization test", ()),
    "generate": (GEN, "gen.jsonl: 24 questions for 24 chunks", ("gen.jsonl",)),
    "run": (RUN, "Quote real recall@10 = ", ("runs/report.html",)),
    "history": (HIST, "recall@10", ()),
    "demo": (("demo", "--dir", "demo"), "Quote real recall@10 = ", ("demo/pipeline.toml",)),
    "gold import": (IMPORT, "imported 6 queries", ("imported.jsonl",)),
    "gold review": (REVIEW, "queries miss at k=10", ()),
    "gold add": (ADD, "added 1 gold id(s)", ("added.jsonl",)),
    "gold dupes": (DUPES, "cluster(s)", ()),
    "gold expand": (EXPAND, "near-duplicate gold id(s)", ("expanded.jsonl",)),
}


@pytest.fixture(scope="module")
def processes(
    catalogue_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[subprocess.Popen[str], Path]]]:
    """Every command started as a real process, each in its own copy of the workspace."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")}
    env["COLUMNS"] = "200"
    started = {}
    for command, (args, _, _) in COMMANDS.items():
        folder = tmp_path_factory.mktemp("smoke_ok") / "w"
        shutil.copytree(catalogue_template, folder, symlinks=True)
        started[command] = (start_process(args, folder, env), folder)
    yield started
    for process, _ in started.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("command", list(COMMANDS), ids=lambda command: command.replace(" ", "-"))
def test_each_command_runs_as_a_real_process(
    command: str, processes: dict[str, tuple[subprocess.Popen[str], Path]]
) -> None:
    _, shows, writes = COMMANDS[command]
    process, folder = processes[command]

    outcome = finish_process(process)

    shown = f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-2000:]}"
    assert outcome.code == 0, shown
    assert "Traceback" not in outcome.err + outcome.out, shown
    assert not any(line.startswith("error:") for line in outcome.err_lines), shown
    assert not PYTHON_WARNING.search(outcome.err), f"a Python warning on stderr\n{shown}"
    assert shows in outcome.out, shown
    for name in writes:
        assert (folder / name).is_file(), f"{name} not written\n{shown}"

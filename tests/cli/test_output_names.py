"""An output named with a trailing slash (``-o newdir/``) is a folder the user meant: refused as typed.

``Path("newdir/")`` is ``newdir``: once parsed, the slash was gone and every command wrote its output
as a file named ``newdir`` (exit 0). Every output option of every command is a ``OutputFile`` option,
which refuses such a name with one line naming the option, the path and the fix, exit 2, before any
work; the same rule holds for ``generate --cache``, pipeline.toml's ``[output] history`` and names
given as text to the library's writers.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from cli.catalogue_cases import (
    ADD,
    ADD_J,
    CAL,
    CAL_ONE,
    CMP,
    DUPES,
    EVAL,
    EXPAND,
    GEN,
    IMPORT,
    REVIEW,
    RUN,
    replace_arg,
)  # fmt: skip
from cli.harness import check_one_line_error, describe_changes, run_in_process, snapshot
from realrecall.errors import OutputError
from realrecall.files import AppendLog, atomic_write_text, check_file_name

MIGRATE = ("gold", "migrate", "gold.jsonl", "--corpus", "corpus.jsonl", "--output", "migrated.jsonl")
JUDGE = ("judge", "--gold", "gold.jsonl", "--per-query", "per_query.jsonl", "--corpus", "corpus.jsonl",
         "--model", "m", "--output", "labels.jsonl")  # fmt: skip

# Each output option (command path, option) and a command line with OUT where that output goes.
OUTPUTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("evaluate", "--output"): (*EVAL, "--output", "OUT"),
    ("evaluate", "--per-query"): (*EVAL, "--per-query", "OUT"),
    ("calibrate", "--output"): (*CAL, "--output", "OUT"),
    ("calibrate one-call", "--output"): (*CAL_ONE, "--output", "OUT"),
    ("compare", "--output"): (*CMP, "--output", "OUT"),
    ("generate", "--output"): replace_arg(GEN, "gen.jsonl", "OUT"),
    ("generate", "--cache"): (*GEN, "--cache", "OUT"),
    ("agreement", "--output"): ("agreement", "scores.tsv", "scores_human.tsv", "--output", "OUT"),
    ("plan", "--output"): ("plan", "results.json", "--target-width", "0.1", "--output", "OUT"),
    ("drift", "--output"): ("drift", "gold.jsonl", "synth.jsonl", "--output", "OUT"),
    ("judge", "--output"): replace_arg(JUDGE, "labels.jsonl", "OUT"),
    ("judge agreement", "--output"): ("judge", "agreement", "qrels.txt", "gold.jsonl", "--output", "OUT"),
    ("judge ppi", "--output"): ("judge", "ppi", "scores.tsv", "scores_human.tsv", "--output", "OUT"),
    ("corpus export", "--output"): (
        "corpus",
        "export",
        "--from",
        "chroma",
        "--option",
        "path=s",
        "-o",
        "OUT",
    ),
    ("gold import", "--output"): replace_arg(IMPORT, "imported.jsonl", "OUT"),
    ("gold import", "--unmatched"): (*IMPORT, "--unmatched", "OUT"),
    ("gold review", "--judgements"): (*REVIEW, "--judgements", "OUT"),
    ("gold add", "--output"): replace_arg(ADD, "added.jsonl", "OUT"),
    ("gold add --judgements", "--output"): replace_arg(ADD_J, "added.jsonl", "OUT"),
    ("gold dupes", "--output"): (*DUPES, "--output", "OUT"),
    ("gold expand", "--output"): replace_arg(EXPAND, "expanded.jsonl", "OUT"),
    ("gold migrate", "--output"): replace_arg(MIGRATE, "migrated.jsonl", "OUT"),
    ("gold migrate", "--report"): (*MIGRATE, "--report", "OUT"),
}
FOLDER_NAMES = ["newdir/", "newdir/.", "existing/", "gold.jsonl/"]


@pytest.mark.parametrize("name", FOLDER_NAMES)
@pytest.mark.parametrize("args", list(OUTPUTS.values()), ids=[" ".join(key) for key in OUTPUTS])
def test_an_output_named_as_a_folder_is_refused_before_any_work(
    workspace: Path, args: tuple[str, ...], name: str
) -> None:
    (workspace / "existing").mkdir()
    before = snapshot(workspace)

    outcome = run_in_process([name if arg == "OUT" else arg for arg in args], io.StringIO(), io.StringIO())

    check_one_line_error(outcome, [f" {name} names a folder, not a file", "give a file name, e.g. "])
    assert describe_changes(before, snapshot(workspace)) == []


def test_the_refusal_names_the_option_and_a_file_inside_the_folder(workspace: Path) -> None:
    outcome = run_in_process([*EVAL, "-o", "newdir/"], io.StringIO(), io.StringIO())

    check_one_line_error(outcome, ["--output newdir/ names a folder", "e.g. newdir/results.json"])
    assert not (workspace / "newdir").exists()


def _output_options() -> set[tuple[str, str]]:
    """(command path, option) of every option of the CLI that names an output (the OutputFile type),
    and of every other path option whose help says it writes, which should be one."""
    import typer.main

    from realrecall.cli import app
    from realrecall.cli.application import OutputFile

    found: set[tuple[str, str]] = set()

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        for param in command.params:
            writes = param.name == "output" or re.search(r"\bwrite\b", getattr(param, "help", "") or "", re.I)
            if isinstance(param.type, OutputFile) or (writes and param.type.name == "path"):
                found.add((" ".join(path), param.opts[0]))

    walk(typer.main.get_command(app), [])
    return found - READ_NOT_WRITTEN


# Path options whose help mentions writing but that are read.
READ_NOT_WRITTEN = {("generate", "--corpus")}


def test_every_output_option_of_the_cli_is_an_output_file_and_tested_here() -> None:
    import typer.main

    from realrecall.cli import app
    from realrecall.cli.application import OutputFile

    root = typer.main.get_command(app)
    tested = {(command.split(" --")[0].replace(" one-call", ""), option) for command, option in OUTPUTS}
    for command, option in _output_options() - {("generate", "--cache")}:
        target: Any = root
        for word in command.split():
            target = target.commands[word]
        (param,) = [param for param in target.params if param.opts[0] == option]
        assert isinstance(param.type, OutputFile), f"{command} {option} is not an output_option"
        assert (command, option) in tested, f"{command} {option} is not in OUTPUTS"


def test_pipeline_history_named_as_a_folder_is_refused_on_its_line(workspace: Path) -> None:
    config = workspace / "pipeline.toml"
    config.write_text(config.read_text().replace('history = "history.jsonl"', 'history = "hist/"'))
    before = snapshot(workspace)

    outcome = run_in_process(list(RUN), io.StringIO(), io.StringIO())

    check_one_line_error(
        outcome, ["pipeline.toml:", "[output] history hist/ names a folder", "history.jsonl"]
    )
    assert describe_changes(before, snapshot(workspace)) == []


@pytest.mark.parametrize("name", ["out/", "out/.", "out/..", "/"])
def test_check_file_name_refuses_names_that_can_only_be_folders(name: str) -> None:
    with pytest.raises(OutputError, match="names a folder, not a file; give a file name"):
        check_file_name(name)


@pytest.mark.parametrize("name", ["out.json", "out/x.json", "-", "/dev/stdout", "..x", ".hidden"])
def test_check_file_name_accepts_file_names(name: str) -> None:
    check_file_name(name)


def test_library_writers_given_a_name_ending_in_a_slash_write_nothing(tmp_path: Path) -> None:
    target = str(tmp_path / "newdir") + "/"

    with pytest.raises(OutputError, match="names a folder"):
        atomic_write_text(target, "x")
    with pytest.raises(OutputError, match="names a folder"):
        AppendLog(target)
    assert list(tmp_path.iterdir()) == []

"""Outputs that are not regular files are written in place, never replaced by a temp file + rename.

``-o /dev/null`` run as root once renamed a regular file over /dev/null, breaking every program on the
machine that reads it. Every command with an output is run here with a copy of /dev/null
(``mknod NODE c 1 3``) as that output: it must succeed and leave the device a device. A FIFO gets the
output streamed to it, and ``-`` is the standard output, holding that output alone (tables and
headlines go to stderr).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from cli.catalogue_cases import ADD, ADD_J, CAL, CAL_ONE, CMP, DUPES, EVAL, EXPAND, GEN, IMPORT, REVIEW, RUN
from cli.harness import Outcome, check_one_line_error, run_in_process
from support.devices import FifoReader, is_null_device, null_device

MIGRATE = ("gold", "migrate", "gold.jsonl", "--corpus", "corpus.jsonl", "--output", "migrated.jsonl")

# Each command line with OUT where the output goes.
WITH_AN_OUTPUT: dict[str, tuple[str, ...]] = {
    "evaluate --output": (*EVAL, "--output", "OUT"),
    "evaluate --per-query": (*EVAL, "--per-query", "OUT"),
    "evaluate both outputs": (*EVAL, "--output", "OUT", "--per-query", "OUT"),
    "calibrate --output": (*CAL, "-f", "json", "--output", "OUT"),
    "calibrate one-call --output": (*CAL_ONE, "-f", "markdown", "--output", "OUT"),
    "compare --output": (*CMP, "-f", "json", "--output", "OUT"),
    "gold import --output": tuple("OUT" if arg == "imported.jsonl" else arg for arg in IMPORT),
    "gold import --unmatched": (*IMPORT, "--unmatched", "OUT"),
    "gold review --judgements": (*REVIEW, "--judgements", "OUT"),
    "gold add --output": tuple("OUT" if arg == "added.jsonl" else arg for arg in ADD),
    "gold add --judgements --output": tuple("OUT" if arg == "added.jsonl" else arg for arg in ADD_J),
    "gold dupes --output": (*DUPES, "--output", "OUT"),
    "gold expand --output": tuple("OUT" if arg == "expanded.jsonl" else arg for arg in EXPAND),
    "gold migrate --output": tuple("OUT" if arg == "migrated.jsonl" else arg for arg in MIGRATE),
    "gold migrate --report": (*MIGRATE, "--report", "OUT"),
}


def run(args: tuple[str, ...], output: str) -> Outcome:
    return run_in_process([output if arg == "OUT" else arg for arg in args], io.StringIO(), io.StringIO())


def shown(outcome: Outcome) -> str:
    return f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-2000:]}"


@pytest.mark.parametrize("args", list(WITH_AN_OUTPUT.values()), ids=list(WITH_AN_OUTPUT))
def test_an_output_that_is_a_character_device_stays_a_device(workspace: Path, args: tuple[str, ...]) -> None:
    node = null_device(workspace / "NODE")

    outcome = run(args, "NODE")

    assert outcome.code == 0, shown(outcome)
    assert "Traceback" not in outcome.err + outcome.out, shown(outcome)
    assert is_null_device(node), "the device was replaced by a regular file"
    assert not list(workspace.glob(".NODE*")), "a temp file was left beside the device"


def test_a_pipeline_history_that_is_a_character_device_stays_a_device(workspace: Path) -> None:
    node = null_device(workspace / "NODE")
    config = workspace / "pipeline.toml"
    config.write_text(config.read_text().replace('history = "history.jsonl"', 'history = "NODE"'))

    outcome = run(RUN, "NODE")

    assert outcome.code == 0, shown(outcome)
    assert is_null_device(node)


@pytest.mark.parametrize("output", ["NODE", "-"])
def test_generate_refuses_an_output_it_cannot_read_back(workspace: Path, output: str) -> None:
    if output == "NODE":
        null_device(workspace / "NODE")
    before = sorted(path.name for path in workspace.iterdir())

    outcome = run(tuple(output if arg == "gen.jsonl" else arg for arg in GEN), output)

    check_one_line_error(outcome, (output, "not a regular file", "write it to a file"))
    assert sorted(path.name for path in workspace.iterdir()) == before  # no cache, lock or summary made


@pytest.mark.parametrize(
    ("args", "parse"),
    [
        ((*CAL, "-f", "markdown", "--output", "OUT"), lambda text: "recall@10" in text),
        ((*EVAL, "--per-query", "OUT"), lambda text: all(json.loads(line) for line in text.splitlines())),
    ],
    ids=["calibrate --output", "evaluate --per-query"],
)
def test_an_output_that_is_a_fifo_is_streamed_to_it(workspace: Path, args: tuple[str, ...], parse) -> None:
    reader = FifoReader(workspace / "fifo")

    outcome = run(args, "fifo")

    assert outcome.code == 0, shown(outcome)
    text = reader.text()
    assert text
    assert parse(text), text[:500]


@pytest.mark.parametrize(
    ("args", "documents"),
    [
        ((*EVAL, "--output", "OUT"), "json"),
        ((*EVAL, "--per-query", "OUT"), "jsonl"),
        ((*CAL, "-f", "json", "--output", "OUT"), "json"),
        ((*CMP, "-f", "json", "--output", "OUT"), "json"),
        (tuple("OUT" if arg == "expanded.jsonl" else arg for arg in EXPAND), "jsonl"),
    ],
    ids=["evaluate", "evaluate --per-query", "calibrate", "compare", "gold expand"],
)
def test_dash_is_the_standard_output_holding_that_output_alone(
    workspace: Path, args: tuple[str, ...], documents: str
) -> None:
    before = sorted(path.name for path in workspace.iterdir())

    outcome = run(args, "-")

    assert outcome.code == 0, shown(outcome)
    if documents == "json":
        json.loads(outcome.out)
    else:
        assert [json.loads(line) for line in outcome.out.splitlines()], shown(outcome)
    assert sorted(path.name for path in workspace.iterdir()) == before  # no file named "-"


def test_two_outputs_on_the_standard_output_are_refused(workspace: Path) -> None:
    outcome = run((*EVAL, "--output", "-", "--per-query", "/dev/stdout"), "-")

    check_one_line_error(outcome, ("--per-query /dev/stdout", "--output -"))

"""User text is data: brackets in file names, ids, types, slice values and messages reach the terminal as
written (rich markup is never parsed), and machine formats reach stdout byte-exact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from realrecall.cli.application import error_line, note, warn
from support import cli

MARKUP = ("[/]", "[bold]", "[local]")


def invoke(*args: object) -> cli.Result:
    return cli.run(*(str(a) for a in args))


@pytest.fixture
def bracketed(tmp_path: Path) -> dict[str, Path]:
    """A corpus and real + synthetic gold sets whose names, ids and fields are full of markup."""
    corpus = tmp_path / "corpus [v2].jsonl"
    chunks = [
        {"id": "[local]c1", "text": "To reset your password open settings and choose reset password."},
        {"id": "c2", "text": "Sync runs every five minutes; conflicts keep both copies."},
        {"id": "c3", "text": "Backups are kept for thirty days before they are deleted."},
    ]
    corpus.write_text("".join(json.dumps(c) + "\n" for c in chunks))
    long_value = "x" * 200 + " [/] end"  # longer than any terminal: a wrapped JSON line would break
    real = tmp_path / "gold [final].jsonl"
    synthetic = tmp_path / "synthetic [bold].jsonl"
    rows = [
        ("[bold]q1", "reset password", "[local]c1", "howto [/] old"),
        ("q2", "how long are backups kept", "c3", long_value),
        ("q3", "sync interval", "c2", "howto [/] old"),
    ]
    real.write_text(
        "".join(
            json.dumps({"query_id": q, "query": t, "gold": {g: 1}, "origin": "real", "type": ty}) + "\n"
            for q, t, g, ty in rows
        )
    )
    synthetic.write_text(
        "".join(
            json.dumps({"query_id": "s" + q, "query": t, "gold": {g: 1}, "origin": "synthetic", "type": ty})
            + "\n"
            for q, t, g, ty in rows
        )
    )
    return {"corpus": corpus, "real": real, "synthetic": synthetic, "long": Path(long_value)}


def test_evaluate_prints_bracketed_names_and_slices_literally_and_writes_its_output(bracketed, tmp_path):
    results = tmp_path / "results [1].json"
    done = invoke(
        "evaluate", "--corpus", bracketed["corpus"], "--gold", bracketed["real"],
        "--gold", bracketed["synthetic"], "--by", "type", "--k", "1,10", "--output", results,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "type=howto [/] old" in done.stdout
    assert "gold [final]" in done.stdout
    assert f"results written to {results}" in done.stderr
    assert json.loads(results.read_text())["gold_sets"]


def test_a_missing_file_with_brackets_is_named_as_written(tmp_path):
    done = invoke("evaluate", "--corpus", tmp_path / "c.jsonl", "--gold", tmp_path / "gold [final].jsonl")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'gold [final].jsonl'}: file not found; check the path"
    ]


@pytest.fixture
def results_file(bracketed, tmp_path) -> Path:
    results = tmp_path / "results.json"
    done = invoke(
        "evaluate", "--corpus", bracketed["corpus"], "--gold", bracketed["real"],
        "--gold", bracketed["synthetic"], "--by", "type", "--k", "1,10", "--output", results,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return results


def test_calibrate_table_shows_bracketed_slices(results_file):
    done = invoke("calibrate", results_file, "--by", "type")
    assert done.returncode == 0, done.stderr
    assert "type=howto [/] old" in done.stdout


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_machine_formats_on_stdout_equal_the_rendered_text(results_file, fmt, tmp_path):
    piped = invoke("calibrate", results_file, "--by", "type", "-f", fmt)
    assert piped.returncode == 0, piped.stderr
    written = tmp_path / f"report.{'json' if fmt == 'json' else 'md'}"
    to_file = invoke("calibrate", results_file, "--by", "type", "-f", fmt, "-o", written)
    assert to_file.returncode == 0, to_file.stderr
    assert piped.stdout == written.read_text(encoding="utf-8")
    if fmt == "json":
        report = json.loads(piped.stdout)  # a console wrapping at 160 columns made this invalid
        assert "howto [/] old" in piped.stdout
        assert report


def test_compare_table_shows_bracketed_slices(results_file):
    rival = shutil.copyfile(results_file, results_file.with_name("results_b.json"))  # not one file twice
    done = invoke("compare", results_file, rival, "--by", "type")
    assert done.returncode == 0, done.stderr
    assert "howto [/] old" in done.stdout


@pytest.mark.parametrize("text", MARKUP)
def test_messages_print_markup_as_written(capsys, text):
    error_line(f"install it with pip install 'realrecall{text}'")
    warn(f"type {text} old")
    note(f"section {text}")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"error: install it with pip install 'realrecall{text}'",
        f"warning: type {text} old",
        f"section {text}",
    ]


def test_usage_errors_are_one_line_with_exit_two():
    for args in (
        ["evaluate", "--gold", "g.jsonl", "--relevance-threshold", "abc"],
        ["evaluate", "--gold", "g.jsonl", "--no-such-option"],
        ["calibrate", "--confidence"],
        ["no-such-command"],
    ):
        done = cli.run(*args)
        assert done.returncode == 2, args
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (args, done.stderr)
        assert lines[0].startswith("error: ")
        assert "--help" in lines[0]


def test_demo_prints_each_warning_once(tmp_path):
    done = invoke("demo", "--dir", tmp_path / "demo")
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr  # the warnings as they came (stderr) and in the table (stdout)
    warnings = [line for line in output.splitlines() if line.startswith("warning:")]
    assert warnings, output
    assert len(warnings) == len(set(warnings))

"""Control characters in data (ESC sequences, ``\\r``, ``\\x07``, C1, bidi controls) reach no output raw.

Queries, passages, slice values, file names and report cells come from a user's files; printed raw, an
ESC sequence clears or recolours the terminal and a bidi control shows text in another order. Every
command and renderer shows them as escapes (``\\x1b``), and JSON as JSON escapes that read back equal.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text

from realrecall.cli.console import DataConsole
from realrecall.printable import UNPRINTABLE, printable
from support import process
from support.cli import run

# An ESC colour and a clear-screen, a window-title sequence ended by BEL, a carriage return, the C1
# escape that 8-bit terminals read as ESC [, and a right-to-left override.
NASTY = "\x1b[31mred\x1b[0m \x1b[2J \x1b]0;owned\x07 back\rover \x9b1m \u202eevil\u202c"
SHOWN = r"\x1b[31mred\x1b[0m \x1b[2J \x1b]0;owned\x07 back\rover \u009b1m \u202eevil\u202c"


def raw_controls(text: str) -> list[str]:
    return UNPRINTABLE.findall(text)


def test_printable_escapes_every_control_but_newline_and_tab() -> None:
    assert printable(NASTY) == SHOWN
    assert printable("line one\n\tline two") == "line one\n\tline two"
    assert printable("\u2028\u2066x\u2069\x7f\x00") == r"\u2028\u2066x\u2069\u007f\x00"
    # The joiners of emoji and Persian are text, not controls.
    assert printable("می\u200cخواهم 👩\u200d💻") == "می\u200cخواهم 👩\u200d💻"


def test_printable_json_reads_back_as_the_same_value() -> None:
    text = printable(json.dumps({"q": NASTY, "k": "\u2028\x7f\x85"}, ensure_ascii=False))
    assert raw_controls(text) == []
    assert json.loads(text) == {"q": NASTY, "k": "\u2028\x7f\x85"}


def test_the_console_escapes_text_tables_and_keeps_styles_on_their_characters() -> None:
    buffer = io.StringIO()
    console = DataConsole(file=buffer, force_terminal=True, color_system="standard", width=200)
    table = Table(title=Text("title \x1b[2J"))
    table.add_column("slice \u202e")
    table.add_column("n")
    table.add_row(Text("type=\x1b[31mx"), "3")
    table.add_row("plain \x9b", "4")
    styled = Text("warning: \x1b]0;t", style="")
    styled.stylize("bold", 0, 8)
    console.print(styled)
    console.print(table)
    console.rule("rule \u202e")
    shown = buffer.getvalue()
    # Only rich's own colour codes (ESC [ digits m) remain; none of the data's sequences.
    without_styles = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert raw_controls(without_styles) == []
    assert r"title \x1b[2J" in without_styles
    assert r"slice \u202e" in without_styles
    assert r"type=\x1b[31mx" in without_styles
    assert r"warning: \x1b]0;t" in without_styles
    assert "\x1b[1mwarning:\x1b[0m" in shown  # the bold span still covers "warning:"


def test_the_console_measures_escaped_cells_so_columns_stay_aligned() -> None:
    buffer = io.StringIO()
    console = DataConsole(file=buffer, width=120)
    table = Table()
    table.add_column("slice")
    table.add_column("n")
    table.add_row("a\x1b[31mb", "1")
    table.add_row("abcdefghijklmn", "2")
    console.print(table)
    rows = [line for line in buffer.getvalue().splitlines() if line.startswith("│")]
    assert len({line.index("│", 1) for line in rows}) == 1


# -- every command ---------------------------------------------------------------------------------


def _jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def nasty(tmp_path: Path) -> Path:
    """A corpus, a real and a synthetic set and their evaluation, with NASTY in every text and value."""
    chunks = [
        {"id": f"p{i}", "title": f"T{i} {NASTY}", "text": f"passage {i} on topic{i} {NASTY}"}
        for i in range(30)
    ]
    real = [
        {"query_id": f"q{i}", "query": f"topic{(i + 1) % 30} {NASTY}", "gold": {f"p{i}": 1}, "origin": "real",
         "type": ("look" + NASTY, "concept")[i % 2]}
        for i in range(24)
    ]  # fmt: skip
    synthetic = [
        {"query_id": f"s{i}", "query": f"passage {i} on topic{i}", "gold": {f"p{i}": 1},
         "origin": "synthetic", "type": ("look" + NASTY, "concept")[i % 2]}
        for i in range(24)
    ]  # fmt: skip
    _jsonl(tmp_path / "corpus.jsonl", chunks)
    _jsonl(tmp_path / "real.jsonl", real)
    _jsonl(tmp_path / "synthetic.jsonl", synthetic)
    result = run(
        "evaluate", "--corpus", "corpus.jsonl", "--gold", "real.jsonl", "--gold", "synthetic.jsonl",
        "--by", "type", "--k", "1,10", "-o", "results.json", "--per-query", "per_query.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout + result.stderr) == []
    assert r"type=look\x1b[31mred" in result.stdout
    return tmp_path


@pytest.mark.parametrize("output_format", ["table", "markdown", "json", "html"])
def test_calibrate_shows_slice_values_escaped_in_every_format(nasty: Path, output_format: str) -> None:
    if output_format == "html":  # written to a file by name
        result = run("calibrate", "results.json", "--format", "html", "-o", "report.html", cwd=nasty)
        shown = (nasty / "report.html").read_text(encoding="utf-8")
    else:
        result = run("calibrate", "results.json", "--format", output_format, cwd=nasty)
        shown = result.stdout
    assert result.returncode == 0, result.stderr
    assert raw_controls(shown + result.stderr) == []
    if output_format == "json":
        values = {s.get("value") for s in json.loads(shown)["slices"]}
        assert "look" + NASTY in values  # JSON escapes read back as the data
    else:
        assert r"look\x1b[31mred" in shown


def test_compare_shows_slice_values_escaped(nasty: Path) -> None:
    shutil.copyfile(nasty / "results.json", nasty / "results_b.json")  # compare refuses one file twice
    for output_format in ("table", "markdown"):
        result = run("compare", "results.json", "results_b.json", "--format", output_format, cwd=nasty)
        assert result.returncode == 0, result.stderr
        assert raw_controls(result.stdout + result.stderr) == []
        assert r"look\x1b[31mred" in result.stdout


def test_gold_review_shows_query_and_passage_text_escaped(nasty: Path) -> None:
    result = run(
        "gold", "review", "results.json", "--per-query", "per_query.jsonl", "--corpus", "corpus.jsonl",
        "--k", "1", cwd=nasty,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout + result.stderr) == []
    assert "Query: topic" in result.stdout
    assert r"\x1b]0;owned\x07 back\rover" in result.stdout  # the query, \x07 and \r shown, not dropped
    assert r"T1 \x1b[31mred" in result.stdout  # a passage's title and text


def test_a_file_name_in_an_error_is_escaped(tmp_path: Path) -> None:
    name = "missing \x1b[2J\u202e.jsonl"
    result = run("evaluate", "--corpus", name, "--gold", name, cwd=tmp_path)
    assert result.returncode == 2
    assert raw_controls(result.stdout + result.stderr) == []
    assert r"missing \x1b[2J\u202e.jsonl" in result.stderr


def test_history_shows_its_file_name_and_metric_escaped(tmp_path: Path) -> None:
    history = tmp_path / "history \x1b[2J.jsonl"
    row = {"time": "2026-01-01T00:00:00+00:00", "unchanged": False, "retriever": f"bm25 {NASTY}",
           "figures": {"metric": "recall@10", "real": 0.5, "synthetic": 0.9, "calibrated": 0.55}}  # fmt: skip
    history.write_text(json.dumps(row) + "\n", encoding="utf-8")
    result = run("history", history.name, cwd=tmp_path)
    assert raw_controls(result.stdout + result.stderr) == []
    assert r"history \x1b[2J.jsonl" in result.stdout + result.stderr


def test_realism_shows_its_features_escaped(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    (tmp_path / "real.txt").write_text("".join(f"how do I set up device {i}\n" for i in range(30)))
    (tmp_path / "synthetic.txt").write_text(
        "".join(f"what is \x1b[31m\u202e setting {i} ?\n" for i in range(30)), encoding="utf-8"
    )
    for output_format in ("table", "json"):
        result = run("realism", "real.txt", "synthetic.txt", "--format", output_format, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert raw_controls(result.stdout + result.stderr) == []


@pytest.mark.parametrize("output_format", ["table", "json", "html"])
def test_agreement_shows_system_names_escaped(tmp_path: Path, output_format: str) -> None:
    # System names are the runs' own (trec_eval -q output: run, measure, query, value; tab-separated).
    names = ["bm25\x1b[2J", "dense\u202e", "hybrid\x9b", "plain"]
    (tmp_path / "scores.tsv").write_text(
        "".join(
            f"{name}\tndcg_cut_10\t{query}\t{((system * 7 + query * 3) % 10) / 10 + system / 20:.4f}\n"
            for system, name in enumerate(names)
            for query in range(1, 13)
        ),
        encoding="utf-8",
    )
    args = ["agreement", "scores.tsv", "scores.tsv", "--measure", "ndcg@10", "--a-queries", "1-6",
            "--b-queries", "7-12", "--n-resamples", "1000", "--splits", "9", "-f", output_format]  # fmt: skip
    result = run(*args, "-o", "report.out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = (tmp_path / "report.out").read_text(encoding="utf-8")
    assert raw_controls(shown + result.stdout + result.stderr) == []
    to_stdout = run(*args, cwd=tmp_path)
    assert raw_controls(to_stdout.stdout + to_stdout.stderr) == []
    if output_format == "json":
        document = json.loads(to_stdout.stdout)
        listed = [v for v in document.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
        assert {system["name"] for system in listed[-1]} == set(names)  # JSON escapes read back as the data


def test_gold_import_lists_types_escaped(tmp_path: Path) -> None:
    (tmp_path / "tickets.csv").write_text(
        "question,passage,type\n" + "".join(f"question {i},p{i},kind \x1b[2J{i % 2}\n" for i in range(4)),
        encoding="utf-8",
    )
    result = run(
        "gold", "import", "tickets.csv", "--question", "question", "--passage", "passage",
        "--type", "type", "-o", "gold.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout + result.stderr) == []
    assert r"kind \x1b[2J0" in result.stdout


@pytest.mark.slow
def test_interactive_review_on_a_terminal_shows_text_escaped(nasty: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = process.environment({**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"})
    env.pop("NO_COLOR", None)
    program, *arguments = process.command(
        ["gold", "review", "results.json", "--per-query", "per_query.jsonl", "--corpus", "corpus.jsonl",
         "--k", "1", "--interactive", "--judgements", "judged.jsonl", "--by", "ana"]
    )  # fmt: skip
    seen = io.StringIO()
    child = pexpect.spawn(program, arguments, cwd=str(nasty), env=env, encoding="utf-8", timeout=60)
    child.logfile_read = seen
    child.expect(r"\[q\]uit \? ")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    shown = seen.getvalue()
    # A terminal gets rich's colours (ESC [ ... m) and cursor moves; none of the data's own sequences.
    for sequence in ("\x1b[2J", "\x1b]0;owned", "\u202e", "\x9b", "\x07"):  # a tty ends lines \r\n
        assert sequence not in shown
    assert r"\x1b]0;owned\x07" in shown

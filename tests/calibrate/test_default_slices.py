"""What calibrate slices when no field is named: evaluate's --by, else the user's fields and the labels.

A small real set made by ``gold import`` beside a sampled synthetic set: the fields realrecall writes
for its own bookkeeping (where a query was imported from, the language detector's probability, the
type rule, a chunk's inclusion probability) once made most of calibrate's table, one slice per query.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from realrecall.evaluate.slicing import BOOKKEEPING_FIELDS
from support import cli

SAMPLE = resources.files("realrecall").joinpath("data")
LABELS = {"type", "language", "form"}  # the labels realrecall gives every query, sliced by default
IDENTITY = {"query_id", "query", "gold", "origin"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A corpus, 40 real questions imported from a table, and a synthetic set over a sample of chunks."""
    (tmp_path / "corpus.jsonl").write_text(SAMPLE.joinpath("docs_corpus.jsonl").read_text("utf-8"), "utf-8")
    questions = [
        json.loads(line) for line in SAMPLE.joinpath("real_questions.jsonl").read_text("utf-8").splitlines()
    ]
    rows = ["question\tpassage"] + [f"{q['query']}\t{next(iter(q['gold']))}" for q in questions[:40]]
    (tmp_path / "tickets.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    for args in (
        ["gold", "import", "tickets.tsv", "--question", "question", "--passage", "passage",
         "--corpus", "corpus.jsonl", "-o", "real.jsonl"],
        ["generate", "--corpus", "corpus.jsonl", "--output", "synthetic.jsonl", "--backend", "extractive",
         "--sample", "0.5", "--stratify-by", "doc"],
    ):  # fmt: skip
        done = cli.run(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    return tmp_path


def _fields_written(path: Path) -> set[str]:
    return {key for line in path.read_text("utf-8").splitlines() for key in json.loads(line)} - IDENTITY


def _slices(workspace: Path, *evaluate_by: str) -> list[str]:
    done = cli.run(
        "evaluate", "--corpus", "corpus.jsonl", "--gold", "real.jsonl", "--gold", "synthetic.jsonl",
        *evaluate_by, "-o", "results.json", cwd=workspace,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = cli.run("calibrate", "results.json", "--format", "json", cwd=workspace)
    assert report.returncode == 0, report.stderr
    return list(json.loads(report.stdout)["slice_fields"])


def test_every_field_realrecall_writes_is_a_label_or_bookkeeping(workspace: Path) -> None:
    # The one field the synthetic set carries from the user's data: the sample's stratum (chunk metadata).
    written = _fields_written(workspace / "real.jsonl") | _fields_written(workspace / "synthetic.jsonl")
    assert written - LABELS - {"doc"} <= BOOKKEEPING_FIELDS
    assert {"imported_from", "language_detected", "type_rule", "inclusion_probability"} <= written


def test_calibrate_slices_labels_and_user_fields_never_bookkeeping(workspace: Path) -> None:
    slices = _slices(workspace)
    assert not set(slices) & BOOKKEEPING_FIELDS
    assert set(slices) <= LABELS | {"doc"}
    assert "type" in slices


def test_evaluate_by_limits_what_calibrate_slices(workspace: Path) -> None:
    assert _slices(workspace, "--by", "type") == ["type"]
    assert _slices(workspace, "--by", "language,type_rule") == ["language", "type_rule"]

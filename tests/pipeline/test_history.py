"""The history row is a type: written with to_dict, read back with a checked from_dict."""

from __future__ import annotations

import json

import pytest

from realrecall.errors import InputError
from realrecall.pipeline.history import (
    GateRecord,
    GenerationCounts,
    HistoryFigures,
    HistoryRow,
    append_history,
    history_trend,
    load_history,
)

KEYS = [
    "time", "unchanged", "fingerprint", "corpus_sha256", "prompt_sha256", "model", "retriever",
    "figures", "overall", "generation", "gates", "headline",
]  # fmt: skip
FIGURE_KEYS = [
    "metric", "real", "real_ci", "synthetic", "gap", "calibrated", "calibrated_on", "calibrated_stale",
    "n_real", "n_synthetic", "drifted", "drift_auc",
]  # fmt: skip


def a_row(**changes: object) -> HistoryRow:
    row = HistoryRow(
        time="2026-11-01T06:00:00+00:00",
        figures=HistoryFigures(
            metric="recall@10",
            real=0.7,
            real_ci=(0.6, 0.8),
            synthetic=0.9,
            gap=0.2,
            calibrated=0.71,
            calibrated_on="2026-10-01",
            calibrated_stale=False,
            n_real=40,
            n_synthetic=400,
        ),
        unchanged=False,
        fingerprint="f" * 64,
        corpus_sha256="c" * 64,
        prompt_sha256="p" * 64,
        model="test-model",
        retriever="bm25 (k1=0.9, b=0.4)",
        overall={"real": {"recall@10": 0.7}, "synthetic": {"recall@10": 0.9}},
        generation=GenerationCounts(added=3, kept=397, removed=1, requests=3, tokens_in=900, tokens_out=60),
        gates=(GateRecord("fail-under recall@10", True),),
        headline="Quote real recall@10 = 0.700",
    )
    return HistoryRow(**{**row.__dict__, **changes})


def test_a_row_is_written_with_todays_keys_and_read_back_equal(tmp_path):
    path = tmp_path / "history.jsonl"
    row = a_row()
    append_history(path, row)
    append_history(path, a_row(unchanged=True))
    record = json.loads(path.read_text().splitlines()[0])
    assert list(record) == KEYS
    assert list(record["figures"]) == FIGURE_KEYS
    assert record["figures"]["real_ci"] == [0.6, 0.8]
    assert record["gates"] == [{"gate": "fail-under recall@10", "passed": True}]
    assert load_history(path) == [row, a_row(unchanged=True)]


def test_an_old_row_without_the_newer_keys_still_loads(tmp_path):
    # Written before calibrated_stale, real_ci, headline and the token counts were recorded.
    old = {
        "time": "2025-06-01T06:00:00+00:00",
        "unchanged": False,
        "figures": {"metric": "recall@10", "real": 0.5, "synthetic": 0.8, "gap": 0.3, "calibrated": None},
        "generation": {"added": 2, "kept": 0, "removed": 0, "requests": 2},
        "gates": [],
    }
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(old) + "\n")
    (row,) = load_history(path)
    assert row.figures.calibrated_stale is None
    assert row.figures.real_ci is None
    assert row.generation == GenerationCounts(added=2, requests=2)
    assert row.headline is None
    assert history_trend([row]).rows[0].real == 0.5


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"unchanged": "yes"}, '"unchanged" must be true or false'),
        ({"generation": {"requests": 2.5}}, '"generation.requests" must be a whole number'),
        ({"gates": {"gate": "x"}}, '"gates" must be a list'),
        ({"gates": [{"gate": 3, "passed": True}]}, '"gates[].gate" must be a string'),
        ({"figures": {"real_ci": [0.1]}}, '"figures.real_ci" must be [low, high] or null'),
        ({"figures": {"calibrated_stale": 1}}, '"figures.calibrated_stale" must be true or false'),
        ({"overall": {"real": {"recall@10": "high"}}}, '"overall.real.recall@10" must be a number or null'),
        ({"model": ["m"]}, '"model" must be a string'),
    ],
)
def test_a_wrong_field_anywhere_in_a_row_is_one_line_naming_it(tmp_path, row, expected):
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps({"time": "2026-01-01", **row}) + "\n")
    with pytest.raises(InputError) as info:
        load_history(path)
    assert str(info.value).startswith(f"{path}:1: {expected}")
    assert "\n" not in str(info.value)


def test_every_column_of_the_history_table_has_a_header(tmp_path):
    from support import cli

    path = tmp_path / "history.jsonl"
    append_history(path, a_row())
    append_history(path, a_row(unchanged=True))
    done = cli.run("history", str(path))
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if "┃" in line)
    cells = [cell.strip() for cell in header.split("┃")]
    assert cells[0] == "time"
    assert all(cells), header
    assert "status" in cells
    assert "unchanged" in done.stdout


def test_a_file_that_is_not_a_history_is_one_line_not_a_table_of_dashes(tmp_path):
    # `realrecall history real.jsonl` printed a row of dashes per query, exit 0 (issue 28).
    from support import cli

    gold = tmp_path / "real.jsonl"
    gold.write_text(
        '{"query_id": "r-1", "query": "reset password", "gold": {"p1": 1}}\n'
        '{"query_id": "r-2", "query": "export data", "gold": {"p2": 1}}\n'
    )
    with pytest.raises(InputError, match=r'real\.jsonl:1: not a history row: it has no "time"'):
        load_history(gold)
    done = cli.run("history", str(gold))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


def test_a_history_file_that_is_not_there_is_file_not_found(tmp_path):
    # `realrecall history hstory.jsonl` (a typo) warned "no run recorded yet" and exited 0 (issue 28).
    from support import cli

    done = cli.run("history", str(tmp_path / "hstory.jsonl"))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "hstory.jsonl: file not found; give the pipeline.toml or its history file"
    )
    assert len(done.stderr.strip().splitlines()) == 1

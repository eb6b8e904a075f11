"""--gold-from and --evidence-coverage beyond evaluate (issue 11): pipeline.toml's [evaluate] and
calibrate's one-call mode (--synthetic/--real) take them, checked as evaluate checks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.calibrate.one_call import evaluate_and_calibrate
from realrecall.errors import InputError
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.run import run_pipeline
from support import cli

CHUNKS = [
    ("c1", "To reset your password open Settings, choose Account and press Reset password."),
    ("c2", "Sync runs every five minutes by default; set sync.interval_seconds to change it."),
    ("c3", "Backups are kept for thirty days, then deleted; backup.retention_days changes that."),
    ("c4", "Shared notebooks can be edited by every member; public links are read-only."),
]
# A real set anchored by evidence only: a stale chunk id beside it, which --gold-from evidence ignores.
REAL = [
    {
        "query_id": "r1",
        "query": "forgot my password",
        "gold": {"old-7": 1},
        "evidence": [{"doc_id": "c1", "text": "press Reset password"}],
    },
    {
        "query_id": "r2",
        "query": "how long are backups kept",
        "gold": {"old-9": 1},
        "evidence": [{"doc_id": "c3", "text": "kept for thirty days"}],
    },
]


def write_files(folder: Path) -> tuple[Path, Path]:
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in CHUNKS))
    real = folder / "real.jsonl"
    real.write_text("".join(json.dumps({**q, "origin": "real"}) + "\n" for q in REAL))
    return corpus, real


def write_job(folder: Path, evaluate: str) -> Path:
    write_files(folder)
    config = folder / "pipeline.toml"
    config.write_text(
        '[corpus]\npath = "corpus.jsonl"\n[real]\npath = "real.jsonl"\ndate = "2026-11-30"\n'
        '[generate]\noutput = "synthetic.jsonl"\nbackend = "extractive"\n'
        f'[evaluate]\nk = [1, 3]\n{evaluate}\n[calibrate]\nmetric = "recall@3"\n'
    )
    return config


def real_gold_passages(results: Path) -> dict:
    data = json.loads(results.read_text())
    (real,) = [g for g in data["gold_sets"] if g["origins"].get("real")]
    return real["gold_passages"]


def test_the_pipeline_takes_gold_from_and_coverage_from_evaluate(tmp_path):
    config = load_pipeline_config(write_job(tmp_path, 'gold_from = "evidence"\nevidence_coverage = 0.8'))
    assert (config.evaluate.gold_from, config.evaluate.evidence_coverage) == ("evidence", 0.8)
    result = run_pipeline(config)
    passages = real_gold_passages(result.results_path)
    assert (passages["gold_from"], passages["coverage"], passages["from_evidence"]) == ("evidence", 0.8, 2)
    assert result.report.headline  # calibrated on the resolved real set
    (tmp_path / "defaults").mkdir()
    defaults = load_pipeline_config(write_job(tmp_path / "defaults", ""))
    assert (defaults.evaluate.gold_from, defaults.evaluate.evidence_coverage) == ("auto", 0.5)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'gold_from = "chunks"',
            ":11: [evaluate] gold_from must be one of auto, ids, evidence, got 'chunks'",
        ),
        ("evidence_coverage = 1.5", ":11: [evaluate] evidence_coverage must be a number in (0, 1], got 1.5"),
    ],
)
def test_bad_values_name_the_key_and_line(tmp_path, line, expected):
    path = write_job(tmp_path, line)
    with pytest.raises(InputError) as info:
        load_pipeline_config(path)
    assert str(info.value).startswith(f"{path}{expected}")


def test_one_call_calibrate_takes_gold_from(tmp_path):
    corpus, real = write_files(tmp_path)
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text(
        "".join(
            json.dumps(
                {"query_id": f"s{i}", "query": text.split(";")[0], "gold": {cid: 1}, "origin": "synthetic"}
            )
            + "\n"
            for i, (cid, text) in enumerate(CHUNKS)
        )
    )
    report = evaluate_and_calibrate(synthetic, real, corpus=corpus, metric="recall@1", gold_from="evidence")
    by_ids = evaluate_and_calibrate(synthetic, real, corpus=corpus, metric="recall@1", gold_from="ids")
    assert report.headline.real.n == by_ids.headline.real.n == 2
    assert (report.headline.real.value, by_ids.headline.real.value) == (1.0, 0.0)  # the stale ids miss
    with pytest.raises(InputError, match="gold_from must be one of auto, ids, evidence"):
        evaluate_and_calibrate(synthetic, real, corpus=corpus, gold_from="chunks")

    output = tmp_path / "report.json"
    done = cli.run(
        "calibrate", "--synthetic", str(synthetic), "--real", str(real), "--corpus", str(corpus),
        "--k", "1", "--metric", "recall@1", "--gold-from", "evidence", "--evidence-coverage", "0.9",
        "-o", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bad = cli.run("calibrate", str(output), "--gold-from", "evidence")
    assert bad.returncode == 2
    assert bad.err_lines == [
        "error: --gold-from applies to one-call mode (--synthetic/--real); "
        "results files are scored already: pass them to evaluate"
    ]

"""``realrecall drift``: a calibrated alarm for traffic that moved away from the real set."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from realrecall.calibrate.drift import detect_drift
from realrecall.calibrate.realism import load_questions
from realrecall.errors import InputError
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.history import load_history
from realrecall.pipeline.run import run_pipeline
from support.cli import run

TOPIC = ("cancer", "tumor", "tumour", "carcinoma")


@pytest.fixture(scope="module")
def claims(reference_data: Path) -> list[str]:
    return load_questions(reference_data / "scifact" / "queries.jsonl")


@pytest.fixture(scope="module")
def aeronautics(reference_data: Path) -> list[str]:
    return load_questions(reference_data / "cranfield" / "queries.jsonl")


def _fired(real: list[str], traffic: list[str], seed: int) -> bool:
    return detect_drift(real, traffic, seed=seed, n_permutations=100).drifted


@pytest.mark.slow
@pytest.mark.reference_data
def test_a_fifth_of_traffic_on_a_new_topic_fires_in_95_percent_of_trials(
    claims: list[str], aeronautics: list[str]
) -> None:
    """200 SciFact claims as the real set; traffic 160 other claims and 40 Cranfield questions."""
    rng = np.random.default_rng(32)
    fired = 0
    for trial in range(40):
        order = rng.permutation(len(claims))
        real = [claims[i] for i in order[:200]]
        traffic = [claims[i] for i in order[200:360]]
        traffic += [aeronautics[i] for i in rng.choice(len(aeronautics), 40, replace=False)]
        fired += _fired(real, traffic, trial)
    assert fired >= 38  # 95% of 40


@pytest.mark.slow
@pytest.mark.reference_data
def test_a_fifth_of_traffic_on_a_topic_the_real_set_lacks_fires_in_95_percent_of_trials(
    claims: list[str],
) -> None:
    """A topic drift in the same style: real claims with no cancer; 20% of traffic about cancer."""
    topic = [c for c in claims if any(word in c.lower() for word in TOPIC)]
    rest = [c for c in claims if not any(word in c.lower() for word in TOPIC)]
    rng = np.random.default_rng(33)
    fired = 0
    for trial in range(40):
        order = rng.permutation(len(rest))
        real = [rest[i] for i in order[:300]]
        traffic = [rest[i] for i in order[300:540]] + [
            topic[i] for i in rng.choice(len(topic), 60, replace=False)
        ]
        fired += _fired(real, traffic, trial)
    assert fired >= 38


@pytest.mark.slow
@pytest.mark.reference_data
def test_two_samples_of_the_same_traffic_fire_in_at_most_5_percent_of_trials(claims: list[str]) -> None:
    rng = np.random.default_rng(34)
    trials = 200
    fired = 0
    for trial in range(trials):
        order = rng.permutation(len(claims))
        fired += _fired([claims[i] for i in order[:100]], [claims[i] for i in order[100:200]], trial)
    # A permutation test at 0.05 fires with probability 0.05 (here 5/101) when nothing drifted; over 200
    # trials the count is binomial, so the bound allows its sampling error (two standard errors).
    assert fired / trials <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)


@pytest.fixture(scope="module")
def held_out(reference_data: Path) -> tuple[list[str], list[str]]:
    """Query sets the drift alarm was not built on: the 200 human queries of TREC DL 2023 (Bing
    traffic) and the openings (12 words) of the Chroma documentation's chunks, a topic they lack."""
    human = [
        text
        for qid, _, text in (
            line.partition("\t")
            for line in (reference_data / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv")
            .read_text()
            .splitlines()
        )
        if int(qid) < 3_000_000
    ]
    chunks = json.loads((reference_data / "chroma-docs" / "chroma_docs.json").read_text())
    words = (re.sub(r"[#`*{}%|\[\]()<>]", " ", text).split() for text in chunks.values())
    return human, [" ".join(w[:12]) for w in words if len(w) >= 6]


@pytest.mark.slow
@pytest.mark.reference_data
def test_on_held_out_data_a_fifth_of_traffic_on_a_new_topic_fires_and_same_traffic_does_not(
    held_out: tuple[list[str], list[str]],
) -> None:
    """100 DL 2023 human queries as the real set; traffic 80 others and 20 Chroma docs openings.
    Measured: 98 of 100 trials fired; two disjoint samples of the human queries fired in 9 of 200."""
    human, docs = held_out
    assert len(human) == 200
    rng = np.random.default_rng(320)
    fired = 0
    for trial in range(100):
        order = rng.permutation(len(human))
        traffic = [human[i] for i in order[100:180]] + [
            docs[i] for i in rng.choice(len(docs), 20, replace=False)
        ]
        fired += _fired([human[i] for i in order[:100]], traffic, trial)
    assert fired >= 95
    rng = np.random.default_rng(321)
    trials, fired = 200, 0
    for trial in range(trials):
        order = rng.permutation(len(human))
        fired += _fired([human[i] for i in order[:100]], [human[i] for i in order[100:]], trial)
    assert fired / trials <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)


def test_the_p_value_counts_the_observed_labelling_among_the_permutations() -> None:
    real = [f"how do I reset password {i}" for i in range(30)]
    traffic = [f"best pasta recipe with garlic {i}" for i in range(30)]
    report = detect_drift(real, traffic, n_permutations=99)
    assert report.auc == pytest.approx(1.0)
    assert report.p_value == pytest.approx(1 / 100)
    assert report.drifted
    assert {"pasta", "recip"} & {t.token for t in report.terms if t.z > 0}
    assert all("pasta" in query for query, _ in report.queries)


def test_too_few_questions_are_refused() -> None:
    with pytest.raises(InputError, match="at least 20"):
        detect_drift(["a"] * 10, ["b"] * 30)


def test_drift_cli_json_has_auc_test_and_drifted(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("".join(f"how do I reset my password {i}\n" for i in range(25)))
    (tmp_path / "traffic.txt").write_text("".join(f"what wine goes with fish {i}\n" for i in range(25)))
    done = run("drift", str(tmp_path / "real.txt"), str(tmp_path / "traffic.txt"), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["drifted"] is True
    assert report["auc"] == pytest.approx(1.0)
    assert "permutation" in report["test"]
    assert report["queries"]
    assert report["terms"]


def test_drift_reads_traffic_of_four_words_ending_in_a_number_as_questions(tmp_path: Path) -> None:
    # Every traffic line is four words ending in a number, the shape of a qrels line: it was refused as
    # TREC qrels. Without qrels' iteration column (0, Q0, judge:<model>) it is read as questions.
    (tmp_path / "real.txt").write_text("".join(f"how do I reset my password {i}\n" for i in range(25)))
    (tmp_path / "traffic.txt").write_text("".join(f"wine with fish {1990 + i}\n" for i in range(25)))
    done = run("drift", str(tmp_path / "real.txt"), str(tmp_path / "traffic.txt"), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_traffic"] == 25
    assert report["drifted"] is True
    assert any(query.startswith("wine with fish") for query in (q["query"] for q in report["queries"]))


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_drift_of_a_file_against_itself_is_refused(tmp_path: Path, alias: str) -> None:
    # One file as the real set and the traffic read as "No drift detected (AUC 0.032...)", exit 0: a
    # set agrees with itself, which says nothing about traffic (issue 28; realism refuses it too).
    real = tmp_path / "real.txt"
    real.write_text("".join(f"how do I reset my password {i}\n" for i in range(25)))
    traffic = real
    if alias == "symlink":
        traffic = tmp_path / "traffic.txt"
        traffic.symlink_to(real)
    elif alias == "hardlink":
        traffic = tmp_path / "traffic.txt"
        traffic.hardlink_to(real)
    done = run("drift", str(real), str(traffic))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "are the same file" in done.stderr
    assert done.stdout == ""


CHUNKS = [("c1", "Reset your password in Settings."), ("c2", "Backups are kept thirty days.")]
ASKED = ("how do I reset my password", "how long are backups kept")


def _job(folder: Path, traffic: list[str]) -> Path:
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in CHUNKS))
    real = [
        {"query_id": f"r{i}", "query": f"{ASKED[i % 2]} {i}", "gold": {CHUNKS[i % 2][0]: 1}, "origin": "real"}
        for i in range(24)
    ]
    (folder / "real.jsonl").write_text("".join(json.dumps(q) + "\n" for q in real))
    (folder / "traffic.txt").write_text("".join(line + "\n" for line in traffic))
    config = folder / "pipeline.toml"
    config.write_text(
        '[corpus]\npath = "corpus.jsonl"\n[real]\npath = "real.jsonl"\n[generate]\noutput = "synth.jsonl"\n'
        'backend = "extractive"\n[evaluate]\nk = [1, 3]\n[calibrate]\nmetric = "recall@3"\n'
        '[drift]\ntraffic = "traffic.txt"\n'
    )
    return config


def test_the_scheduled_job_marks_calibrated_figures_stale_when_traffic_drifted(tmp_path: Path) -> None:
    config = load_pipeline_config(
        _job(tmp_path, [f"which wine goes with grilled fish {i}" for i in range(24)])
    )
    done = run_pipeline(config)
    row = load_history(config.history)[-1]
    assert row.figures.drifted is True
    assert row.figures.calibrated_stale is True
    assert any("drifted" in warning and "stale" in warning for warning in done.warnings)


def test_the_scheduled_job_records_no_drift_for_traffic_like_the_real_set(tmp_path: Path) -> None:
    traffic = [f"{ASKED[i % 2]} {i + 50}" for i in range(24)]
    config = load_pipeline_config(_job(tmp_path, traffic))
    run_pipeline(config)
    row = load_history(config.history)[-1]
    assert row.figures.drifted is False
    assert row.figures.drift_auc is not None


def test_drift_without_a_real_set_is_a_config_error(tmp_path: Path) -> None:
    config = _job(tmp_path, ["x"])
    config.write_text(config.read_text().replace('[real]\npath = "real.jsonl"\n', ""))
    with pytest.raises(InputError, match=r"\[drift\] needs the real set"):
        load_pipeline_config(config)


def test_the_real_set_as_the_jobs_traffic_is_a_config_error(tmp_path: Path) -> None:
    # The scheduled job recorded drift_auc 0.03, drifted false, for the real set tested against itself.
    config = _job(tmp_path, ["x"])
    config.write_text(config.read_text().replace('traffic = "traffic.txt"', 'traffic = "./real.jsonl"'))
    with pytest.raises(InputError, match=r"\[drift\] traffic is the real set's file"):
        load_pipeline_config(config)

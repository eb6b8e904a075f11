"""Re-measure instead of carrying (issue 30): a real figure from an older corpus is never quoted.

Earlier results hold the real set scored on the old corpus; today's hold synthetic questions only, on a
new chunking where distractors push half the real questions' evidence out of the top 10. Calibrating
today's results on the earlier ones quotes the real set re-scored today, exactly what evaluating it on
today's corpus gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.calibrate import calibrate
from realrecall.calibrate.one_call import evaluate_and_calibrate
from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.evaluate import evaluate, write_results
from realrecall.evaluate.retrievers import build_retriever
from realrecall.gold import load_gold
from support.cli import run

N = 12
WORDS = [
    "router", "backup", "invoice", "warranty", "password", "printer",
    "battery", "firmware", "license", "monitor", "keyboard", "network",
]  # fmt: skip


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _text(i: int) -> str:
    return f"The {WORDS[i]} manual explains how the {WORDS[i]} is set up step by step, chapter {i}."


def _corpora(tmp_path: Path) -> tuple[Path, Path]:
    old = [{"id": f"old-{i}", "doc_id": f"D{i}", "text": _text(i)} for i in range(N)]
    new = [{"id": f"new-{i}", "doc_id": f"D{i}", "start": 0, "text": _text(i)} for i in range(N)]
    # Today's corpus grew: for half the topics, a dozen pages that match the question better.
    new += [
        {"id": f"noise-{i}-{j}", "doc_id": f"N{i}-{j}", "text": f"{WORDS[i]} {WORDS[i]} setup {WORDS[i]} {j}"}
        for i in range(0, N, 2)
        for j in range(12)
    ]
    return _write(tmp_path / "old.jsonl", old), _write(tmp_path / "new.jsonl", new)  # type: ignore[arg-type]


def _real(tmp_path: Path, *, evidence: bool) -> Path:
    records: list[dict[str, object]] = []
    for i in range(N):
        record: dict[str, object] = {
            "query_id": f"r{i}",
            "query": f"{WORDS[i]} setup",
            "gold": {f"old-{i}": 1},
        }
        if evidence:
            record["evidence"] = [{"doc_id": f"D{i}", "text": f"how the {WORDS[i]} is set up", "grade": 1}]
        records.append(record)
    return _write(tmp_path / "real.jsonl", records)


def _synthetic(tmp_path: Path, name: str, prefix: str) -> Path:
    records = [
        {"query_id": f"{name}{i}", "query": f"{WORDS[i]} manual chapter {i}", "gold": {f"{prefix}-{i}": 1}}
        for i in range(N)
    ]
    return _write(tmp_path / f"{name}.jsonl", records)  # type: ignore[arg-type]


def _results(tmp_path: Path, name: str, corpus: Path, *gold: tuple[Path, str]) -> Path:
    chunks = load_corpus(corpus)
    sets = [load_gold(path, origin=origin) for path, origin in gold]
    result = evaluate(sets, corpus=chunks, retriever=build_retriever("bm25", chunks), k=[1, 10])
    path = tmp_path / f"{name}.json"
    write_results(result, path)
    return path


def _setting(tmp_path: Path, *, evidence: bool) -> tuple[Path, Path, Path, Path]:
    old, new = _corpora(tmp_path)
    real = _real(tmp_path, evidence=evidence)
    earlier = _results(
        tmp_path, "earlier", old, (real, "real"), (_synthetic(tmp_path, "syn_old", "old"), "synthetic")
    )
    now = _results(tmp_path, "now", new, (_synthetic(tmp_path, "syn_new", "new"), "synthetic"))
    return earlier, now, real, new


def test_a_changed_corpus_quotes_the_real_set_re_measured_today(tmp_path: Path) -> None:
    earlier, now, real, new = _setting(tmp_path, evidence=True)
    then = calibrate(earlier).overall().real.value
    today = _results(tmp_path, "truth", new, (real, "real"))
    truth = calibrate(today).overall().real.value
    assert then == 1.0
    assert truth == 0.5  # the grown corpus pushes half the evidence out of the top 10

    report = calibrate(now, calibrate_on=earlier)
    assert report.overall().real.value == truth
    assert report.headline.text.startswith("Quote real recall@10 = 0.50")
    assert report.calibrated is not None
    assert report.calibrated.value == truth
    assert any("its real set was re-scored on today's corpus" in note for note in report.calibrated.notes)


def test_a_real_set_that_cannot_be_carried_is_refused_naming_the_fix(tmp_path: Path) -> None:
    earlier, now, _, _ = _setting(tmp_path, evidence=False)
    with pytest.raises(InputError) as error:
        calibrate(now, calibrate_on=earlier)
    message = f"{error.value} {error.value.hint}"
    assert "12 real questions" in message
    assert "neither chunk ids in today's corpus nor evidence text" in message
    assert "realrecall gold migrate" in message
    assert "realrecall evaluate --gold" in message

    done = run("calibrate", str(now), "--calibrate-on", str(earlier))
    assert done.returncode == 2
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1


def test_one_call_calibrate_refuses_a_real_set_today_s_corpus_cannot_score(tmp_path: Path) -> None:
    # Labelled on the old corpus, without evidence: scored on today's, every question would be a miss.
    _, new = _corpora(tmp_path)
    real, synthetic = _real(tmp_path, evidence=False), _synthetic(tmp_path, "syn_new", "new")
    with pytest.raises(InputError) as error:
        evaluate_and_calibrate(synthetic, real, corpus=new)
    message = f"{error.value} {error.value.hint}"
    assert "12 real questions" in message
    assert "neither chunk ids in today's corpus nor evidence text" in message
    assert "re-measure for free" in message
    assert "realrecall gold migrate" in message

    done = run("calibrate", "--synthetic", str(synthetic), "--real", str(real), "--corpus", str(new))
    assert done.returncode == 2
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1
    assert "re-measure for free" in done.stderr


def test_one_call_calibrate_scores_a_real_set_its_evidence_carries_to_today_s_corpus(tmp_path: Path) -> None:
    _, new = _corpora(tmp_path)
    real, synthetic = _real(tmp_path, evidence=True), _synthetic(tmp_path, "syn_new", "new")
    report = evaluate_and_calibrate(synthetic, real, corpus=new)
    assert report.overall().n_real == N
    assert report.overall().real.value == 0.5  # the grown corpus pushes half the evidence out of the top 10


def test_the_terminal_report_says_the_real_set_was_re_scored_today(tmp_path: Path) -> None:
    # The note was in JSON, Markdown and HTML only; the terminal, calibrate's default, did not say it.
    earlier, now, _, _ = _setting(tmp_path, evidence=True)
    done = run("calibrate", str(now), "--calibrate-on", str(earlier))
    assert done.returncode == 0, done.stderr
    assert "its real set was re-scored on today's corpus" in " ".join(done.stdout.split())


def test_results_of_one_retriever_on_another_corpus_are_not_pooled_as_one(tmp_path: Path) -> None:
    # Given side by side (not --calibrate-on), the old corpus's real results merged with today's
    # synthetic ones as one retriever's, and the old real figure (1.0) was the headline.
    old, new = _corpora(tmp_path)
    real = _results(tmp_path, "real_old", old, (_real(tmp_path, evidence=True), "real"))
    now = _results(tmp_path, "now", new, (_synthetic(tmp_path, "syn_new", "new"), "synthetic"))
    report = calibrate([now, real])
    assert report.overall().n_real == 0
    assert not report.headline.text.startswith("Quote real")
    warning = next(w for w in report.warnings if "another system" in w)
    assert "real_old.json holds real questions of bm25" in warning
    assert "the corpus differs" in warning
    assert "--calibrate-on" in warning
    # The same retriever on the same corpus still pools: real and synthetic from two files.
    today = _results(tmp_path, "real_new", new, (_real(tmp_path, evidence=True), "real"))
    pooled = calibrate([now, today])
    assert pooled.overall().n_real == N
    assert pooled.overall().real.value == 0.5
    assert not [w for w in pooled.warnings if "another system" in w]

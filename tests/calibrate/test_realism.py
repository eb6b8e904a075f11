"""The realism score: a classifier's cross-validated AUC telling synthetic questions from real ones."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from realrecall.calibrate.realism import (
    MIN_QUERIES,
    MIN_SUPPORT_SHARE,
    SURFACE_FEATURES,
    RealismScore,
    load_questions,
    realism_missing,
    realism_score,
)
from realrecall.errors import InputError
from support import cli
from support.reference import find_reference_data

pytest.importorskip("sklearn", reason="the realism score needs scikit-learn (the realism extra)")

ROOT = Path(__file__).resolve().parents[2]


def _dl_2023() -> dict[str, list[str]]:
    """TREC DL 2023 queries by source: human (2,000,000-2,999,999), T5 (below 3,100,000) and GPT-4."""
    data = find_reference_data()
    path = None if data is None else data / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv"
    if path is None or not path.is_file():
        pytest.skip("shared/reference-data/trec-dl-2023-real-vs-synthetic is not on this machine")
    sources: dict[str, list[str]] = {"human": [], "t5": [], "gpt4": []}
    for line in path.read_text("utf-8").splitlines():
        qid, text = line.split("\t", 1)
        number = int(qid)
        source = "human" if number < 3_000_000 else "t5" if number < 3_100_000 else "gpt4"
        sources[source].append(text)
    return sources


@pytest.mark.reference_data
def test_human_and_gpt4_queries_are_told_apart():
    dl = _dl_2023()
    score = realism_score(dl["human"], dl["gpt4"])
    assert (score.n_real, score.n_synthetic) == (200, 250)
    assert score.auc > 0.9
    assert score.low <= score.auc <= score.high
    # What gives GPT-4 away is the form: full sentences, capitalised, ending in "?".
    names = [feature.name for feature in score.features[:3]]
    assert 'ends with "?"' in names or "starts with a capital" in names
    assert all(feature.leans == "synthetic" for feature in score.features[:3])


@pytest.mark.reference_data
def test_two_halves_of_the_human_queries_are_not():
    human = list(_dl_2023()["human"])
    random.Random(0).shuffle(human)
    score = realism_score(human[:100], human[100:])
    assert 0.4 <= score.auc <= 0.6
    assert score.low <= 0.5 <= score.high
    assert score.verdict == "the synthetic questions read like the real ones"


@pytest.mark.reference_data
def test_the_score_is_reproducible_and_the_seed_is_recorded():
    dl = _dl_2023()
    first = realism_score(dl["human"], dl["t5"], seed=3)
    assert first == realism_score(dl["human"], dl["t5"], seed=3)
    assert first.seed == 3
    assert first.folds == 5


def test_too_few_questions_is_one_clear_error():
    with pytest.raises(InputError, match=f"at least {MIN_QUERIES} questions on each side"):
        realism_score(["what is x"] * 50, ["what is y"] * 3)
    assert realism_missing(50, 50) is None


def test_without_scikit_learn_the_reason_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now raises ImportError
    reason = realism_missing(50, 50)
    assert reason is not None
    assert "realrecall[realism]" in reason


def test_question_files_in_every_format(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"query_id": "q1", "query": "reset password", "gold": {"d1": 1}})
        + "\n"
        + json.dumps({"query_id": "q2", "query": "vpn [/] setup", "gold_ids": ["d2"]})
        + "\n",
        encoding="utf-8",
    )
    assert load_questions(gold) == ["reset password", "vpn [/] setup"]
    loose = tmp_path / "loose.jsonl"
    loose.write_text('{"question": "a"}\n"b"\n\n{"text": "c"}\n', encoding="utf-8")
    assert load_questions(loose) == ["a", "b", "c"]
    plain = tmp_path / "questions.txt"
    plain.write_text("dog age by teeth\n\nHow old is my dog?\n", encoding="utf-8")
    assert load_questions(plain) == ["dog age by teeth", "How old is my dog?"]
    topics = tmp_path / "queries.tsv"
    topics.write_text("2001\tdog age by teeth\n2002\tcat food\n", encoding="utf-8")
    assert load_questions(topics) == ["dog age by teeth", "cat food"]


def test_short_questions_of_four_words_ending_in_a_number_are_read_as_questions(tmp_path):
    # Every line four words ending in a number, as a qrels line is: without qrels' iteration column
    # (0, Q0 or judge:<model>) on every line, it is a file of questions.
    traffic = tmp_path / "traffic.txt"
    lines = ["covid cases in 2020", "best films of 1999", "iphone 12 price 2021", "windows error code 43"]
    traffic.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_questions(traffic) == lines
    # One line of another shape among qrels lines: not qrels either.
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("q1 0 d1 1\nwhat is q1 about\n", encoding="utf-8")
    assert load_questions(mixed) == ["q1 0 d1 1", "what is q1 about"]
    for qrels_text in ("q1 Q0 d1 1\nq2 Q0 d2 0\n", "q1 judge:gpt-4o d1 2\nq2 judge:gpt-4o d2 0\n"):
        qrels = tmp_path / "qrels.txt"
        qrels.write_text(qrels_text, encoding="utf-8")
        with pytest.raises(InputError, match="TREC qrels"):
            load_questions(qrels)


def test_files_without_question_text_are_refused_with_the_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 0\n", encoding="utf-8")
    with pytest.raises(InputError, match="TREC qrels, which hold no question text"):
        load_questions(qrels)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "ok"}\n{"id": 3}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_questions(bad)
    assert caught.value.line == 2
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no question found"):
        load_questions(empty)


def _write_tsv(path: Path, questions: list[str]) -> Path:
    path.write_text("".join(f"{n}\t{q}\n" for n, q in enumerate(questions)), encoding="utf-8")
    return path


@pytest.mark.reference_data
def test_cli_json_has_the_auc(tmp_path):
    dl = _dl_2023()
    real = _write_tsv(tmp_path / "real.tsv", dl["human"])
    synthetic = _write_tsv(tmp_path / "synthetic.tsv", dl["gpt4"])
    done = cli.run("realism", str(real), str(synthetic), "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["auc"] > 0.9
    assert document["n_real"] == 200
    assert document["n_synthetic"] == 250
    assert document["features"]
    assert {"name", "contribution", "weight", "leans", "real", "synthetic", "support"} <= set(
        document["features"][0]
    )
    assert set(document["features"][0]["support"]) == {"real", "synthetic"}
    table = cli.run("realism", str(real), str(synthetic))
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("realism AUC ")
    assert "What tells them apart" in table.stdout
    assert "held by" in table.stdout


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    real = _write_tsv(tmp_path / "real.tsv", [f"question {n}" for n in range(30)])
    few = _write_tsv(tmp_path / "few.tsv", ["only [bold]one[/bold]"])
    done = cli.run("realism", str(real), str(few))
    assert done.returncode == 2
    assert done.err_lines == [
        f"error: no realism score: needs at least {MIN_QUERIES} questions on each side "
        f"(30 real, 1 synthetic); give more questions"
    ]
    missing = cli.run("realism", str(real), str(tmp_path / "nope.txt"))
    assert missing.returncode == 2
    assert "nope.txt: file not found" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.parametrize("link", ["same path", "symlink", "hard link", "copy"])
def test_the_same_set_twice_is_refused_in_one_line(tmp_path, link):
    questions = [f"how do I set up device {n}" for n in range(30)]
    real = _write_tsv(tmp_path / "real.tsv", questions)
    other = tmp_path / "other.tsv"
    if link == "same path":
        other = real
    elif link == "symlink":
        other.symlink_to(real)
    elif link == "hard link":
        other.hardlink_to(real)
    else:
        _write_tsv(other, questions)
    done = cli.run("realism", str(real), str(other))
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert done.err_lines[0].startswith("error: ")
    assert "same" in done.err_lines[0]
    assert done.stdout == ""


def test_a_score_below_chance_is_called_noise_never_realism(tmp_path):
    # The same questions on both sides but two: each is scored by a model that saw its twin with the
    # other label, so the classifier does worse than chance.
    questions = [f"how do I set up device {n} on {place}" for n in range(20) for place in ("mac", "linux")]
    real = _write_tsv(tmp_path / "real.tsv", questions)
    synthetic = _write_tsv(tmp_path / "synthetic.tsv", [*questions[:-2], "what is a vault", "where is sync"])
    done = cli.run("realism", str(real), str(synthetic), "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["interval"][1] < 0.5
    assert "read like" not in document["verdict"]
    assert "worse than chance" in document["verdict"]
    assert "noise" in document["verdict"]


def test_the_verdict_follows_the_interval():
    def verdict(auc: float, low: float, high: float) -> str:
        return RealismScore(auc, low, high, 0.95, 50, 50, 5, 0, ()).verdict

    assert "worse than chance" in verdict(0.15, 0.05, 0.25)
    assert verdict(0.45, 0.35, 0.55) == "the synthetic questions read like the real ones"
    assert "almost every time" in verdict(0.95, 0.92, 0.98)


def test_cli_start_up_does_not_import_scikit_learn():
    code = "import sys, realrecall.cli; print('sklearn' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def _document(real_questions: list[str], synthetic_questions: list[str]):  # type: ignore[no-untyped-def]
    from calibrate.results_builder import per_query, results_document

    real = [per_query(f"r{i}", "real", rank=1, query=q) for i, q in enumerate(real_questions)]
    synthetic = [per_query(f"s{i}", "synthetic", rank=1, query=q) for i, q in enumerate(synthetic_questions)]
    return results_document([("real", real), ("synthetic", synthetic)])


def _calibrated(real_questions: list[str], synthetic_questions: list[str], *, realism: bool = True):  # type: ignore[no-untyped-def]
    from realrecall.calibrate import calibrate

    document = _document(real_questions, synthetic_questions)
    return calibrate(document, seed=1, n_resamples=200, realism=realism)


KEYWORDS = [
    f"{a} {b}"
    for a in ("printer", "wifi", "vpn", "badge", "refund")
    for b in ("setup", "error", "fee", "reset", "login")
]
SENTENCES = [
    f"How do I {b} my {a} when it stops working?"
    for a in ("printer", "wifi", "vpn", "badge", "refund")
    for b in ("setup", "fix", "pay", "reset", "renew")
]


def test_calibrate_reports_the_realism_score_in_every_format():
    from realrecall.calibrate.report import render

    report = _calibrated(KEYWORDS, SENTENCES)
    score = report.diagnostics.realism
    assert score is not None
    assert score.auc > 0.9
    assert report.diagnostics.realism_skipped is None
    document = json.loads(render(report, "json"))
    assert document["diagnostics"]["realism"]["auc"] == round(score.auc, 4)
    assert document["diagnostics"]["realism_skipped"] is None
    markdown = render(report, "markdown")
    assert "Realism: a classifier tells synthetic from real questions with AUC 1.00" in markdown
    assert '| ends with "?" | synthetic |' in markdown
    html = render(report, "html")
    assert "Realism: a classifier tells synthetic from real questions" in html
    assert "ends with &quot;?&quot;" in html


def test_calibrate_says_why_the_realism_score_is_absent():
    from realrecall.calibrate.report import render

    report = _calibrated(KEYWORDS[:5], SENTENCES)
    assert report.diagnostics.realism is None
    reason = f"needs at least {MIN_QUERIES} questions on each side (5 real, 25 synthetic)"
    assert report.diagnostics.realism_skipped == reason
    assert json.loads(render(report, "json"))["diagnostics"]["realism_skipped"] == reason
    assert f"Realism score absent: {reason}." in render(report, "markdown")
    assert f"Realism score absent: {reason}." in render(report, "html")


def test_calibrate_trains_no_realism_classifier_unless_asked(tmp_path: Path):
    from realrecall.calibrate.report import render

    report = _calibrated(KEYWORDS, SENTENCES, realism=False)
    assert report.diagnostics.realism is None
    assert report.diagnostics.realism_skipped is not None
    assert report.diagnostics.realism_skipped.startswith("not asked for (--realism trains a classifier")
    assert "Realism score absent: not asked for" in render(report, "markdown")

    results = tmp_path / "results.json"
    results.write_text(json.dumps(_document(KEYWORDS, SENTENCES)), encoding="utf-8")
    quiet = cli.run("calibrate", str(results), "--n-resamples", "200")
    assert quiet.returncode == 0, quiet.stderr
    assert "Realism score absent: not asked for" in quiet.stdout
    asked = cli.run("calibrate", str(results), "--n-resamples", "200", "--realism")
    assert asked.returncode == 0, asked.stderr
    assert "Realism: a classifier tells synthetic from real questions with AUC 1.00" in asked.stdout


def _holders(name: str, texts: list[str]) -> int:
    """How many of ``texts`` hold the feature ``name``: the surface feature's own function, or for an
    n-gram scikit-learn's own char_wb analyser (the one the classifier reads)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    surface = dict(SURFACE_FEATURES)
    if name in surface:
        return sum(surface[name](text) != 0 for text in texts)
    gram = json.loads(name.removeprefix("characters "))
    analyse = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True).build_analyzer()
    return sum(gram in analyse(text) for text in texts)


def test_features_are_ranked_by_contribution_and_name_how_many_questions_hold_them():
    words = ["printer", "badge", "invoice", "backup", "calendar", "password", "parking", "laptop"]
    rng = random.Random(1)
    real = [f"{rng.choice(words)} {rng.choice(words)} not working" for _ in range(60)]
    real[0] = "printer, badge not working"  # one real query with a comma
    synthetic = [
        f"How do I fix the {rng.choice(words)} when the {rng.choice(words)} fails?" for _ in range(60)
    ]

    score = realism_score(real, synthetic)

    contributions = [feature.contribution for feature in score.features]
    assert contributions == sorted(contributions, reverse=True)
    assert all(value > 0 for value in contributions)
    for feature in score.features:
        assert feature.real_support == _holders(feature.name, real), feature.name
        assert feature.synthetic_support == _holders(feature.name, synthetic), feature.name
        held = feature.synthetic_support if feature.leans == "synthetic" else feature.real_support
        assert held >= MIN_SUPPORT_SHARE * 60
    assert "has a comma" not in [feature.name for feature in score.features]  # held by 1 of 60


@pytest.mark.reference_data
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_halves_of_one_human_set_list_no_feature_a_few_questions_hold(seed: int):
    human = list(_dl_2023()["human"])
    random.Random(seed).shuffle(human)
    first, second = human[:100], human[100:]

    score = realism_score(first, second)

    assert score.features
    for feature in score.features:
        held = feature.synthetic_support if feature.leans == "synthetic" else feature.real_support
        assert held >= MIN_SUPPORT_SHARE * 100, feature

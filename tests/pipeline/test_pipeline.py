"""The scheduled job end to end: reruns send nothing, a changed chunk is the only one sent, history grows."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from realrecall.errors import GateFailed, InputError
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.demo import run_demo
from realrecall.pipeline.history import HistoryRow, history_trend, load_history
from realrecall.pipeline.run import run_pipeline
from support import cli
from support.fake_openai import FakeOpenAI

CHUNKS = [
    ("c1", "To reset your password open Settings, choose Account and press Reset password."),
    ("c2", "Sync runs every five minutes by default; set sync.interval_seconds to change it."),
    ("c3", "Backups are kept for thirty days, then deleted; backup.retention_days changes that."),
    ("c4", "Shared notebooks can be edited by every member; public links are read-only."),
    ("c5", "Error E1042 means the server certificate expired; renew it and restart harbord."),
]
REAL = [
    {
        "query_id": "r1",
        "query": "forgot my password how to change it",
        "gold": {"c1": 1},
        "type": "conceptual",
    },
    {"query_id": "r2", "query": "how long do you keep backups", "gold": {"c3": 1}, "type": "lookup"},
    {"query_id": "r3", "query": "E1042", "gold": {"c5": 1}, "type": "lookup"},
]
WORDS = [
    "where",
    "setting",
    "change",
    "phone",
    "team",
    "keep",
    "old",
    "error",
    "notes",
    "help",
    "laptop",
    "why",
]


def question_handler(body: dict[str, Any]) -> str:
    """A distinct everyday question per request, derived from the request so reruns are comparable."""
    digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).digest()
    words = [WORDS[b % len(WORDS)] for b in digest[:5]]
    return json.dumps({"question": f"{' '.join(words)} {digest[5]}?"})


def write_job(folder: Path, *, backend: str = "llm", extra: str = "") -> Path:
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in CHUNKS))
    (folder / "real.jsonl").write_text("".join(json.dumps({**q, "origin": "real"}) + "\n" for q in REAL))
    model = 'model = "test-model"\n' if backend == "llm" else ""
    # One request a question (situation-first generation sends two; tests/generate/test_prompting.py).
    strategy = 'strategy = "direct"\n' if backend == "llm" else ""
    config = folder / "pipeline.toml"
    config.write_text(
        f"""
[corpus]
path = "corpus.jsonl"
[real]
path = "real.jsonl"
date = "2026-11-30"
[generate]
output = "synthetic.jsonl"
backend = "{backend}"
{model}per_chunk = 1
concurrency = 2
{strategy}[evaluate]
k = [1, 3]
by = ["type"]
[calibrate]
metric = "recall@3"
{extra}
"""
    )
    return config


@pytest.fixture
def llm_job(tmp_path, fake_openai):
    fake_openai.chat_handler = question_handler
    return load_pipeline_config(write_job(tmp_path)), fake_openai


@pytest.mark.slow
def test_rerun_with_nothing_changed_sends_no_request_and_is_marked_unchanged(llm_job):
    config, server = llm_job
    first = run_pipeline(config)
    sent = server.count("chat")
    assert sent == len(CHUNKS)
    assert first.generation.added == len(CHUNKS)
    assert not first.unchanged

    second = run_pipeline(config)
    assert server.count("chat") == sent
    assert second.unchanged
    assert second.generation.kept == len(CHUNKS)
    rows = load_history(config.history)
    assert [row.unchanged for row in rows] == [False, True]
    assert rows[1].figures == rows[0].figures
    assert rows[1].generation.requests == 0
    assert second.history_row == rows[1]


def test_a_pipeline_whose_generate_section_names_an_endpoint_sends_its_requests_there(tmp_path, fake_openai):
    # OPENAI_BASE_URL names fake_openai; [generate] base_url names another server, which is asked.
    path = write_job(tmp_path)
    with FakeOpenAI() as named:
        named.chat_handler = question_handler
        path.write_text(
            path.read_text().replace("concurrency = 2\n", f"concurrency = 2\nbase_url = {named.base_url!r}\n")
        )

        result = run_pipeline(load_pipeline_config(path))

        assert result.generation.added == len(CHUNKS)
        assert named.count("chat") == len(CHUNKS)
    assert fake_openai.count("chat") == 0
    summary = json.loads((tmp_path / "synthetic.summary.json").read_text())
    assert "base_url" not in summary["config"]  # where the requests went is no choice of the questions


def test_a_pipeline_whose_generate_section_asks_for_the_batch_api_sends_no_live_request(
    tmp_path, fake_openai
):
    fake_openai.chat_handler = question_handler
    path = write_job(tmp_path)
    path.write_text(
        path.read_text().replace("concurrency = 2\n", "concurrency = 2\nbatch = true\npoll_interval = 0.01\n")
    )
    config = load_pipeline_config(path)
    said: list[str] = []

    first = run_pipeline(config, progress=said.append)

    assert fake_openai.count("batches") == 1
    assert fake_openai.count("chat") == 0
    assert first.generation.added == len(CHUNKS)
    assert any(line.startswith("batch ") and "done" in line for line in said)
    summary = json.loads((tmp_path / "synthetic.summary.json").read_text())
    assert summary["config"]["batch"] is True
    second = run_pipeline(config)
    assert fake_openai.count("batches") == 1
    assert second.unchanged


def test_a_changed_chunk_is_the_only_one_sent_again(llm_job):
    config, server = llm_job
    run_pipeline(config)
    sent = server.count("chat")
    lines = config.corpus.read_text().splitlines()
    lines[1] = json.dumps(
        {"id": "c2", "text": "Sync now runs every minute; sync.interval_seconds still changes it."}
    )
    config.corpus.write_text("\n".join(lines) + "\n")

    again = run_pipeline(config)
    assert server.count("chat") == sent + 1
    assert (again.generation.added, again.generation.kept, again.generation.removed) == (1, 4, 1)
    assert not again.unchanged
    synthetic = [json.loads(line) for line in config.synthetic.read_text().splitlines()]
    assert sorted(next(iter(r["gold"])) for r in synthetic) == ["c1", "c2", "c3", "c4", "c5"]


def test_pipeline_writes_results_reports_and_a_history_row(llm_job):
    config, _ = llm_job
    result = run_pipeline(config)
    results = json.loads(result.results_path.read_text())
    assert [g["origins"] for g in results["gold_sets"]] == [{"real": 3}, {"synthetic": 5}]
    assert result.per_query_path.exists()
    html = result.report_paths["html"].read_text()
    assert result.report.headline.text.split(" (")[0] in html
    (row,) = load_history(config.history)
    assert row.figures.metric == "recall@3"
    assert row.figures.n_real == 3
    assert row.figures.n_synthetic == 5
    assert row.model == "test-model"
    assert len(row.prompt_sha256 or "") == 64
    assert row.corpus_sha256 == results["corpus"]["sha256"]
    # The line on disk is the row's to_dict, with the keys every version wrote.
    assert json.loads(config.history.read_text()) == row.to_dict()


def test_the_history_row_takes_the_generator_from_the_summary_not_its_file(llm_job, monkeypatch):
    import realrecall.generate

    real_generate = realrecall.generate.generate

    def generate_then_lose_the_summary_file(*args, **kwargs):
        summary = real_generate(*args, **kwargs)
        summary.summary_path.unlink()
        return summary

    monkeypatch.setattr(realrecall.generate, "generate", generate_then_lose_the_summary_file)
    config, _ = llm_job
    row = run_pipeline(config).history_row
    assert row.model == "test-model"
    assert len(row.prompt_sha256 or "") == 64


# Three real questions cannot put recall@3's Wilson lower bound at 1.0, whatever they score: a gate
# that fails honestly (a bound above 1 is refused before any work).
FAILING_GATE = 'fail_under = { "recall@3" = 1.0 }\ngate_on = "bound"'


def test_a_failing_gate_is_recorded_then_raised(tmp_path):
    config = load_pipeline_config(write_job(tmp_path, backend="extractive", extra=FAILING_GATE))
    with pytest.raises(GateFailed, match="recall@3"):
        run_pipeline(config)
    (row,) = load_history(config.history)
    assert [gate.to_dict() for gate in row.gates] == [{"gate": "fail-under recall@3", "passed": False}]


def test_budgeted_metrics_are_set_in_the_config_and_can_be_the_headline(tmp_path):
    path = write_job(tmp_path, backend="extractive")
    text = path.read_text().replace("k = [1, 3]", 'k = [1, 3]\nmetrics = ["recall@3", "recall@40tok"]')
    path.write_text(text.replace('metric = "recall@3"', 'metric = "recall@40tok"'))
    config = load_pipeline_config(path)
    assert config.evaluate.metrics == ("recall@3", "recall@40tok")
    outcome = run_pipeline(config)
    results = json.loads((config.output_dir / "results.json").read_text())
    assert results["metrics"] == ["recall@3", "recall@40tok"]
    assert outcome.report.metric == "recall@40tok"


@pytest.mark.slow
def test_demo_runs_offline_and_a_second_run_is_unchanged(tmp_path):
    first = run_demo(tmp_path)
    assert first.report.headline.text.startswith("Quote real recall@10 = ")
    assert first.generation.added >= 200
    html = first.report_paths["html"].read_text()
    assert "<script" not in html
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?https?:""", html)  # self-contained: nothing fetched
    second = run_demo(tmp_path)
    assert second.unchanged
    assert second.generation.added == 0
    trend = history_trend(load_history(tmp_path / "history.jsonl"))
    assert [row.unchanged for row in trend.rows] == [False, True]
    assert trend.rows[1].change == 0.0
    assert "over scheduled runs" in second.report_paths["html"].read_text()


def test_history_trend_flags_a_drop():
    rows = [
        {"time": "2026-11-01", "figures": {"metric": "recall@10", "real": 0.70, "synthetic": 0.9}},
        {"time": "2026-11-08", "figures": {"metric": "recall@10", "real": 0.71, "synthetic": 0.9}},
        {"time": "2026-11-15", "figures": {"metric": "recall@10", "real": 0.62, "synthetic": 0.9}},
    ]
    trend = history_trend([HistoryRow.from_dict(row) for row in rows])
    assert [row.drop for row in trend.rows] == [False, False, True]
    assert trend.drops[0].change == pytest.approx(-0.09)


def test_run_and_history_commands(tmp_path):
    config = write_job(tmp_path, backend="extractive")
    done = cli.run("run", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Quote real recall@3 = ")
    shown = cli.run("history", str(config), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "recall@3" in shown.stdout


def test_run_with_a_bad_config_exits_2_with_one_line(tmp_path):
    path = tmp_path / "pipeline.toml"
    path.write_text("[corpus]\npath = 'missing.jsonl'\n[generate]\noutput = 's.jsonl'\n")
    done = cli.run("run", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert "missing.jsonl: file not found" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_run_refuses_a_fail_under_outside_zero_one_before_generating(tmp_path):
    config = write_job(tmp_path, backend="extractive", extra='fail_under = { "recall@3" = 1.5 }')
    done = cli.run("run", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert "[calibrate] fail_under recall@3=1.5 is outside [0, 1]" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "synthetic.jsonl").exists()


def test_run_refuses_a_real_set_today_s_corpus_cannot_score_before_generating(tmp_path):
    config = write_job(tmp_path, backend="extractive")
    gone = [{**q, "gold": {f"old-{q['query_id']}": 1}, "origin": "real"} for q in REAL]
    (tmp_path / "real.jsonl").write_text("".join(json.dumps(q) + "\n" for q in gone))
    done = cli.run("run", str(config), cwd=tmp_path)
    assert done.returncode == 2
    assert "3 real questions" in done.stderr
    assert "neither chunk ids in today's corpus nor evidence text" in done.stderr
    assert "re-measure for free" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "synthetic.jsonl").exists()


def test_the_realism_classifier_is_trained_only_when_pipeline_toml_asks(tmp_path):
    default = load_pipeline_config(write_job(tmp_path, backend="extractive"))
    assert default.calibrate.realism is False
    run_pipeline(default)
    assert "Realism score absent: not asked for" in (default.output_dir / "report.md").read_text()
    asked = load_pipeline_config(write_job(tmp_path, backend="extractive", extra="realism = true"))
    assert asked.calibrate.realism is True
    run_pipeline(asked)
    report = (asked.output_dir / "report.md").read_text()
    assert "Realism score absent: needs at least" in report  # asked for, and refused on 3 real questions


def test_run_exits_1_when_a_gate_fails(tmp_path):
    config = write_job(tmp_path, backend="extractive", extra=FAILING_GATE)
    done = cli.run("run", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert "gate failed" in done.stderr


BASE = "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[corpus]\npath = 'c.jsonl'\n", "[generate] output is required"),
        (
            "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n[evaluat]\nk = [1]\n",
            "did you mean 'evaluate'",
        ),
        (
            "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\nbackend = 'llm'\n",
            "model is required",
        ),
        (
            "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n[evaluate]\nk = [0]\n",
            ":6: [evaluate] k must hold whole numbers >= 1, got [0]",
        ),
        ("[corpus]\npath = 1\n[generate]\noutput = 's.jsonl'\n", "[corpus] path has the wrong type"),
        ("[corpus\n", "not valid TOML"),
        (
            BASE + "per_chunk = 1\nbanana = 2\n",
            ":6: unknown key 'banana' in [generate]; known: output, backend, model, temperature, max_tokens",
        ),
        (
            BASE + "per_chunck = 2\n",
            ":5: unknown key 'per_chunck' in [generate]; did you mean 'per_chunk'?",
        ),
        (
            BASE + "options = { per_chunk = 1, seed = 0 }\n",
            ":5: [generate] options is no longer a table of its own: its keys are keys of [generate]; "
            "write per_chunk = ..., seed = ... under [generate] and remove options",
        ),
        (
            BASE + "[evaluate]\nk = [1, 5]\n",
            "toml: [calibrate] metric 'recall@10' is not computed with k = [1, 5]; choose from recall@1",
        ),
        (
            BASE + "[calibrate]\nmetric = 'recall@5'\nfail_under = { 'ndcg@3' = 0.5 }\n",
            ":7: [calibrate] fail_under 'ndcg@3' is not computed with k = [1, 5, 10, 50]",
        ),
        (
            BASE + "[calibrate]\nmax_gap = nan\n",
            ":6: [calibrate] max_gap must be a number or none, got nan",
        ),
        (
            BASE + "[calibrate]\nmax_age_days = -1\n",
            ":6: [calibrate] max_age_days must be a number of 0 or more",
        ),
        (BASE + "[calibrate]\nconfidence = 1.5\n", ":6: [calibrate] confidence must be between 0 and 1"),
        (
            BASE + "[calibrate]\nfail_under = { 'recall@10' = inf }\n",
            ":6: [calibrate] fail_under of 'recall@10' must be a number, got inf",
        ),
        (
            BASE + "[calibrate]\nfail_under = { 'recall@10' = 1.5 }\n",
            ":6: [calibrate] fail_under recall@10=1.5 is outside [0, 1], where every metric lies",
        ),
        (
            BASE + "[calibrate]\nfail_under = { 'recall@10' = -0.1 }\n",
            ":6: [calibrate] fail_under recall@10=-0.1 is outside [0, 1]",
        ),
        (
            BASE + "[evaluate]\nquery_timeout = 0\n",
            ":6: [evaluate] query_timeout must be a positive number of seconds, got 0.0",
        ),
        (
            BASE + "[evaluate]\nretriever = 'bm52'\n",
            ":6: [evaluate] retriever 'bm52' is unknown; choose from bm25",
        ),
        (BASE + "[evaluate]\nretriever = 'dense'\n", "[evaluate] retriever dense needs embed_model"),
        (
            BASE + "[real]\npath = 'r.jsonl'\ndate = 'last week'\n",
            ":7: [real] date must be an ISO date, got 'last week'",
        ),
        (BASE + "[evaluate]\nmetrics = ['recall@ten']\n", ":6: [evaluate] metrics: "),
        (BASE + "[evaluate]\nmetrics = [10]\n", ":6: [evaluate] metrics must be a list of names, got [10]"),
        (
            BASE + "[evaluate]\nmetrics = ['recall@2000tok']\n",
            "[calibrate] metric 'recall@10' is not computed in [evaluate] metrics; choose from "
            "recall@2000tok, or add it to [evaluate] metrics",
        ),
        (BASE + "[engine]\nengine = 'spark'\n", ":6: [engine] engine must be one of local, ray, got 'spark'"),
        (BASE + "[engine]\nnum_cpu = 2\n", ":6: unknown key 'num_cpu' in [engine]; did you mean 'num_cpus'?"),
        (
            BASE + "[engine]\nretrieval_actors = 0\n",
            ":6: [engine] retrieval_actors must be a whole number >= 1",
        ),
        (
            BASE + "[engine]\naddress = 'auto'\nnum_cpus = 2\n",
            ":7: [engine] num_cpus is for a cluster started here; a cluster joined at an address has its own",
        ),
        (
            BASE + "[evaluate]\nk = [1]\nengine = 'ray'\n",
            ":7: [evaluate] engine is a key of [engine], which sets the engine of every stage; "
            "move engine = ... to [engine]",
        ),
        (
            BASE + "generation_actors = 4\n",
            ":5: [generate] generation_actors is a key of [engine], which sets the engine of every stage",
        ),
    ],
)
def test_config_mistakes_are_found_on_loading_with_file_line_and_fix(tmp_path, text, expected):
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_pipeline_config(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_defaults_flag_a_calibration_older_than_90_days_and_paths_are_relative_to_the_config(tmp_path):
    path = tmp_path / "jobs" / "pipeline.toml"
    path.parent.mkdir()
    path.write_text(BASE + "[evaluate]\nretriever = 'search/mine.py:search'\nquery_timeout = 2.5\n")
    config = load_pipeline_config(path)
    assert config.calibrate.max_age_days == 90
    assert config.evaluate.retriever == f"{path.parent / 'search' / 'mine.py'}:search"
    assert config.evaluate.run_settings.query_timeout == 2.5
    job = load_pipeline_config(write_job(tmp_path))
    assert job.evaluate.retriever is None  # bm25, evaluate's default
    assert (job.evaluate.run_settings.query_timeout, job.evaluate.run_settings.request_timeout) == (
        300.0,
        60.0,
    )  # a hung retriever or server ends the run


def test_a_hung_retriever_ends_the_scheduled_job_in_one_line_and_records_nothing(tmp_path):
    job = write_job(tmp_path, backend="extractive")
    (tmp_path / "hung.py").write_text("import time\ndef search(query, k):\n    time.sleep(3600)\n")
    job.write_text(
        job.read_text().replace(
            "[evaluate]\n", "[evaluate]\nretriever = 'hung.py:search'\nquery_timeout = 0.3\n"
        )
    )

    done = cli.run("run", str(job))

    assert done.returncode == 2, done.stderr
    assert done.err_lines[-1].startswith(
        f"error: custom retriever {tmp_path / 'hung.py'}:search gave no answer within 0.3 s"
    )
    assert not (tmp_path / "history.jsonl").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("per_chunk = 0", "per_chunk must be an integer within [1, 1000], got 0"),
        ("temperature = 'hot'", "temperature must be a number, got 'hot'"),
        ("types = 'lookup=x'", "types: bad weight 'x' for question type 'lookup'"),
    ],
)
def test_a_bad_option_value_is_one_line_naming_the_config_file_and_line_on_loading(
    tmp_path, options, expected
):
    config_path = write_job(tmp_path, backend="extractive")
    text = config_path.read_text().replace("per_chunk = 1\n", options + "\n")
    config_path.write_text(text)
    line = text.splitlines().index(options) + 1
    with pytest.raises(InputError) as info:
        load_pipeline_config(config_path)
    assert str(info.value).startswith(f"{config_path}:{line}: [generate] {expected}")


def test_inputs_and_the_retriever_are_checked_before_any_question_is_generated(tmp_path):
    config_path = write_job(tmp_path, backend="extractive")
    (tmp_path / "real.jsonl").write_text('{"query_id": "r1", "query": "x", "gold": {"c1": NaN}}\n')
    config = load_pipeline_config(config_path)
    said: list[str] = []
    with pytest.raises(InputError, match=r"real\.jsonl:1: grade of passage 'c1' must be an integer, got NaN"):
        run_pipeline(config, progress=said.append)
    (tmp_path / "real.jsonl").unlink()
    (tmp_path / "mine.py").write_text("def search(query, k)\n    return []\n")
    retriever = f"{tmp_path / 'mine.py'}:search"
    broken = dataclasses.replace(
        config, real=None, evaluate=dataclasses.replace(config.evaluate, retriever=retriever)
    )
    with pytest.raises(InputError, match=r"mine\.py:1: custom retriever .*syntax error"):
        run_pipeline(broken, progress=said.append)
    assert said == []
    assert not (tmp_path / "synthetic.jsonl").exists()


@pytest.mark.parametrize(
    ("section", "key"),
    [("generate", "output = 'corpus.jsonl'"), ("output", "history = 'real.jsonl'"), ("output", "dir = '.'")],
)
def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, section, key):
    config_path = write_job(tmp_path, backend="extractive")
    text = config_path.read_text()
    if section == "generate":
        text = text.replace('output = "synthetic.jsonl"', key)
        (tmp_path / "real.jsonl").rename(tmp_path / "real-set.jsonl")
        text = text.replace('path = "real.jsonl"', 'path = "real-set.jsonl"')
    else:
        text += f"[output]\n{key}\n"
    if key == "dir = '.'":
        text = text.replace('path = "real.jsonl"', 'path = "results.json"')
        (tmp_path / "real.jsonl").rename(tmp_path / "results.json")
    config_path.write_text(text)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    with pytest.raises(InputError, match="is the same file as"):
        run_pipeline(load_pipeline_config(config_path))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_evaluate_warnings_reach_the_reports_the_result_and_the_caller_even_when_a_gate_fails(tmp_path):
    config_path = write_job(tmp_path, backend="extractive", extra=FAILING_GATE)
    real = [{**q, "origin": "real"} for q in REAL] + [
        # One of its two gold passages gone: still scored on today's corpus, with a warning.
        {
            "query_id": "r9",
            "query": "lost passage",
            "gold": {"c1": 1, "gone": 1},
            "origin": "real",
            "type": "lookup",
        }
    ]
    (tmp_path / "real.jsonl").write_text("".join(json.dumps(q) + "\n" for q in real))
    config = load_pipeline_config(config_path)
    seen: list[str] = []
    with pytest.raises(GateFailed):
        run_pipeline(config, on_warning=seen.append)
    expected = "real: 1 gold passage ids are not in the corpus"
    assert any(expected in w for w in seen)
    for name in ("report.md", "report.json", "report.html"):
        assert expected in (config.output_dir / name).read_text(), name
    passing = dataclasses.replace(config, calibrate=dataclasses.replace(config.calibrate, fail_under={}))
    assert any(expected in w for w in run_pipeline(passing).warnings)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            '{"time": "2026-01-01", "figures": {"metric": "recall@10", "real": "abc"}}',
            '"figures.real" must be a number',
        ),
        ('{"time": "2026-01-01", "figures": {"metric": "recall@10", "gap": NaN}}', "got NaN"),
        ('{"time": "2026-01-01", "figures": [1]}', '"figures" must be an object'),
        ('{"time": 5, "figures": {}}', '"time" must be a string'),
    ],
)
def test_a_history_row_that_is_not_figures_is_one_line_naming_it(tmp_path, row, expected):
    path = tmp_path / "history.jsonl"
    path.write_text('{"time": "2025-12-01", "figures": {"metric": "recall@10", "real": 0.5}}\n' + row + "\n")
    with pytest.raises(InputError) as info:
        load_history(path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert expected in str(info.value)
    done = cli.run("history", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_demo_refuses_a_file_or_a_projects_folder_and_reruns_in_its_own(tmp_path):
    from realrecall.pipeline.demo import check_demo_folder, demo_config_text, sample_data_dir

    not_a_folder = tmp_path / "gold.jsonl"
    not_a_folder.write_text("{}\n")
    with pytest.raises(InputError, match=r"gold\.jsonl: is a file, not a folder; give --dir a folder"):
        run_demo(not_a_folder)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pipeline.toml").write_text("[corpus]\npath = 'mine.jsonl'\n")
    (project / "history.jsonl").write_text('{"time": "2026-01-01", "figures": {}}\n')
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    with pytest.raises(
        InputError, match=r"pipeline\.toml: the folder holds a pipeline\.toml that is not the demo's"
    ):
        run_demo(project)
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before
    # A demo folder of an earlier version (its config without the marker line) is still the demo's.
    earlier = tmp_path / "earlier-demo"
    earlier.mkdir()
    lines = demo_config_text(sample_data_dir()).splitlines(keepends=True)
    (earlier / "pipeline.toml").write_text(lines[0] + "".join(lines[2:]))
    check_demo_folder(earlier)


def test_run_takes_retriever_options_from_the_command_line(tmp_path):
    config = write_job(tmp_path, backend="extractive")
    done = cli.run("run", str(config), "--retriever-option", "k1=1.7", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "realrecall-runs" / "results.json").read_text(encoding="utf-8"))
    assert results["fingerprints"]["retriever"]["options"]["k1"] == 1.7
    assert "k1=1.7" in results["retriever"]["description"]
    wrong = cli.run("run", str(config), "--retriever-option", "k9=1", cwd=tmp_path)
    assert wrong.returncode == 2
    assert "k9" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1

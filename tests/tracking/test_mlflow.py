"""MLflow logging against a real local file store in tmp_path: what is logged equals what realrecall shows.

The oracle for the figures is ``realrecall calibrate results.json -f json`` (the numbers a user reads);
for the parameters, results.json's own ``fingerprints``; the artifacts are compared byte for byte.
MLflow's telemetry is switched off and its file store allowed for these tests only (environment).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from realrecall.errors import InputError, OutputError
from support.cli import run as cli

pytestmark = pytest.mark.slow  # the demo pipeline and MLflow's imports, seconds


@pytest.fixture(autouse=True)
def offline_mlflow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # mlflow 3 keeps file stores behind this switch
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    # Imported here, not at collection: mlflow takes about a second to import, which every xdist
    # worker would pay just to collect this file.
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed")


@pytest.fixture
def store(tmp_path: Path) -> str:
    return (tmp_path / "mlruns").as_uri()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's pipeline run on the bundled sample data: results.json (real and synthetic), report.html."""
    from realrecall.pipeline.demo import run_demo

    folder = tmp_path_factory.mktemp("demo")
    run_demo(folder)
    return folder


def _client(uri: str) -> Any:
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _runs(uri: str) -> list[Any]:
    client = _client(uri)
    experiments = client.search_experiments()
    return client.search_runs([e.experiment_id for e in experiments])


def _only_run(uri: str) -> Any:
    (run,) = _runs(uri)
    return run


def _calibrate_json(results: Path, *extra: str) -> dict[str, Any]:
    shown = cli("calibrate", str(results), "-f", "json", *extra)
    assert shown.returncode == 0, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def _assert_figures_match(metrics: dict[str, float], shown: dict[str, Any]) -> None:
    for row in shown["overall"]:
        name = row["metric"].replace("@", "_at_")
        for origin in ("real", "synthetic", "gap"):
            assert metrics[f"{origin}/{name}"] == pytest.approx(row[origin], abs=1e-12)
            low, high = row[f"{origin}_ci"]
            assert metrics[f"{origin}/{name}_low"] == pytest.approx(low, abs=1e-12)
            assert metrics[f"{origin}/{name}_high"] == pytest.approx(high, abs=1e-12)
    head = shown["headline"]
    name = head["metric"].replace("@", "_at_")
    assert metrics[f"calibrated/{name}"] == pytest.approx(head["calibrated"], abs=1e-12)
    assert [metrics[f"calibrated/{name}_low"], metrics[f"calibrated/{name}_high"]] == pytest.approx(
        head["calibrated_ci"], abs=1e-12
    )
    assert metrics["real/n"] == head["n_real"]
    assert metrics["synthetic/n"] == head["n_synthetic"]


def test_log_mlflow_logs_what_calibrate_shows_with_fingerprints_and_artifacts(
    demo: Path, store: str, tmp_path: Path
) -> None:
    results, report = demo / "report" / "results.json", demo / "report" / "report.html"
    logged = cli("log", "mlflow", str(results), "--report", str(report), "--mlflow-uri", store)
    assert logged.returncode == 0, logged.stderr
    run = _only_run(store)
    assert run.info.run_id in logged.stderr
    assert run.info.status == "FINISHED"

    metrics = run.data.metrics
    _assert_figures_match(metrics, _calibrate_json(results))
    data = json.loads(results.read_text(encoding="utf-8"))
    # One real and one synthetic set: their figures are real/ and synthetic/, each with its interval,
    # never logged twice (a second record without the interval).
    assert [g["origins"] for g in data["gold_sets"]] == [{"real": 175}, {"synthetic": 239}]
    assert not any(name.startswith("gold_set/") for name in metrics)
    for name in metrics:
        figure = name.removesuffix("_low").removesuffix("_high")
        if "/" in figure and not figure.endswith("/n"):
            assert {f"{figure}_low", f"{figure}_high"} <= set(metrics) or figure.startswith("calibrated/")
    assert not any("@" in name for name in metrics)

    params = run.data.params
    fingerprints = data["fingerprints"]
    assert params["retriever.name"] == fingerprints["retriever"]["name"] == "bm25"
    for option, value in fingerprints["retriever"]["options"].items():
        assert params[f"retriever.options.{option}"] == (
            value if isinstance(value, str) else json.dumps(value)
        )
    for library, version in fingerprints["retriever"]["versions"].items():
        assert params[f"retriever.versions.{library}"] == version
    assert params["corpus.sha256"] == fingerprints["corpus"]["sha256"]
    for name, generators in fingerprints["generators"].items():
        assert json.loads(params[f"generators.{name}"]) == generators
    for gold_set in data["gold_sets"]:
        assert params[f"gold_set.{gold_set['name']}.sha256"] == gold_set["sha256"]
    assert "null" not in params.values()
    assert "None" not in params.values()

    client = _client(store)
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id)) == [
        "gold_sets.json", "report.html", "results.json",
    ]  # fmt: skip
    downloaded = Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / "artifacts")))
    assert (downloaded / "results.json").read_bytes() == results.read_bytes()
    assert (downloaded / "report.html").read_bytes() == report.read_bytes()
    gold_sets = json.loads((downloaded / "gold_sets.json").read_text(encoding="utf-8"))
    assert {g["name"]: g["sha256"] for g in gold_sets} == {g["name"]: g["sha256"] for g in data["gold_sets"]}


def test_each_gold_set_is_logged_apart_where_an_origin_has_several() -> None:
    from calibrate.results_builder import ranks_set, results_document
    from realrecall.calibrate import calibrate
    from realrecall.evaluate.results import load_results
    from realrecall.tracking import figures_as_metrics

    document = results_document([
        ("tickets", ranks_set("real", 8, 2, prefix="t")), ("chat", ranks_set("real", 5, 5, prefix="c")),
        ("synthetic", ranks_set("synthetic", 9, 1, prefix="s")),
    ])  # fmt: skip
    result = load_results(document)
    metrics = figures_as_metrics(calibrate(result, n_resamples=200), result)
    assert metrics["gold_set/tickets/recall_at_1"] == 0.8
    assert metrics["gold_set/chat/recall_at_1"] == 0.5
    assert not any(name.startswith("gold_set/synthetic/") for name in metrics)


def test_a_parameter_left_unset_is_absent_not_the_string_null() -> None:
    from realrecall.tracking import _flatten

    params: dict[str, str] = {}
    _flatten(params, "retriever", {"name": "chroma", "options": {"embedding_model": None, "k": 10}})
    assert params == {"retriever.name": "chroma", "retriever.options.k": "10"}


def test_evaluate_mlflow_logs_its_result_to_the_uri_of_the_environment(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from realrecall.pipeline.demo import sample_data_dir

    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "nightly")
    data = sample_data_dir()
    output = tmp_path / "results.json"
    evaluated = cli(
        "evaluate", "--gold", str(data / "real_questions.jsonl"), "--corpus", str(data / "docs_corpus.jsonl"),
        "--k", "1,10", "-o", str(output), "--mlflow",
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    run = _only_run(store)
    assert _client(store).get_experiment(run.info.experiment_id).name == "nightly"
    shown = _calibrate_json(output)
    (row,) = [r for r in shown["overall"] if r["metric"] == "recall@10"]
    assert run.data.metrics["real/recall_at_10"] == pytest.approx(row["real"], abs=1e-12)
    assert run.data.metrics["real/recall_at_10_low"] == pytest.approx(row["real_ci"][0], abs=1e-12)
    # Only real questions: no synthetic figure and no gap, rather than NaN.
    assert not any(name.startswith(("synthetic/recall", "gap/")) for name in run.data.metrics)
    assert run.data.metrics["synthetic/n"] == 0


def test_calibrate_mlflow_logs_its_own_settings_figures_and_still_logs_a_failed_gate(
    demo: Path, store: str, tmp_path: Path
) -> None:
    results = demo / "report" / "results.json"
    report = tmp_path / "gate.html"
    args = ("--confidence", "0.9", "--fail-under", "recall@10=0.99", "--gate-on", "bound")
    gated = cli("calibrate", str(results), *args, "-o", str(report), "--mlflow-uri", store)
    assert gated.returncode == 1
    assert "gate failed" in gated.stderr
    run = _only_run(store)
    assert run.data.params["confidence"] == "0.9"
    _assert_figures_match(run.data.metrics, _calibrate_json(results, "--confidence", "0.9"))
    client = _client(store)
    assert "gate.html" in [a.path for a in client.list_artifacts(run.info.run_id)]


def test_run_mlflow_logs_the_pipelines_figures_and_report(store: str, tmp_path: Path) -> None:
    from realrecall.pipeline.demo import demo_config_text, sample_data_dir

    (tmp_path / "pipeline.toml").write_text(demo_config_text(sample_data_dir()), encoding="utf-8")
    ran = cli("run", "pipeline.toml", "--mlflow-uri", store, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    run = _only_run(store)
    _assert_figures_match(run.data.metrics, _calibrate_json(tmp_path / "report" / "results.json"))
    client = _client(store)
    downloaded = Path(client.download_artifacts(run.info.run_id, "report.html", str(tmp_path / "got")))
    assert downloaded.read_bytes() == (tmp_path / "report" / "report.html").read_bytes()


def test_the_library_function_returns_what_it_logged(demo: Path, store: str) -> None:
    from realrecall.evaluate import load_results
    from realrecall.tracking import log_to_mlflow

    result = load_results(demo / "report" / "results.json")
    tracked = log_to_mlflow(result, tracking_uri=store, experiment="lib", run_name="by hand")
    run = _client(store).get_run(tracked.run_id)
    assert run.data.metrics == tracked.metrics
    assert run.data.params == tracked.params
    assert run.info.run_name == "by hand"
    assert tracked.artifacts == ("results.json", "report.html", "gold_sets.json")


def test_no_tracking_uri_is_one_line_and_nothing_is_logged(demo: Path, tmp_path: Path) -> None:
    result = cli("log", "mlflow", str(demo / "report" / "results.json"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.err_lines == [
        "error: no MLflow tracking URI given; set MLFLOW_TRACKING_URI or give --mlflow-uri "
        "(e.g. http://127.0.0.1:5000 or sqlite:///mlflow.db)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_calibrate_one_call_mode_refuses_mlflow_before_any_work(store: str) -> None:
    result = cli("calibrate", "--synthetic", "s.jsonl", "--real", "r.jsonl", "--mlflow-uri", store)
    assert result.returncode == 2
    assert "--mlflow logs results files, which one-call mode does not write" in result.stderr


def test_a_missing_mlflow_names_the_extra(demo: Path, store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from realrecall.tracking import log_to_mlflow

    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow now raises ImportError
    with pytest.raises(InputError, match=r"mlflow is not installed; pip install 'realrecall\[mlflow\]'"):
        log_to_mlflow(demo / "report" / "results.json", tracking_uri=store)


def test_a_refused_file_store_is_one_line_with_the_switch(
    demo: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from realrecall.tracking import log_to_mlflow

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE")
    from mlflow.store.tracking import file_store

    if "MLFLOW_ALLOW_FILE_STORE" not in Path(file_store.__file__).read_text(encoding="utf-8"):
        pytest.skip("this mlflow takes file stores without a switch")
    with pytest.raises(
        OutputError, match=r"MLflow refuses the file store .*; set MLFLOW_ALLOW_FILE_STORE=true"
    ):
        log_to_mlflow(demo / "report" / "results.json", tracking_uri=store)


def test_a_tracking_server_that_never_answers_ends_in_one_line_naming_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """realrecall's own bound on retries applies (MLflow alone retries seven times, some twenty minutes
    at its 120 s wait); the wait per request is shortened here through MLflow's own variable."""
    from support.silent_server import SilentServer

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with SilentServer() as server:
        result = cli("log", "mlflow", str(demo / "report" / "results.json"), "--mlflow-uri", server.url)
    assert result.returncode == 2, result.stderr
    assert len(result.err_lines) == 1, result.stderr
    assert result.err_lines[0].startswith(f"error: could not log to MLflow at {server.url}: MlflowException")


def test_the_bounds_on_mlflow_requests_hold_while_logging_and_yield_to_the_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    from realrecall import tracking

    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_TIMEOUT", raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "5")  # the user's own choice
    with tracking._bounded_requests():
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == str(tracking.REQUEST_WAIT) == "60"
        assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "5"
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "5"


def test_results_given_as_the_report_are_refused_before_logging(tmp_path: Path, store: str) -> None:
    # `log mlflow results.json --report results.json` logged results.json as the run's HTML report.
    results = tmp_path / "results.json"
    results.write_text("{}\n")
    (tmp_path / "alias.json").symlink_to(results)
    for report in ("results.json", "alias.json"):
        done = cli("log", "mlflow", "results.json", "--report", report, "--mlflow-uri", store, cwd=tmp_path)
        assert done.returncode == 2
        assert done.err_lines == [
            f"error: {report}: the report is the results file itself; give the HTML report calibrate wrote"
        ]
    assert not (tmp_path / "mlruns").exists()

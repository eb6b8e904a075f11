"""Log an evaluation's figures to MLflow: metrics with their intervals, fingerprints, report and hashes.

``log_to_mlflow(results, report=...)`` makes one MLflow run holding

- **metrics**: for every metric evaluated (``recall@10`` is logged as ``recall_at_10``, as MLflow
  allows no ``@``), ``real/…``, ``synthetic/…`` and ``gap/…`` with their interval's bounds
  (``…_low``, ``…_high``), the headline metric's calibrated estimate ``calibrated/…`` with its bounds
  and the shares of traffic it measures (``calibrated/measured_share``) and measures on one real query
  only (``calibrated/single_query_share``), as its report's line says,
  the query counts ``real/n`` and ``synthetic/n``, and each gold set's overall figures
  (``gold_set/NAME/…``). An undefined figure (no synthetic queries, say) is left out, never logged as
  NaN;
- **parameters**: the retriever's fingerprint (``retriever.name``, ``retriever.options.k1``,
  ``retriever.versions.bm25s``…), the corpus's (``corpus.sha256``, ``corpus.chunks``), each synthetic
  set's generators (``generators.NAME``), each gold set's hash (``gold_set.NAME.sha256``) and how the
  figures were made (metrics, confidence, seed, resamples);
- **artifacts**: ``results.json``, the HTML report (the file given, else one rendered from the
  figures) and ``gold_sets.json`` (every gold set's path, hash, date, size and origins).

The figures come from ``calibrate`` on the results (the same numbers ``realrecall calibrate`` shows),
or from a :class:`CalibrationReport` already made. mlflow is an optional extra imported only here and
only when called: a missing one is one InputError naming ``pip install 'realrecall[mlflow]'``. The
tracking URI is the ``tracking_uri`` argument, else ``MLFLOW_TRACKING_URI``; with neither, nothing is
logged anywhere unexpected: it is an InputError. A run that fails part-way is marked FAILED.

A tracking server that accepts connections and never answers ends the logging in one line naming it,
within a few minutes: MLflow by itself waits 120 s for each answer and retries seven times (some twenty
minutes), so while realrecall logs, each request waits ``REQUEST_WAIT`` seconds and is retried
``REQUEST_RETRIES`` times, unless ``MLFLOW_HTTP_REQUEST_TIMEOUT`` / ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``
say otherwise.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.errors import InputError, OutputError
from realrecall.files import same_file

if TYPE_CHECKING:
    from realrecall.calibrate.calibration import CalibrationReport
    from realrecall.evaluate.results import EvaluationResult, ResultsSource

__all__ = [
    "REQUEST_RETRIES",
    "REQUEST_WAIT",
    "TrackedRun",
    "figures_as_metrics",
    "fingerprints_as_params",
    "log_to_mlflow",
]

EXTRA = "realrecall[mlflow]"
DEFAULT_EXPERIMENT = "realrecall"

# MLflow's limits: names of letters, digits and _ - . / and space; a parameter's value at most
# 6000 characters (older servers); at most 1000 metrics and 100 parameters in one batch.
_NAME = re.compile(r"[^A-Za-z0-9_\-./ ]")
_PARAM_LIMIT = 6000
_METRIC_BATCH, _PARAM_BATCH = 1000, 100

REQUEST_WAIT = 60
"""Seconds each request to a tracking server may take while realrecall logs (see the module doc)."""
REQUEST_RETRIES = 2
"""Retries of a request to a tracking server that failed or gave no answer."""


@dataclass(frozen=True)
class TrackedRun:
    """The MLflow run written: where, and exactly what was logged to it."""

    run_id: str
    experiment_id: str
    tracking_uri: str
    metrics: Mapping[str, float]
    params: Mapping[str, str]
    artifacts: tuple[str, ...]


def log_to_mlflow(
    results: ResultsSource | Sequence[ResultsSource],
    *,
    report: str | Path | None = None,
    calibration: CalibrationReport | None = None,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> TrackedRun:
    """Log ``results`` (an EvaluationResult, or results.json) to MLflow as one run (see the module doc).

    ``report``: the HTML report file to attach (default: one rendered from the figures).
    ``calibration``: the report whose figures to log (default: ``calibrate(results)``, so the real
    figure, the gap and the calibrated estimate are the ones ``realrecall calibrate`` prints).
    ``experiment``: its name (default ``MLFLOW_EXPERIMENT_NAME``, else ``realrecall``), made if new.
    ``results`` may be several results.json (a real and a synthetic evaluation): as in calibrate,
    results of one retriever merge and the first retriever is the one logged.
    """
    from realrecall.evaluate.results import EvaluationResult, load_results, merge_by_retriever

    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or ""
    if not uri.strip():
        raise InputError(
            "no MLflow tracking URI given",
            hint="set MLFLOW_TRACKING_URI or give --mlflow-uri (e.g. http://127.0.0.1:5000 or sqlite:///mlflow.db)",
        )
    report_path = None if report is None else Path(report)
    if report_path is not None and not report_path.is_file():
        raise InputError(
            "report file not found", path=report_path, hint="give the HTML report calibrate wrote"
        )
    one = isinstance(results, str | Path | Mapping | EvaluationResult)
    sources: list[ResultsSource] = [results] if one else list(results)  # type: ignore[list-item, arg-type]
    if not sources:
        raise InputError("no results given", hint="pass results.json")
    if report_path is not None and any(
        isinstance(source, str | Path) and same_file(report_path, source) for source in sources
    ):
        # It was logged as the run's HTML report: the run showed results.json where the report belongs.
        raise InputError(
            "the report is the results file itself",
            path=report_path,
            hint="give the HTML report calibrate wrote",
        )
    loaded = [load_results(source) for source in sources]
    result = merge_by_retriever(loaded)[0]
    if len(loaded) > 1:
        result = replace(result, source=None)  # merged: results.json is written anew, not copied
    if calibration is None:
        from realrecall.calibrate import calibrate

        calibration = calibrate(result)
    mlflow = _import_mlflow()
    metrics = figures_as_metrics(calibration, result)
    params = fingerprints_as_params(result, calibration)
    experiment = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
    with _bounded_requests():
        return _log(
            mlflow, uri.strip(), experiment, run_name or f"{result.name} {result.created}",
            metrics, params, result, calibration, report_path, dict(tags or {}),
        )  # fmt: skip


def figures_as_metrics(report: CalibrationReport, result: EvaluationResult | None = None) -> dict[str, float]:
    """Every figure of ``report`` (and each gold set's overall figure in ``result``) by MLflow name."""
    metrics: dict[str, float] = {}
    for gap in report.gaps:
        if gap.field is not None:
            continue
        name = metric_name(gap.metric)
        _put(metrics, f"real/{name}", gap.real.value, gap.real.interval)
        _put(metrics, f"synthetic/{name}", gap.synthetic.value, gap.synthetic.interval)
        _put(metrics, f"gap/{name}", gap.gap, gap.gap_interval)
    head = report.overall()
    metrics["real/n"] = float(head.n_real)
    metrics["synthetic/n"] = float(head.n_synthetic)
    if report.calibrated is not None:
        c = report.calibrated
        _put(metrics, f"calibrated/{metric_name(c.metric)}", c.value, c.interval)
        # What the report's sentence says of the figure: how much of it is measured, and how much of
        # that rests on one real query.
        metrics["calibrated/measured_share"] = c.measured_share
        metrics["calibrated/single_query_share"] = c.single_query_share
    # A gold set's own figures only where its origin has several sets: the only real (or synthetic) set's
    # figures are the real/ (synthetic/) ones above, with their intervals; logged again without them,
    # one number would have two records, one with an interval and one without.
    gold_sets = result.gold_sets if result is not None else ()
    origins = Counter(origin for g in gold_sets for origin in g.origins)
    for gold_set in gold_sets:
        if len(gold_set.origins) == 1 and origins[next(iter(gold_set.origins))] == 1:
            continue
        for metric, value in gold_set.overall.metrics.items():
            _put(metrics, f"gold_set/{_clean(gold_set.name)}/{metric_name(metric)}", value, None)
    return metrics


def fingerprints_as_params(
    result: EvaluationResult, report: CalibrationReport | None = None
) -> dict[str, str]:
    """The fingerprints of ``result`` (retriever, corpus, generators) and its gold sets' hashes, flat."""
    params: dict[str, str] = {}
    fingerprints = result.fingerprints
    _flatten(params, "retriever", fingerprints.get("retriever") or {"name": result.name})
    _flatten(params, "corpus", fingerprints.get("corpus") or {})
    for name, generators in (fingerprints.get("generators") or {}).items():
        params[f"generators.{_clean(name)}"] = _text(json.dumps(generators, sort_keys=True))
    for gold_set in result.gold_sets:
        params[f"gold_set.{_clean(gold_set.name)}.sha256"] = gold_set.sha256 or "unknown"
    params["metrics"] = ",".join(result.metrics)
    params["relevance_threshold"] = str(result.relevance_threshold)
    params["realrecall_version"] = result.version or "unknown"
    if report is not None:
        params["headline_metric"] = report.metric
        params["confidence"] = str(report.confidence)
        params["seed"] = str(report.seed)
        params["n_resamples"] = str(report.n_resamples)
    return params


def metric_name(metric: str) -> str:
    """``recall@10`` -> ``recall_at_10``: MLflow names allow no ``@``."""
    return _clean(metric.replace("@", "_at_"))


def _put(metrics: dict[str, float], name: str, value: float, interval: Any) -> None:
    if value is None or not math.isfinite(value):
        return  # undefined (no queries of that origin): absent, not NaN
    metrics[name] = float(value)
    if interval is not None and interval.defined:
        # ``_low``, not ``/low``: a name that is also a folder of others breaks MLflow's file store.
        metrics[f"{name}_low"] = float(interval.low)
        metrics[f"{name}_high"] = float(interval.high)


def _flatten(params: dict[str, str], prefix: str, value: object) -> None:
    if value is None:
        return  # not set (an option left to its default, a corpus without a hash): absent, not 'null'
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(params, f"{prefix}.{_clean(str(key))}", inner)
    else:
        params[prefix] = _text(value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _clean(name: str) -> str:
    return _NAME.sub("_", name)


def _text(value: str) -> str:
    return value if len(value) <= _PARAM_LIMIT else value[: _PARAM_LIMIT - 1] + "…"


def _import_mlflow() -> Any:
    try:
        import mlflow
        from mlflow.tracking import MlflowClient  # noqa: F401  (the client below; checked here)
    except ImportError as exc:
        raise InputError("mlflow is not installed", hint=f"pip install '{EXTRA}'") from exc
    return mlflow


@contextlib.contextmanager
def _bounded_requests() -> Iterator[None]:
    """MLflow's HTTP requests wait ``REQUEST_WAIT`` s and retry ``REQUEST_RETRIES`` times inside the
    block, unless the user's environment sets either (it is put back as it was afterwards)."""
    bounds = {"MLFLOW_HTTP_REQUEST_TIMEOUT": REQUEST_WAIT, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": REQUEST_RETRIES}
    added = [name for name in bounds if name not in os.environ]
    for name in added:
        os.environ[name] = str(bounds[name])
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _log(
    mlflow: Any,
    uri: str,
    experiment: str,
    run_name: str,
    metrics: Mapping[str, float],
    params: Mapping[str, str],
    result: EvaluationResult,
    calibration: CalibrationReport,
    report: Path | None,
    tags: dict[str, str],
) -> TrackedRun:
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
        run = client.create_run(
            experiment_id, run_name=run_name, tags={"realrecall.retriever": result.name, **tags}
        )
    except Exception as exc:  # mlflow's own errors (a store it refuses, a server it cannot reach)
        raise _tracking_error(exc, uri) from exc
    run_id = run.info.run_id
    try:
        stamp = int(time.time() * 1000)
        rows = [Metric(key, value, stamp, 0) for key, value in metrics.items()]
        for start in range(0, len(rows), _METRIC_BATCH):
            client.log_batch(run_id, metrics=rows[start : start + _METRIC_BATCH])
        items = [Param(key, value) for key, value in params.items()]
        for start in range(0, len(items), _PARAM_BATCH):
            client.log_batch(run_id, params=items[start : start + _PARAM_BATCH])
        artifacts = _log_artifacts(client, run_id, result, calibration, report)
        client.set_terminated(run_id, "FINISHED")
    except BaseException as exc:
        with contextlib.suppress(Exception):  # the first error is the one to report
            client.set_terminated(run_id, "FAILED")
        if isinstance(exc, Exception) and not isinstance(exc, InputError):
            raise _tracking_error(exc, uri) from exc
        raise
    return TrackedRun(
        run_id=run_id,
        experiment_id=str(experiment_id),
        tracking_uri=uri,
        metrics=dict(metrics),
        params=dict(params),
        artifacts=artifacts,
    )


def _log_artifacts(
    client: Any, run_id: str, result: EvaluationResult, calibration: CalibrationReport, report: Path | None
) -> tuple[str, ...]:
    """results.json, the HTML report and gold_sets.json, written to a temporary folder and uploaded."""
    from realrecall.calibrate.report import render
    from realrecall.evaluate.results import write_results

    with tempfile.TemporaryDirectory(prefix="realrecall-mlflow-") as folder:
        staged = Path(folder)
        results_file = staged / "results.json"
        if result.source is not None and Path(result.source).is_file():
            results_file.write_bytes(Path(result.source).read_bytes())  # the file as evaluate wrote it
        else:
            write_results(result, results_file)
        if report is not None:
            report_file = report
        else:
            report_file = staged / "report.html"
            report_file.write_text(render(calibration, "html"), encoding="utf-8")
        gold_file = staged / "gold_sets.json"
        gold_sets = [
            {"name": g.name, "path": g.path, "sha256": g.sha256, "modified": g.modified,
             "n_queries": g.n_queries, "origins": dict(g.origins)}
            for g in result.gold_sets
        ]  # fmt: skip
        gold_file.write_text(json.dumps(gold_sets, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for path in (results_file, report_file, gold_file):
            client.log_artifact(run_id, str(path))
        return (results_file.name, report_file.name, gold_file.name)


def _tracking_error(exc: Exception, uri: str) -> OutputError:
    """One line for a tracking store that refused or could not be reached."""
    text = " ".join(str(exc).split())
    if "MLFLOW_ALLOW_FILE_STORE" in text:
        return OutputError(
            f"MLflow refuses the file store {uri} (it is in maintenance mode)",
            hint="set MLFLOW_ALLOW_FILE_STORE=true to keep using it, or log to a database or a server",
        )
    if len(text) > 300:
        text = text[:299] + "…"
    return OutputError(
        f"could not log to MLflow at {uri}: {type(exc).__name__}: {text}",
        hint="check the tracking URI (MLFLOW_TRACKING_URI or --mlflow-uri) and that the server is up",
    )

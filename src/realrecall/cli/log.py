"""``realrecall log mlflow``: an evaluation's figures into MLflow; and the ``--mlflow`` of other commands.

evaluate, calibrate and run take ``--mlflow`` (and ``--mlflow-uri``) and call :func:`log_mlflow` after
their own work, so their figures go to the same place ``realrecall log mlflow results.json`` sends
them. mlflow is imported only when a run is logged, never at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from realrecall.cli.application import command_group, note, user_errors

if TYPE_CHECKING:
    from realrecall.calibrate.calibration import CalibrationReport
    from realrecall.evaluate.results import ResultsSource

log_app = command_group("log", "Send figures where your team tracks experiments (MLflow).")


@log_app.command("mlflow")
def mlflow_command(
    results: Annotated[
        list[Path], typer.Argument(help="results.json from evaluate (several of one retriever merge).")
    ],
    report: Annotated[
        Path | None, typer.Option(help="The HTML report to attach (default: one rendered from the figures).")
    ] = None,
    mlflow_uri: Annotated[
        str | None, typer.Option("--mlflow-uri", help="Tracking URI (default MLFLOW_TRACKING_URI).")
    ] = None,
    experiment: Annotated[
        str | None, typer.Option(help="Experiment name (default MLFLOW_EXPERIMENT_NAME, else realrecall).")
    ] = None,
    run_name: Annotated[str | None, typer.Option(help="Name of the MLflow run.")] = None,
) -> None:
    """Log results.json to MLflow: real, synthetic, gap and calibrated figures with their intervals as
    metrics, the retriever's and generators' fingerprints as parameters, report and hashes as artifacts."""
    with user_errors():
        log_mlflow(results, uri=mlflow_uri, report=report, experiment=experiment, run_name=run_name)


def log_mlflow(
    results: ResultsSource | Sequence[ResultsSource],
    *,
    uri: str | None,
    report: Path | None = None,
    calibration: CalibrationReport | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
) -> None:
    """Log through ``realrecall.tracking`` and say where the run went (one line on stderr)."""
    from realrecall.tracking import log_to_mlflow

    tracked = log_to_mlflow(
        results, report=report, calibration=calibration, tracking_uri=uri, experiment=experiment,
        run_name=run_name,
    )  # fmt: skip
    note(
        f"logged to MLflow: run {tracked.run_id} ({len(tracked.metrics)} metrics) at {tracked.tracking_uri}",
        style="",
    )

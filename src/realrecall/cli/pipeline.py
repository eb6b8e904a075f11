"""``realrecall run``, ``history``, ``demo`` and ``extras``: the jobs users schedule, and their install."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from realrecall.cli.application import (
    MLFLOW_HELP,
    MLFLOW_URI_HELP,
    app,
    note,
    out,
    user_errors,
    warn,
    write_stdout,
)
from realrecall.cli.console import plain
from realrecall.cli.settings_options import Group, Over, settings_options
from realrecall.errors import InputError, SettingError
from realrecall.settings import EngineSettings, setting_fields, settings_from

if TYPE_CHECKING:
    from collections.abc import Callable

    from realrecall.pipeline.config import PipelineConfig
    from realrecall.pipeline.run import PipelineResult


# run's engine options stand over pipeline.toml's [engine] (each option given replaces its key).
ENGINE_OPTIONS = Group(
    EngineSettings,
    "engine_options",
    help_suffix={item.name: " Over pipeline.toml's [engine]." for item in setting_fields(EngineSettings)},
    over=True,
)


@app.command("run")
@settings_options(ENGINE_OPTIONS)
def run_command(
    configs: Annotated[
        list[Path], typer.Argument(help="pipeline.toml (several: run as one job, on one engine)")
    ],
    engine_options: Over,
    retriever_option: Annotated[
        list[str] | None,
        typer.Option(help="Retriever option KEY=VALUE over [evaluate.retriever] (repeatable)."),
    ] = None,
    mlflow: Annotated[bool, typer.Option("--mlflow", help=MLFLOW_HELP)] = False,
    mlflow_uri: Annotated[str | None, typer.Option("--mlflow-uri", help=MLFLOW_URI_HELP)] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="If this pipeline is running already, start once it has finished (else: refuse)."
        ),
    ] = False,
) -> None:
    """Run the scheduled job: incremental generate, evaluate on both sets, calibrate, record history."""
    with user_errors():
        from realrecall.pipeline.config import load_pipeline_config
        from realrecall.pipeline.run import run_pipeline, run_pipelines

        loaded = [
            _with_options(load_pipeline_config(config), retriever_option, engine_options)
            for config in configs
        ]
        track = _mlflow_logger(mlflow_uri) if mlflow or mlflow_uri else None
        if len(loaded) == 1:
            done = run_pipeline(loaded[0], progress=note, on_warning=warn, on_result=track, wait=wait)
            _show(done, loaded[0].history)
            return

        def shown(result: PipelineResult) -> None:
            # Each pipeline's table once its history row is written; the gates are checked at the end.
            if track is not None:
                track(result)
            config = next(c for c in loaded if result.results_path.parent == c.output_dir)
            note(f"pipeline {config.path}:", style="")
            _show(result, config.history)

        run_pipelines(loaded, progress=note, on_warning=warn, on_result=shown, wait=wait)


def _with_options(loaded: PipelineConfig, retriever_option: list[str] | None, engine: Over) -> PipelineConfig:
    """A pipeline's config with the command line's retriever options and engine options over it."""
    if retriever_option:
        from realrecall.evaluate.settings import EvaluateSettings

        try:
            given = settings_from(EvaluateSettings, {"retriever_options": retriever_option}, text=True)
        except SettingError as exc:
            raise exc.labelled("--retriever-option") from None
        options = {**loaded.evaluate.retriever_options, **given.retriever_options}
        loaded = replace(loaded, evaluate=replace(loaded.evaluate, retriever_options=options))
    return replace(loaded, engine=engine.over(loaded.engine))


def _mlflow_logger(uri: str | None) -> Callable[[PipelineResult], None]:
    """Logs the run's results, figures and HTML report (before its gates are checked)."""

    def track(result: PipelineResult) -> None:
        from realrecall.cli.log import log_mlflow

        log_mlflow(
            result.results_path, uri=uri, calibration=result.report, report=result.report_paths.get("html")
        )

    return track


@app.command("demo")
def demo_command(
    folder: Annotated[Path, typer.Option("--dir", help="Where the demo writes its files.")] = Path(
        "realrecall-demo"
    ),
) -> None:
    """Run the whole pipeline offline on the bundled sample data and show the gap report."""
    with user_errors():
        from realrecall.pipeline.demo import check_demo_folder, run_demo

        check_demo_folder(folder)  # before the banner: a refusal is the only line printed
        note(f"realrecall demo: sample corpus and real questions -> {folder}/", style="")
        result = run_demo(folder, progress=note, on_warning=warn)
        _show(result, folder / "history.jsonl")


@app.command("history")
def history_command(
    source: Annotated[Path, typer.Argument(help="pipeline.toml, or a history.jsonl file")],
) -> None:
    """Show the trend of the real, synthetic and calibrated figures over runs."""
    with user_errors():
        from realrecall.pipeline.history import history_trend, load_history

        path = source
        if source.suffix == ".toml":
            from realrecall.pipeline.config import load_pipeline_config

            path = load_pipeline_config(source).history
        elif not source.exists():
            # A history file named on its own is an input like any other: a typo in its name is not an
            # empty history (a pipeline's history is absent until its first run, which the warning says).
            raise InputError("file not found", path=source, hint="give the pipeline.toml or its history file")
        trend = history_trend(load_history(path))
        if not trend.rows:
            warn(f"{path}: no run recorded yet")
            return
        table = Table(title=plain(f"history ({path})"), title_justify="left", show_edge=False)
        for column in ("time", "metric", "real", "synthetic", "calibrated", "gap", "change", "status"):
            table.add_column(
                column, justify="right" if column not in ("time", "metric", "status") else "left"
            )
        for row in trend.rows:
            mark = plain("drop", style="red") if row.drop else plain("unchanged" if row.unchanged else "")
            table.add_row(
                plain(row.time), plain(row.metric), _fmt(row.real), _fmt(row.synthetic), _fmt(row.calibrated),
                _fmt(row.gap, signed=True), _fmt(row.change, signed=True), mark,
            )  # fmt: skip
        out.print(table)
        for row in trend.drops:
            warn(f"{row.metric} dropped by {-row.change:.3f} on {row.time}")  # type: ignore[operator]


@app.command("extras")
def extras_command(
    config: Annotated[Path, typer.Argument(help="pipeline.toml")],
    retriever: Annotated[
        str | None, typer.Option(help="The retriever to install for, instead of the one pipeline.toml names.")
    ] = None,
) -> None:
    """Print the optional extras a pipeline needs, for pip install 'realrecall[EXTRAS]' (a CI job's)."""
    with user_errors():
        from realrecall.pipeline.extras import pipeline_extras

        extras = pipeline_extras(config, retriever=retriever)
    write_stdout(",".join(extras) + "\n")


def _show(result: PipelineResult, history: Path) -> None:
    from realrecall.calibrate.report.table import report_table

    out.print(report_table(result.report, warnings=False))  # printed as they came (on_warning=warn)
    g = result.history_row.generation
    note(
        f"synthetic set: {g.added} added, {g.kept} kept, {g.removed} removed, "
        f"{g.requests} requests" + (" (nothing changed since the last run)" if result.unchanged else ""),
        style="",
    )
    for fmt, path in result.report_paths.items():
        note(f"{fmt} report: {path}", style="")
    note(f"history: {history}", style="")


def _fmt(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"

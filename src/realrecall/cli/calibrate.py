"""``realrecall calibrate`` (the figure to quote, and the gap) and ``realrecall compare`` (a paired test)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from realrecall.calibrate.settings import CalibrateSettings, CompareSettings
from realrecall.cli.application import (
    MLFLOW_HELP,
    MLFLOW_URI_HELP,
    app,
    emit_report,
    numbered,
    out,
    output_option,
    output_options,
    user_errors,
    warn,
)
from realrecall.cli.retriever_help import RETRIEVER_SUFFIXES, RetrieverHelp
from realrecall.cli.settings_options import Group, named_as_options, options_given, settings_options
from realrecall.errors import InputError
from realrecall.evaluate.settings import EvaluateSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import RenderableType


_SUFFIX_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
}

# One-call mode evaluates first: every option of evaluate, but --by, which slices both stages.
ONE_CALL_OPTIONS = Group(
    EvaluateSettings,
    "evaluation",
    help_prefix="One-call mode: ",
    help_suffix=RETRIEVER_SUFFIXES,
)


@app.command(cls=RetrieverHelp)
@output_options("output")
@settings_options(Group(CalibrateSettings, "settings"), ONE_CALL_OPTIONS)
def calibrate(
    results: Annotated[
        list[Path] | None,
        typer.Argument(help="results.json from evaluate; several retrievers feed the rank agreement."),
    ] = None,
    output_format: Annotated[
        str | None, typer.Option("--format", "-f", help="table, markdown, json or html (default from -o).")
    ] = None,
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the report here.", example="report.html")
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", "-c", help="Corpus (overlap diagnostics).")
    ] = None,
    *,
    settings: CalibrateSettings,
    synthetic: Annotated[Path | None, typer.Option(help="One-call mode: synthetic gold set.")] = None,
    real: Annotated[Path | None, typer.Option(help="One-call mode: real gold set.")] = None,
    run: Annotated[Path | None, typer.Option(help="One-call mode: score this run file instead.")] = None,
    evaluation: EvaluateSettings,
    mlflow: Annotated[bool, typer.Option("--mlflow", help=MLFLOW_HELP)] = False,
    mlflow_uri: Annotated[str | None, typer.Option("--mlflow-uri", help=MLFLOW_URI_HELP)] = None,
) -> None:
    """Quote the real figure: real vs synthetic with intervals, the gap per slice, diagnostics, gates."""
    with user_errors():
        from realrecall.cli.evaluate import retriever_input_paths
        from realrecall.files import check_distinct

        one_call = synthetic is not None or real is not None
        check_distinct(
            {**numbered("results", results or []), "--calibrate-on": settings.calibrate_on,
             "--answers": settings.answers, "--synthetic": synthetic, "--real": real, "--corpus": corpus,
             "--run": run, **(retriever_input_paths(evaluation) if one_call and run is None else {})},
            {"--output": output},
        )  # fmt: skip
        chosen_format = _format(output_format, output)
        if one_call:
            if results:
                raise InputError("give results files or --synthetic/--real, not both")
            if mlflow or mlflow_uri:
                raise InputError(
                    "--mlflow logs results files, which one-call mode does not write",
                    hint="run evaluate -o results.json on both sets, then calibrate results.json --mlflow",
                )
            if synthetic is None or real is None:
                raise InputError("one-call mode needs both --synthetic and --real")
            from realrecall.calibrate.one_call import evaluate_and_calibrate

            with named_as_options(EvaluateSettings):  # a silent store's advice: --request-timeout
                report = evaluate_and_calibrate(
                    synthetic, real, corpus=corpus, run=run, evaluation=evaluation, settings=settings
                )
        else:
            if not results:
                raise InputError("no results given", hint="pass results.json, or --synthetic G1 --real G2")
            scoring = ["--run"] if run is not None else []
            scoring += options_given(evaluation, besides=("by",))
            if scoring:
                verb = "applies" if len(scoring) == 1 else "apply"
                raise InputError(
                    f"{', '.join(scoring)} {verb} to one-call mode (--synthetic/--real)",
                    hint="results files are scored already: pass them to evaluate",
                )
            from realrecall.calibrate import calibrate as run_calibrate

            report = run_calibrate(results, corpus=corpus, settings=settings)
        if chosen_format != "table":  # the table shows its warnings itself
            for message in report.warnings:
                warn(message)
        from realrecall.calibrate.report import render, report_table

        _emit(
            lambda: report_table(report), lambda: render(report, chosen_format),
            chosen_format, output, report.headline.text,
        )  # fmt: skip
        if mlflow or mlflow_uri:  # before the gates: a run that fails one is tracked too
            from realrecall.cli.log import log_mlflow

            html = output if output is not None and chosen_format == "html" else None
            log_mlflow(results or [], uri=mlflow_uri, calibration=report, report=html)
        report.check_gates()


@app.command()
@output_options("output")
@settings_options(Group(CompareSettings, "settings"))
def compare(
    results_a: Annotated[Path, typer.Argument(help="results.json of system a (the baseline).")],
    results_b: Annotated[
        Path, typer.Argument(help="results.json of system b on the same queries (paired by query id).")
    ],
    *,
    settings: CompareSettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json.")] = "table",
    output: Annotated[
        Path | None,
        output_option("--output", "-o", help="Write the comparison here.", example="comparison.md"),
    ] = None,
) -> None:
    """Is b better than a? A paired test on the same queries, per origin (real and synthetic apart) and
    per slice; queries pair by id, so two chunkings of one corpus compare."""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct({"results_a": results_a, "results_b": results_b}, {"--output": output})
        from realrecall.calibrate import compare as run_compare
        from realrecall.calibrate.report import COMPARISON_FORMATS, comparison_table, render_comparison

        if output_format != "table" and output_format not in COMPARISON_FORMATS:
            raise InputError(
                f"unknown format {output_format!r}",
                hint=f"choose from table, {', '.join(COMPARISON_FORMATS)}",
            )
        report = run_compare(results_a, results_b, settings=settings)
        for message in report.warnings:
            warn(message)
        _emit(
            lambda: comparison_table(report), lambda: render_comparison(report, output_format),
            output_format, output, report.headline,
        )  # fmt: skip


def _emit(
    table: Callable[[], RenderableType],
    text: Callable[[], str],
    output_format: str,
    output: Path | None,
    headline: str,
) -> None:
    """Print the table, or the text report to stdout, or write it to ``output`` and print the headline."""
    if output_format == "table":
        out.print(table())
    else:
        emit_report(text(), output, headline=headline)


def _format(output_format: str | None, output: Path | None) -> str:
    if output_format is None:
        if output is None:
            return "table"
        inferred = _SUFFIX_FORMATS.get(output.suffix.lower())
        if inferred is None:
            raise InputError(
                f"cannot tell the format of {output.name}", hint="give --format markdown|json|html"
            )
        return inferred
    if output_format not in ("table", "markdown", "json", "html"):
        raise InputError(f"unknown format {output_format!r}", hint="choose from table, markdown, json, html")
    if output_format == "table" and output is not None:
        raise InputError(
            "the table format is for the terminal", hint="give --format markdown|json|html with -o"
        )
    return output_format

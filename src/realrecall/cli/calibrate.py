"""``realrecall calibrate`` (the figure to quote, and the gap) and ``realrecall compare`` (a paired test)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypedDict

import typer

from realrecall.calibrate import defaults
from realrecall.cli.application import (
    MLFLOW_HELP,
    MLFLOW_URI_HELP,
    app,
    emit_report,
    numbered,
    out,
    output_options,
    split_list,
    user_errors,
    warn,
)
from realrecall.cli.retriever_help import RETRIEVERS, RetrieverHelp
from realrecall.errors import InputError
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.settings import settings_from

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import RenderableType

    from realrecall.calibrate import CalibrationReport


CUTOFFS = "1,5,10,50"


class _CalibrateOptions(TypedDict):
    """The keyword options of ``realrecall.calibrate.calibrate`` this command sets, in both modes."""

    metric: str | None
    confidence: float
    calibrate_by: str
    calibrate_on: Path | None
    real_date: str | None
    max_age_days: float
    answers: Path | None
    answer_k: int | None
    fail_under: dict[str, float]
    max_gap: float | None
    gate_on: str
    stratum_weights: dict[str, float] | None
    origins: dict[str, str]
    seed: int
    n_resamples: int
    bootstrap: str


_SUFFIX_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
}


@app.command(cls=RetrieverHelp)
@output_options("output")
def calibrate(
    results: Annotated[
        list[Path] | None,
        typer.Argument(help="results.json from evaluate; several retrievers feed the rank agreement."),
    ] = None,
    metric: Annotated[str | None, typer.Option(help="Headline metric (default recall@10).")] = None,
    output_format: Annotated[
        str | None, typer.Option("--format", "-f", help="table, markdown, json or html (default from -o).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
    confidence: Annotated[
        float, typer.Option(help="Confidence level of every interval.")
    ] = defaults.CONFIDENCE,
    by: Annotated[str | None, typer.Option(help="Slice fields (default: every field present).")] = None,
    calibrate_by: Annotated[
        str, typer.Option(help="Stratum field of the calibrated estimate.")
    ] = defaults.CALIBRATE_BY,
    calibrate_on: Annotated[
        Path | None, typer.Option(help="Earlier results.json holding the real set to calibrate on.")
    ] = None,
    real_date: Annotated[
        str | None, typer.Option(help="Date of the real set (default: its file date).")
    ] = None,
    max_age: Annotated[
        float, typer.Option(help="Warn when the calibration is older (days).")
    ] = defaults.MAX_AGE_DAYS,
    answers: Annotated[
        Path | None, typer.Option(help="Answer labels (JSONL or CSV: query_id, correct).")
    ] = None,
    answer_k: Annotated[int | None, typer.Option(help="Evidence counts when ranked within k.")] = None,
    fail_under: Annotated[
        list[str] | None, typer.Option(help="Gate: METRIC=VALUE, e.g. recall@10=0.7 (repeatable).")
    ] = None,
    max_gap: Annotated[float | None, typer.Option(help="Gate: largest allowed |synthetic - real|.")] = None,
    gate_on: Annotated[
        str,
        typer.Option(help="Gates check the point, or the bound of its interval (lower for --fail-under)."),
    ] = "point",
    stratum_weight: Annotated[
        list[str] | None,
        typer.Option(help="VALUE=SHARE: traffic share of a --calibrate-by stratum (repeatable)."),
    ] = None,
    origin: Annotated[
        list[str] | None,
        typer.Option(help="NAME=real|synthetic: origin of a gold set's queries (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = defaults.SEED,
    n_resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = defaults.N_RESAMPLES,
    bootstrap: Annotated[
        str, typer.Option(help="Bootstrap interval: percentile or bca.")
    ] = defaults.BOOTSTRAP,
    synthetic: Annotated[Path | None, typer.Option(help="One-call mode: synthetic gold set.")] = None,
    real: Annotated[Path | None, typer.Option(help="One-call mode: real gold set.")] = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", "-c", help="Corpus (overlap diagnostics).")
    ] = None,
    retriever: Annotated[
        str | None, typer.Option(help=f"One-call mode: {RETRIEVERS} (default bm25).")
    ] = None,
    retriever_option: Annotated[
        list[str] | None, typer.Option(help="One-call mode: retriever option KEY=VALUE (repeatable).")
    ] = None,
    run: Annotated[Path | None, typer.Option(help="One-call mode: score this run file instead.")] = None,
    k: Annotated[str, typer.Option("--k", help="One-call mode: cutoffs, comma-separated.")] = CUTOFFS,
    gold_from: Annotated[
        str | None,
        typer.Option(
            "--gold-from",
            help="One-call mode: ids, evidence, or auto (chunk ids the corpus holds, evidence for the rest).",
        ),
    ] = None,
    evidence_coverage: Annotated[
        float | None,
        typer.Option(help="One-call mode: share of an evidence span a chunk must hold to be gold (0.5)."),
    ] = None,
    request_timeout: Annotated[
        float | None,
        typer.Option(help="One-call mode: seconds a store's server or an embeddings endpoint may take (60)."),
    ] = None,
    mlflow: Annotated[bool, typer.Option("--mlflow", help=MLFLOW_HELP)] = False,
    mlflow_uri: Annotated[str | None, typer.Option("--mlflow-uri", help=MLFLOW_URI_HELP)] = None,
) -> None:
    """Quote the real figure: real vs synthetic with intervals, the gap per slice, diagnostics, gates."""
    with user_errors():
        from realrecall.cli.evaluate import retriever_input_paths
        from realrecall.files import check_distinct

        one_call = synthetic is not None or real is not None
        evaluation = _evaluation(
            retriever, retriever_option, k, split_list(by), gold_from, evidence_coverage, request_timeout
        )
        check_distinct(
            {**numbered("results", results or []), "--calibrate-on": calibrate_on, "--answers": answers,
             "--synthetic": synthetic, "--real": real, "--corpus": corpus, "--run": run,
             **(retriever_input_paths(evaluation) if one_call and run is None else {})},
            {"--output": output},
        )  # fmt: skip
        chosen_format = _format(output_format, output)
        gates = dict(_parse_gates(fail_under or []))
        options = _CalibrateOptions(
            metric=metric, confidence=confidence, calibrate_by=calibrate_by, calibrate_on=calibrate_on,
            real_date=real_date, max_age_days=max_age, answers=answers, answer_k=answer_k,
            fail_under=gates, max_gap=max_gap, gate_on=gate_on,
            stratum_weights=_parse_weights(stratum_weight) if stratum_weight else None,
            origins=_parse_origins(origin or []), seed=seed,
            n_resamples=n_resamples, bootstrap=bootstrap,
        )  # fmt: skip
        if one_call:
            if results:
                raise InputError("give results files or --synthetic/--real, not both")
            if mlflow or mlflow_uri:
                raise InputError(
                    "--mlflow logs results files, which one-call mode does not write",
                    hint="run evaluate -o results.json on both sets, then calibrate results.json --mlflow",
                )
            report = _one_call(synthetic, real, corpus, run, evaluation, options)
        else:
            if not results:
                raise InputError("no results given", hint="pass results.json, or --synthetic G1 --real G2")
            if gold_from is not None or evidence_coverage is not None or request_timeout is not None:
                raise InputError(
                    "--gold-from, --evidence-coverage and --request-timeout apply to one-call mode "
                    "(--synthetic/--real)",
                    hint="results files are scored already: pass them to evaluate",
                )
            from realrecall.calibrate import calibrate as run_calibrate

            report = run_calibrate(results, by=split_list(by) or None, corpus=corpus, **options)
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
def compare(
    results_a: Annotated[Path, typer.Argument(help="results.json of system a (the baseline).")],
    results_b: Annotated[
        Path, typer.Argument(help="results.json of system b on the same queries (paired by query id).")
    ],
    metric: Annotated[str | None, typer.Option(help="Metric to compare (default recall@10).")] = None,
    by: Annotated[str | None, typer.Option(help="Slice fields (default: every field present).")] = None,
    test: Annotated[str, typer.Option(help="randomization (ranx fisher), t (ranx student) or bootstrap.")] = (
        "randomization"
    ),
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    n_resamples: Annotated[int, typer.Option(help="Randomizations / bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed of the randomization.")] = 0,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the comparison here.")] = None,
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
        report = run_compare(
            results_a, results_b, metric=metric, by=split_list(by) or None, test=test, alpha=alpha,
            n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        for message in report.warnings:
            warn(message)
        _emit(
            lambda: comparison_table(report), lambda: render_comparison(report, output_format),
            output_format, output, report.headline,
        )  # fmt: skip


def _evaluation(
    retriever: str | None,
    retriever_option: list[str] | None,
    k: str,
    by: list[str],
    gold_from: str | None,
    coverage: float | None,
    request_timeout: float | None = None,
) -> EvaluateSettings:
    given = {"retriever": retriever, "retriever_options": retriever_option or None, "k": k,
             "by": by or None, "gold_from": gold_from, "evidence_coverage": coverage,
             "request_timeout": request_timeout}  # fmt: skip
    return settings_from(
        EvaluateSettings, {name: value for name, value in given.items() if value is not None}, text=True
    )


def _one_call(
    synthetic: Path | None,
    real: Path | None,
    corpus: Path | None,
    run: Path | None,
    evaluation: EvaluateSettings,
    options: _CalibrateOptions,
) -> CalibrationReport:
    from realrecall.calibrate.one_call import evaluate_and_calibrate

    if synthetic is None or real is None:
        raise InputError("one-call mode needs both --synthetic and --real")
    return evaluate_and_calibrate(synthetic, real, corpus=corpus, run=run, evaluation=evaluation, **options)


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


def _parse_origins(values: list[str]) -> dict[str, str]:
    origins = {}
    for value in values:
        name, sep, origin = value.rpartition("=")
        if not sep or not name:
            raise InputError(f"--origin {value!r} is not NAME=ORIGIN", hint="write e.g. real_questions=real")
        origins[name] = origin
    return origins


def _parse_weights(values: list[str]) -> dict[str, float]:
    weights = {}
    for value in values:
        name, sep, share = value.rpartition("=")
        try:
            number = float(share)
        except ValueError:
            number = -1.0
        if not sep or not name or not number >= 0 or number == float("inf"):
            raise InputError(
                f"--stratum-weight {value!r} is not VALUE=SHARE with a share >= 0",
                hint="write e.g. --stratum-weight lookup=0.4",
            )
        weights[name] = number
    return weights


def _parse_gates(values: list[str]) -> list[tuple[str, float]]:
    from realrecall.calibrate import parse_gate

    return [parse_gate(item) for value in values for item in split_list(value)]

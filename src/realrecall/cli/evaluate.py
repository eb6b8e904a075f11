"""``realrecall evaluate``: score a retriever or a run on gold sets and print a table per set and slice."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from realrecall.bulk import bulk_step
from realrecall.cli.application import (
    MLFLOW_HELP,
    MLFLOW_URI_HELP,
    ProgressBar,
    app,
    note,
    numbered,
    out,
    output_option,
    output_options,
    user_errors,
    warn,
)
from realrecall.cli.console import plain
from realrecall.cli.retriever_help import RETRIEVER_SUFFIXES, RetrieverHelp
from realrecall.cli.settings_options import Group, named_as_options, settings_options
from realrecall.evaluate.settings import DEFAULT_RETRIEVER, EvaluateSettings

if TYPE_CHECKING:
    from realrecall.evaluate import EvaluationResult

# The retrievers' names and options are read from their registry only when the help is shown.
EVALUATE_OPTIONS = Group(EvaluateSettings, "settings", help_suffix=RETRIEVER_SUFFIXES)


@app.command(cls=RetrieverHelp)
@output_options("output", "per_query")
@settings_options(EVALUATE_OPTIONS)
def evaluate(
    gold: Annotated[
        list[Path],
        typer.Option("--gold", "-g", help="Gold set (JSONL, BEIR folder/qrels, TREC qrels); repeatable."),
    ],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", "-c", help="Corpus JSONL (needed to retrieve).")
    ] = None,
    run: Annotated[
        Path | None, typer.Option("--run", help="Score a run made elsewhere (TREC or JSONL).")
    ] = None,
    origin: Annotated[
        str | None, typer.Option(help="Origin of gold queries whose file states none: real|synthetic.")
    ] = None,
    *,
    settings: EvaluateSettings,
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write results.json here.", example="results.json")
    ] = None,
    per_query: Annotated[
        Path | None,
        output_option(
            "--per-query", help="Write per-query outcomes (JSONL) here.", example="per_query.jsonl"
        ),
    ] = None,
    mlflow: Annotated[bool, typer.Option("--mlflow", help=MLFLOW_HELP)] = False,
    mlflow_uri: Annotated[str | None, typer.Option("--mlflow-uri", help=MLFLOW_URI_HELP)] = None,
) -> None:
    """Score a retriever (or a run) on gold sets: recall@k, MRR, nDCG@k, sliced by any field."""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct(
            {**numbered("--gold", gold), "--corpus": corpus, "--run": run,
             **({} if run is not None else retriever_input_paths(settings))},
            {"--output": output, "--per-query": per_query},
        )  # fmt: skip
        if run is not None and not settings.engine_settings.on_ray and not (mlflow or mlflow_uri):
            # A finished run's files, read, scored, shown and written in one bulk step (realrecall.bulk):
            # no code of the user's runs in it, and its objects are freed before the collector is
            # back, so no collection walks the gold set (one did, 0.03 s of 100,000 queries). A
            # retriever's code, the Ray engine's client and MLflow run with the collector as it was.
            bulk_step(_files_only)(gold, corpus, run, origin, settings, output, per_query)
            return
        result = _evaluate_and_report(gold, corpus, run, origin, settings, output, per_query)
        if mlflow or mlflow_uri:
            from realrecall.cli.log import log_mlflow

            log_mlflow(output if output is not None else result, uri=mlflow_uri)


def _evaluate_and_report(
    gold: list[Path],
    corpus: Path | None,
    run: Path | None,
    origin: str | None,
    settings: EvaluateSettings,
    output: Path | None,
    per_query: Path | None,
) -> EvaluationResult:
    """Evaluate, print the warnings and tables, and write the results and per-query files asked for."""
    result = _evaluate(gold, corpus, run, origin, settings)
    from realrecall.evaluate import write_per_query, write_results

    for message in result.warnings:
        warn(message)
    for table in render_tables(result):
        out.print(table)
    if output is not None:
        write_results(result, output)
        note(f"results written to {output}", style="")
    if per_query is not None:
        write_per_query(result, per_query)
        note(f"per-query outcomes written to {per_query}", style="")
    return result


def _files_only(
    gold: list[Path],
    corpus: Path | None,
    run: Path | None,
    origin: str | None,
    settings: EvaluateSettings,
    output: Path | None,
    per_query: Path | None,
) -> None:
    """``_evaluate_and_report``, its result dropped inside the step (see ``evaluate``)."""
    _evaluate_and_report(gold, corpus, run, origin, settings, output, per_query)


def _evaluate(
    gold: list[Path], corpus: Path | None, run: Path | None, origin: str | None, settings: EvaluateSettings
) -> EvaluationResult:
    from realrecall.evaluate import evaluate_files

    # Two bars, one after the other: a dense retriever embeds the corpus before any query is retrieved.
    # A silent store server's advice names --request-timeout (named_as_options).
    with (
        ProgressBar("embedding", min_total=200) as embedding,
        ProgressBar("retrieving", min_total=200) as progress,
        named_as_options(EvaluateSettings),
    ):
        return evaluate_files(
            gold, corpus=corpus, run=run, origin=origin, settings=settings, index_progress=embedding,
            progress=progress,
        )  # fmt: skip


def retriever_input_paths(settings: EvaluateSettings) -> dict[str, Path]:
    """The files and folders the retriever reads (its store folder, the user's code), labelled by the
    option that names each, for the check that no output lands on them."""
    from realrecall.evaluate.retrievers import retriever_inputs

    found = retriever_inputs(
        settings.retriever or DEFAULT_RETRIEVER,
        dict(settings.retriever_options),
        defaults=settings.retriever_defaults(),
    )
    return {("--retriever" if key == "function" else f"--retriever-option {key}"): path
            for key, path in found.items()}  # fmt: skip


def render_tables(result: EvaluationResult) -> list[Table]:
    """One table per gold set: the overall row, then one row per slice, with n and every metric."""
    tables = []
    for gold_set in result.gold_sets:
        origins = ", ".join(f"{name} {count}" for name, count in gold_set.origins.items())
        caption = None
        if gold_set.judge_labels is not None:
            from realrecall.calibrate.judge_labels import judge_label_use_text

            caption = plain(judge_label_use_text(gold_set.judge_labels))
        table = Table(
            title=plain(f"{gold_set.name} ({origins}) - {result.retriever['name']}"),
            title_justify="left",
            show_edge=False,
            caption=caption,
            caption_justify="left",
        )
        table.add_column("slice")
        table.add_column("n", justify="right")
        for metric in result.metrics:
            table.add_column(plain(metric), justify="right")
        rows = [gold_set.overall, *gold_set.slices]
        for row in rows:
            label = (
                "all" if row.field is None else f"{row.field}={'(none)' if row.value is None else row.value}"
            )
            # Text cells: slice values come from the user's files and are never read as markup.
            table.add_row(plain(label), str(row.n), *(f"{row.metrics[m]:.4f}" for m in result.metrics))
        tables.append(table)
    return tables

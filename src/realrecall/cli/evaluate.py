"""``realrecall evaluate``: score a retriever or a run on gold sets and print a table per set and slice."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from realrecall.cli.application import (
    CUTOFFS,
    MLFLOW_HELP,
    MLFLOW_URI_HELP,
    ProgressBar,
    app,
    note,
    numbered,
    out,
    output_options,
    split_list,
    user_errors,
    warn,
)
from realrecall.cli.retriever_help import RETRIEVER_OPTIONS, RETRIEVERS, RetrieverHelp
from realrecall.errors import InputError
from realrecall.evaluate import defaults

if TYPE_CHECKING:
    from realrecall.evaluate import EvaluationResult


@app.command(cls=RetrieverHelp)
@output_options("output", "per_query")
def evaluate(
    gold: Annotated[
        list[Path],
        typer.Option("--gold", "-g", help="Gold set (JSONL, BEIR folder/qrels, TREC qrels); repeatable."),
    ],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", "-c", help="Corpus JSONL (needed to retrieve).")
    ] = None,
    retriever: Annotated[
        str | None, typer.Option(help=f"{RETRIEVERS} (default {defaults.RETRIEVER}).")
    ] = None,
    retriever_option: Annotated[
        list[str] | None,
        typer.Option(help=f"Retriever option KEY=VALUE, repeatable ({RETRIEVER_OPTIONS})."),
    ] = None,
    run: Annotated[
        Path | None, typer.Option("--run", help="Score a run made elsewhere (TREC or JSONL).")
    ] = None,
    k: Annotated[str, typer.Option("--k", help="Cutoffs, comma-separated.")] = CUTOFFS,
    metrics: Annotated[
        str | None, typer.Option(help="Explicit metrics, e.g. recall@10,mrr@10,ndcg@10.")
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Slice by gold-set fields, e.g. type,language,origin.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write results.json here.")] = None,
    per_query: Annotated[Path | None, typer.Option(help="Write per-query outcomes (JSONL) here.")] = None,
    relevance_threshold: Annotated[
        int, typer.Option(help="Lowest grade that counts as relevant.")
    ] = defaults.RELEVANCE_THRESHOLD,
    origin: Annotated[
        str | None, typer.Option(help="Origin of gold queries whose file states none: real|synthetic.")
    ] = None,
    gold_from: Annotated[
        str,
        typer.Option(
            "--gold-from",
            help="ids, evidence, or auto: chunk ids the corpus holds, evidence for the rest.",
        ),
    ] = defaults.GOLD_FROM,
    evidence_coverage: Annotated[
        float,
        typer.Option(help="Share of an evidence span a chunk must hold to be gold, in (0, 1]."),
    ] = defaults.EVIDENCE_COVERAGE,
    embed_model: Annotated[str | None, typer.Option(help="Embedding model for the dense retriever.")] = None,
    hybrid_dense: Annotated[
        str, typer.Option(help="Dense side of hybrid: dense or local-dense.")
    ] = defaults.HYBRID_DENSE,
    cache_dir: Annotated[Path | None, typer.Option(help="Embedding cache folder.")] = None,
    workers: Annotated[int, typer.Option(help="Threads for a custom retriever function.")] = 1,
    query_timeout: Annotated[
        float | None, typer.Option(help="Seconds a custom retriever may take per query (default: no limit).")
    ] = None,
    mlflow: Annotated[bool, typer.Option("--mlflow", help=MLFLOW_HELP)] = False,
    mlflow_uri: Annotated[str | None, typer.Option("--mlflow-uri", help=MLFLOW_URI_HELP)] = None,
) -> None:
    """Score a retriever (or a run) on gold sets: recall@k, MRR, nDCG@k, sliced by any field."""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct(
            {**numbered("--gold", gold), "--corpus": corpus, "--run": run,
             **({} if run is not None else retriever_input_paths(retriever, retriever_option or []))},
            {"--output": output, "--per-query": per_query},
        )  # fmt: skip
        result = _evaluate(
            gold=gold, corpus=corpus, retriever=retriever, run=run, k=k, metrics=metrics, by=by,
            relevance_threshold=relevance_threshold, origin=origin, embed_model=embed_model,
            hybrid_dense=hybrid_dense, cache_dir=cache_dir, workers=workers, query_timeout=query_timeout,
            retriever_option=retriever_option or [], gold_from=gold_from,
            evidence_coverage=evidence_coverage,
        )  # fmt: skip
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
        if mlflow or mlflow_uri:
            from realrecall.cli.log import log_mlflow

            log_mlflow(output if output is not None else result, uri=mlflow_uri)


def _evaluate(
    *,
    gold: list[Path],
    corpus: Path | None,
    retriever: str | None,
    run: Path | None,
    k: str,
    metrics: str | None,
    by: str | None,
    relevance_threshold: int,
    origin: str | None,
    embed_model: str | None,
    hybrid_dense: str,
    cache_dir: Path | None,
    workers: int,
    query_timeout: float | None = None,
    retriever_option: list[str] | None = None,
    gold_from: str = defaults.GOLD_FROM,
    evidence_coverage: float = defaults.EVIDENCE_COVERAGE,
) -> EvaluationResult:
    from realrecall.evaluate import evaluate_files
    from realrecall.evaluate.retrievers.options import RunSettings, parse_option_assignments

    # Two bars, one after the other: a dense retriever embeds the corpus before any query is retrieved.
    with (
        ProgressBar("embedding", min_total=200) as embedding,
        ProgressBar("retrieving", min_total=200) as progress,
    ):
        return evaluate_files(
            gold, corpus=corpus, retriever=retriever, run=run, origin=origin,
            retriever_options=parse_option_assignments(retriever_option or []),
            metrics=split_list(metrics) or None, k=parse_cutoffs(k), by=split_list(by),
            relevance_threshold=relevance_threshold,
            settings=RunSettings(cache_dir=cache_dir, workers=workers, query_timeout=query_timeout,
                                 index_progress=embedding),
            retriever_defaults={"embed_model": embed_model, "dense_component": hybrid_dense},
            progress=progress, gold_from=gold_from, evidence_coverage=evidence_coverage,
        )  # fmt: skip


def retriever_input_paths(retriever: str | None, assignments: list[str]) -> dict[str, Path]:
    """The files and folders the retriever reads (its store folder, the user's code), labelled by the
    option that names each, for the check that no output lands on them."""
    from realrecall.evaluate.retrievers import parse_option_assignments, retriever_inputs

    found = retriever_inputs(retriever or defaults.RETRIEVER, parse_option_assignments(assignments))
    return {("--retriever" if key == "function" else f"--retriever-option {key}"): path
            for key, path in found.items()}  # fmt: skip


def parse_cutoffs(text: str) -> list[int]:
    try:
        cutoffs = [int(item) for item in split_list(text)]
    except ValueError:
        raise InputError(
            f"--k takes comma-separated positive integers, got {text!r}", hint="e.g. --k 1,5,10"
        ) from None
    if not cutoffs or min(cutoffs) < 1:
        raise InputError(f"--k takes comma-separated positive integers, got {text!r}", hint="e.g. --k 1,5,10")
    return cutoffs


def render_tables(result: EvaluationResult) -> list[Table]:
    """One table per gold set: the overall row, then one row per slice, with n and every metric."""
    tables = []
    for gold_set in result.gold_sets:
        origins = ", ".join(f"{name} {count}" for name, count in gold_set.origins.items())
        table = Table(
            title=Text(f"{gold_set.name} ({origins}) - {result.retriever['name']}"),
            title_justify="left",
            show_edge=False,
        )
        table.add_column("slice")
        table.add_column("n", justify="right")
        for metric in result.metrics:
            table.add_column(Text(metric), justify="right")
        rows = [gold_set.overall, *gold_set.slices]
        for row in rows:
            label = (
                "all" if row.field is None else f"{row.field}={'(none)' if row.value is None else row.value}"
            )
            # Text cells: slice values come from the user's files and are never read as markup.
            table.add_row(Text(label), str(row.n), *(f"{row.metrics[m]:.4f}" for m in result.metrics))
        tables.append(table)
    return tables

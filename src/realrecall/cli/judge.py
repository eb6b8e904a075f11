"""``realrecall judge``: how far a judge's labels agree with people's, and figures corrected by people."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.calibrate.settings import LabelAgreementSettings, PPISettings
from realrecall.cli.application import (
    ProgressBar,
    check_format,
    command_group,
    emit_report,
    note,
    output_option,
    user_errors,
    warn,
)
from realrecall.cli.settings_options import Group, named_as_options, settings_options
from realrecall.curate.judge_settings import JudgeSettings
from realrecall.errors import InputError

judge_app = command_group(
    "judge",
    "Label unjudged passages with an LLM judge, check it against people, and correct its figures (PPI).",
)


@judge_app.callback(invoke_without_command=True)
@settings_options(Group(JudgeSettings, "settings"))
def judge(
    ctx: typer.Context,
    gold: Annotated[
        Path | None, typer.Option(help="The human gold set whose real queries are pooled.")
    ] = None,
    per_query: Annotated[
        list[Path] | None,
        typer.Option(help="Per-query file of an evaluated retriever (evaluate --per-query); repeatable."),
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", "-c", help="The corpus the retrievers searched.")
    ] = None,
    output: Annotated[
        Path | None,
        output_option(
            "--output",
            "-o",
            help="The judge's labels (JSONL; OUTPUT.qrels beside it).",
            example="labels.jsonl",
        ),
    ] = None,
    *,
    settings: JudgeSettings,
) -> None:
    """Label unjudged passages with an LLM judge, check it against people, and correct its figures (PPI)."""
    if ctx.invoked_subcommand is not None:
        return
    with user_errors():
        if gold is None or not per_query or corpus is None or output is None or settings.model is None:
            raise InputError(
                "realrecall judge needs --gold, --per-query, --corpus, --output and --model",
                hint="or run `realrecall judge agreement` / `realrecall judge ppi`",
            )
        from realrecall.files import check_distinct

        inputs = {
            "--gold": gold,
            "--corpus": corpus,
            **{f"--per-query {i}": p for i, p in enumerate(per_query, 1)},
        }
        from realrecall.generate.store import sidecar_paths

        beside = sidecar_paths(output)
        check_distinct(
            inputs,
            {"--output": output, "its qrels": output.with_name(output.name + ".qrels"),
             **{f"its {name}": beside[name] for name in ("cache", "failures", "summary")}},
        )  # fmt: skip
        from realrecall.files import check_file_output

        check_file_output(output, label="the output", why="judge reads its labels back to resume")
        from realrecall.cli.generate import report_batch
        from realrecall.corpus import load_corpus
        from realrecall.curate.judge import judge_pool
        from realrecall.evaluate.results import read_per_query
        from realrecall.gold import load_gold
        from realrecall.llm import LLMConfig, OpenAIChatClient

        # With --batch, judge_pool asks the Batch API itself (at OPENAI_BASE_URL): no client to make.
        batching = settings.batch_settings.batch
        client = None if batching else OpenAIChatClient(LLMConfig(timeout=settings.request_timeout))
        # The advice of a silent endpoint names --timeout, the option the client was made from.
        with ProgressBar("judging", min_total=20) as bar, named_as_options(JudgeSettings):
            summary = judge_pool(
                load_gold(gold), [read_per_query(p) for p in per_query], load_corpus(corpus), output,
                client=client, settings=settings, progress=bar, batch_status=report_batch,
            )  # fmt: skip
        stage = summary.stage
        spent = "" if stage.cost is None else f", cost {stage.cost:.4f}"
        note(
            f"{summary.pooled} pooled pairs: {summary.graded} graded now, {summary.kept} already graded, "
            f"{summary.failed} failed; {stage.requests} requests ({stage.cached} cached), "
            f"{stage.tokens_in} tokens in, {stage.tokens_out} out{spent}",
            style="",
        )
        note(f"labels written to {summary.output_path} and {summary.qrels_path}", style="")
        if summary.failed:
            warn(f"{summary.failed} pairs got no grade (see the failures file beside {summary.output_path})")


@judge_app.command("agreement")
@settings_options(Group(LabelAgreementSettings, "settings"))
def agreement(
    human: Annotated[Path, typer.Argument(help="People's grades: TREC qrels or a gold set.")],
    judge: Annotated[Path, typer.Argument(help="The judge's grades of the same pairs, in either format.")],
    *,
    settings: LabelAgreementSettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, json or html.")] = "table",
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the report here.", example="report.json")
    ] = None,
) -> None:
    """Agreement of a judge's grades with people's on the same pairs: kappa, precision, recall."""
    with user_errors():
        from realrecall.calibrate.report.judge import (
            LABEL_AGREEMENT_FORMATS,
            label_agreement_headline,
            render_label_agreement,
        )
        from realrecall.files import check_distinct

        check_distinct({"HUMAN": human, "JUDGE": judge}, {"--output": output})
        chosen = check_format(output_format, LABEL_AGREEMENT_FORMATS)
        from realrecall.calibrate.judge_agreement import load_label_agreement

        result = load_label_agreement(human, judge, settings=settings)
        emit_report(render_label_agreement(result, chosen), output, headline=label_agreement_headline(result))


@judge_app.command("ppi")
@settings_options(Group(PPISettings, "settings"))
def ppi(
    judge: Annotated[
        Path, typer.Argument(help="Per-query scores of the systems under the judge's labels, on every query.")
    ],
    human: Annotated[
        Path, typer.Argument(help="Per-query scores under people's labels, on the labelled queries only.")
    ],
    measure: Annotated[str, typer.Option(help="Measure, e.g. ndcg@10 or ndcg_cut_10.")],
    judge_queries: Annotated[
        str | None, typer.Option(help="Keep these queries of JUDGE: FIELD=VALUE, LOW-HIGH ids or @FILE.")
    ] = None,
    human_queries: Annotated[
        str | None, typer.Option(help="Keep these queries of HUMAN (same forms).")
    ] = None,
    *,
    settings: PPISettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the report here.", example="report.json")
    ] = None,
) -> None:
    """Each system's figure from judge labels on every query, corrected by human labels on some (PPI)."""
    with user_errors():
        from realrecall.calibrate.report.judge import PPI_FORMATS, ppi_headline, render_ppi
        from realrecall.files import check_distinct, refuse_same_file

        check_distinct({"JUDGE": judge, "HUMAN": human}, {"--output": output})
        refuse_same_file(
            ("JUDGE", judge), ("HUMAN", human), hint="give the scores under people's labels second"
        )
        chosen = check_format(output_format, PPI_FORMATS)
        from realrecall.calibrate.ppi import prediction_powered
        from realrecall.calibrate.query_scores import load_query_scores, parse_query_selection

        judge_scores = load_query_scores(
            judge, measure, queries=parse_query_selection(judge_queries) if judge_queries else None
        )
        human_scores = load_query_scores(
            human, measure, queries=parse_query_selection(human_queries) if human_queries else None
        )
        report = prediction_powered(judge_scores, human_scores, settings=settings)
        emit_report(render_ppi(report, chosen), output, headline=ppi_headline(report))

"""``realrecall judge``: how far a judge's labels agree with people's, and figures corrected by people."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.cli.application import check_format, command_group, emit_report, user_errors

judge_app = command_group(
    "judge",
    "Label unjudged passages with an LLM judge, check it against people, and correct its figures (PPI).",
)


@judge_app.command("agreement")
def agreement(
    human: Annotated[Path, typer.Argument(help="People's grades: TREC qrels or a gold set.")],
    judge: Annotated[Path, typer.Argument(help="The judge's grades of the same pairs, in either format.")],
    threshold: Annotated[
        int | None,
        typer.Option(help="Relevant from this grade (default 2 when grades go above 1, else 1)."),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, json or html.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
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

        result = load_label_agreement(human, judge, threshold=threshold)
        emit_report(render_label_agreement(result, chosen), output, headline=label_agreement_headline(result))


@judge_app.command("ppi")
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
    confidence: Annotated[float, typer.Option(help="Confidence level of the intervals.")] = 0.95,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
) -> None:
    """Each system's figure from judge labels on every query, corrected by human labels on some (PPI)."""
    with user_errors():
        from realrecall.calibrate.report.judge import PPI_FORMATS, ppi_headline, render_ppi
        from realrecall.files import check_distinct

        check_distinct({"JUDGE": judge, "HUMAN": human}, {"--output": output})
        chosen = check_format(output_format, PPI_FORMATS)
        from realrecall.calibrate.ppi import prediction_powered
        from realrecall.calibrate.query_scores import load_query_scores, parse_query_selection

        judge_scores = load_query_scores(
            judge, measure, queries=parse_query_selection(judge_queries) if judge_queries else None
        )
        human_scores = load_query_scores(
            human, measure, queries=parse_query_selection(human_queries) if human_queries else None
        )
        report = prediction_powered(judge_scores, human_scores, confidence=confidence)
        emit_report(render_ppi(report, chosen), output, headline=ppi_headline(report))

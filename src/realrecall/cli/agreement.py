"""``realrecall agreement``: do two query sets order the same systems alike, and can each separate them?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.calibrate.settings import AgreementSettings
from realrecall.cli.application import app, check_format, emit_report, output_option, user_errors
from realrecall.cli.settings_options import Group, settings_options

_FORMATS = ("table", "json", "html")


@app.command()
@settings_options(Group(AgreementSettings, "settings"))
def agreement(
    a: Annotated[
        Path,
        typer.Argument(
            help="Per-query scores of several systems on set A: trec_eval -q output, realrecall "
            "results.json or per-query files, or a folder of them."
        ),
    ],
    b: Annotated[Path, typer.Argument(help="The same systems' per-query scores on set B (may be A's file).")],
    measure: Annotated[str, typer.Option(help="Measure, e.g. ndcg@10 or ndcg_cut_10.")],
    a_queries: Annotated[
        str | None,
        typer.Option(help="Keep these queries of A: FIELD=VALUE (origin=real), LOW-HIGH ids or @FILE."),
    ] = None,
    b_queries: Annotated[str | None, typer.Option(help="Keep these queries of B (same forms).")] = None,
    *,
    settings: AgreementSettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, json or html.")] = "table",
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the report here.", example="agreement.txt")
    ] = None,
) -> None:
    """Do two query sets order systems alike (Kendall tau vs the split-half floor), and can each separate
    them?"""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct({"A": a, "B": b}, {"--output": output})
        chosen = check_format(output_format, _FORMATS)
        from realrecall.calibrate.query_scores import load_query_scores, parse_query_selection
        from realrecall.calibrate.report.set_agreement import headline, render_set_agreement
        from realrecall.calibrate.set_agreement import set_agreement

        select_a = parse_query_selection(a_queries) if a_queries else None
        select_b = parse_query_selection(b_queries) if b_queries else None
        scores_a = load_query_scores(a, measure, queries=select_a)
        scores_b = load_query_scores(b, measure, queries=select_b)
        result = set_agreement(scores_a, scores_b, settings=settings)
        emit_report(render_set_agreement(result, chosen), output, headline=headline(result))

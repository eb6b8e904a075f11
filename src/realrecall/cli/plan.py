"""``realrecall plan``: how many more real questions to label, and where, for an interval width."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.cli.application import app, check_format, emit_report, user_errors, warn

_FORMATS = ("table", "json", "html")


@app.command()
def plan(
    results: Annotated[
        Path, typer.Argument(help="results.json from evaluate, holding the real questions in hand.")
    ],
    target_width: Annotated[float, typer.Option(help="Width of the interval to reach, e.g. 0.1.")],
    metric: Annotated[str, typer.Option(help="Metric to plan for.")] = "recall@10",
    by: Annotated[
        str | None,
        typer.Option(help="Stratum field (type, topic...; default: type with --weights, else none)."),
    ] = None,
    weights: Annotated[
        Path | None,
        typer.Option(help="Traffic share of each stratum value: JSON {value: share} or lines value,share."),
    ] = None,
    confidence: Annotated[float, typer.Option(help="Confidence level of the interval.")] = 0.95,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, json or html.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the plan here.")] = None,
) -> None:
    """How many more real questions to label, and in which strata, to narrow the interval to a width."""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct({"RESULTS": results, "--weights": weights}, {"--output": output})
        chosen = check_format(output_format, _FORMATS)
        from realrecall.calibrate.plan import load_weights
        from realrecall.calibrate.plan import plan as make_plan
        from realrecall.calibrate.report.plan import render_plan
        from realrecall.calibrate.settings import CalibrateSettings

        shares = load_weights(weights) if weights is not None else None
        default_field = CalibrateSettings().calibrate_by
        field = by if by is not None else default_field if shares is not None else None
        made = make_plan(results, metric, target_width, by=field, weights=shares, confidence=confidence)
        if chosen != "table":
            for message in made.warnings:
                warn(message)
        emit_report(render_plan(made, chosen), output, headline=made.text)

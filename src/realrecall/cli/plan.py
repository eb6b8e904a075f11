"""``realrecall plan``: how many more real questions to label, and where, for an interval width."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.calibrate.settings import PlanSettings
from realrecall.cli.application import app, check_format, emit_report, output_option, user_errors, warn
from realrecall.cli.settings_options import Group, named_as_options, settings_options

_FORMATS = ("table", "json", "html")


@app.command()
@settings_options(Group(PlanSettings, "settings"))
def plan(
    results: Annotated[
        Path, typer.Argument(help="results.json from evaluate, holding the real questions in hand.")
    ],
    target_width: Annotated[float, typer.Option(help="Width of the interval to reach, e.g. 0.1.")],
    *,
    settings: PlanSettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table, json or html.")] = "table",
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the plan here.", example="plan.json")
    ] = None,
) -> None:
    """How many more real questions to label, and in which strata, to narrow the interval to a width."""
    with user_errors():
        from realrecall.files import check_distinct

        check_distinct({"RESULTS": results, "--weights": settings.weights}, {"--output": output})
        chosen = check_format(output_format, _FORMATS)
        from realrecall.calibrate.plan import plan as make_plan
        from realrecall.calibrate.report.plan import render_plan

        with named_as_options(PlanSettings):
            made = make_plan(results, target_width, settings=settings)
        if chosen != "table":
            for message in made.warnings:
                warn(message)
        emit_report(render_plan(made, chosen), output, headline=made.text)

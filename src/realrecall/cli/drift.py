"""``realrecall drift``: has recent traffic moved away from the real set, in topic or in style?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from realrecall.calibrate.settings import DriftSettings
from realrecall.cli.application import app, check_format, emit_report, output_option, user_errors
from realrecall.cli.settings_options import Group, settings_options

_FORMATS = ("table", "json")


@app.command()
@settings_options(Group(DriftSettings, "settings"))
def drift(
    real: Annotated[
        Path, typer.Argument(help="The real set: a gold set, JSONL, id<TAB>text TSV or one a line.")
    ],
    traffic: Annotated[
        Path, typer.Argument(help="Recent user queries, one a line or JSONL (query/question/text).")
    ],
    *,
    settings: DriftSettings,
    output_format: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    output: Annotated[
        Path | None, output_option("--output", "-o", help="Write the report here.", example="drift.json")
    ] = None,
) -> None:
    """Has recent traffic drifted from the real set (topic and style)? A calibrated permutation test."""
    with user_errors():
        from realrecall.files import check_distinct, refuse_same_file

        check_distinct({"REAL": real, "TRAFFIC": traffic}, {"--output": output})
        # A set read as its own traffic agrees with itself: "no drift" would be a finding about nothing.
        refuse_same_file(
            ("REAL", real), ("TRAFFIC", traffic), hint="give recent user queries as TRAFFIC, another file"
        )
        chosen = check_format(output_format, _FORMATS)
        from realrecall.calibrate.drift import detect_drift
        from realrecall.calibrate.realism import load_questions

        report = detect_drift(load_questions(real), load_questions(traffic), settings=settings)
        if chosen == "json":
            text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
        else:
            lines = [report.verdict, "", "Traffic least like the real set:"]
            lines += [f"  {score:+.3f}  {query}" for query, score in report.queries]
            lines += ["", "Terms that differ most (z > 0: more frequent in traffic):"]
            lines += [
                f"  {term.z:+6.2f}  {term.token}  "
                f"(real {term.real_share:.1%}, traffic {term.traffic_share:.1%})"
                for term in report.terms
            ]
            text = "\n".join(lines) + "\n"
        emit_report(text, output, headline=report.verdict)

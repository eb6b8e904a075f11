"""``realrecall realism``: how well synthetic questions pass for real ones (no corpus, no retriever)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from realrecall.cli.application import app, out, user_errors, write_stdout
from realrecall.cli.console import plain
from realrecall.errors import InputError

if TYPE_CHECKING:
    from realrecall.calibrate.realism import RealismScore

_FORMATS = ("table", "json")


@app.command()
def realism(
    real: Annotated[
        Path, typer.Argument(help="Real questions: a gold set, JSONL, id<TAB>text TSV or one a line.")
    ],
    synthetic: Annotated[Path, typer.Argument(help="Synthetic questions, in any of the same formats.")],
    output_format: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    folds: Annotated[int, typer.Option(help="Cross-validation folds.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the fold split.")] = 0,
    top: Annotated[int, typer.Option(help="Features shown.")] = 10,
) -> None:
    """Can a classifier tell the synthetic questions from the real ones? AUC near 0.5: they read alike."""
    with user_errors():
        if output_format not in _FORMATS:
            raise InputError(f"unknown format {output_format!r}", hint=f"choose from {', '.join(_FORMATS)}")
        if folds < 2:
            raise InputError(f"--folds must be at least 2, got {folds}")
        if top < 0:
            raise InputError(f"--top must be 0 or more, got {top}")
        from realrecall.calibrate.realism import realism_of_files

        score = realism_of_files(real, synthetic, folds=folds, seed=seed, top=top)
        if output_format == "json":
            write_stdout(json.dumps(score.to_dict(), indent=2, ensure_ascii=False) + "\n")
        else:
            _print_table(score)


def _print_table(score: RealismScore) -> None:
    out.print(
        plain(
            f"realism AUC {score.auc:.3f} [{score.low:.3f}, {score.high:.3f}] "
            f"({score.n_real} real, {score.n_synthetic} synthetic, {score.folds}-fold): {score.verdict}"
        )
    )
    if not score.features:
        return
    table = Table(title="What tells them apart, by contribution", title_justify="left")
    columns = ("feature", "leans", "contribution", "weight", "real", "synthetic", "held by (real, synthetic)")
    for name in columns:
        table.add_column(name, justify="left" if name in ("feature", "leans") else "right")
    for feature in score.features:
        table.add_row(
            plain(feature.name),
            feature.leans,
            f"{feature.contribution:.3f}",
            f"{feature.weight:+.2f}",
            f"{feature.real:.3g}",
            f"{feature.synthetic:.3g}",
            f"{feature.real_support}/{score.n_real}, {feature.synthetic_support}/{score.n_synthetic}",
        )
    out.print(table)

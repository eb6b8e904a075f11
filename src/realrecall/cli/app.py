"""The typer application and the one place that turns library errors into exit codes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer
from rich.console import Console

from realrecall.errors import RealrecallError

app = typer.Typer(
    name="realrecall",
    help="How good is your retrieval really? Generate, evaluate and calibrate gold sets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Results go to stdout; progress, warnings and errors to stderr, so `> file` captures only results.
# Piped output keeps full tables (rich would otherwise assume 80 columns and truncate headers).
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Map the project's errors to one red line and their exit code; let bugs show a traceback."""
    try:
        yield
    except RealrecallError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(exc.exit_code) from None


def split_list(value: str | None) -> list[str]:
    """Parse a comma-separated option (``--by type,language``) into its non-empty items."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def warn(message: str) -> None:
    err.print(f"[yellow]warning:[/] {message}", markup=True, highlight=False)


def is_interactive() -> bool:
    return sys.stderr.isatty()


@app.callback()
def _root() -> None:
    """How good is your retrieval really? Generate, evaluate and calibrate gold sets."""

"""Command-line interface: each command parses options, calls one library function and renders.

Command modules register themselves on the shared typer app when imported below.
"""

from __future__ import annotations

from realrecall.cli import gold as _gold  # noqa: F401  (registers `realrecall gold`)
from realrecall.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()

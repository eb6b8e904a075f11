"""Command-line interface: each command parses options, calls one library function and renders.

Importing a command module registers its commands on the shared typer ``app``.
"""

from __future__ import annotations

from realrecall.cli import calibrate as _calibrate  # noqa: F401
from realrecall.cli import evaluate as _evaluate  # noqa: F401
from realrecall.cli import generate as _generate  # noqa: F401
from realrecall.cli import gold as _gold  # noqa: F401
from realrecall.cli import pipeline as _pipeline  # noqa: F401
from realrecall.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()

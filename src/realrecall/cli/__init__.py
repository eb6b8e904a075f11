"""Command-line interface: each command parses options, calls one library function and renders.

Importing a command module registers its commands on the shared typer ``app``.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

from realrecall.cli import calibrate as _calibrate  # noqa: F401
from realrecall.cli import corpus as _corpus  # noqa: F401
from realrecall.cli import evaluate as _evaluate  # noqa: F401
from realrecall.cli import generate as _generate  # noqa: F401
from realrecall.cli import gold as _gold  # noqa: F401
from realrecall.cli import log as _log  # noqa: F401
from realrecall.cli import pipeline as _pipeline  # noqa: F401
from realrecall.cli import realism as _realism  # noqa: F401
from realrecall.cli.application import app, run_cli

__all__ = ["app", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """The ``realrecall`` command: runs ``argv`` (default ``sys.argv[1:]``) and exits with its code."""
    if argv is None:
        # The process's own command line: the modules loaded so far (typer, rich, the commands) live as
        # long as it, so frozen out of the collector no full collection walks them (~50 ms of a short
        # command's CPU). Not when called with arguments (tests, embedding code), which live on.
        gc.freeze()
    run_cli(argv)

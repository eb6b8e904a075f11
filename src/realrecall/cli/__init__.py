"""Command-line interface: each command parses options, calls one library function and renders.

Importing a command module registers its commands on the shared typer ``app``. The ``realrecall``
process imports only the module of the command it runs (every module for ``--help`` or a name it
does not know, so the listing and "no such command" see them all); ``realrecall.cli.app`` and
``main(argv)`` called from Python have every command.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["app", "main"]

# The module under realrecall.cli that registers each top-level command, in the order of --help.
COMMAND_MODULES: dict[str, str] = {
    "calibrate": "calibrate",
    "compare": "calibrate",
    "corpus": "corpus",
    "evaluate": "evaluate",
    "generate": "generate",
    "gold": "gold",
    "log": "log",
    "run": "pipeline",
    "demo": "pipeline",
    "history": "pipeline",
    "realism": "realism",
}


def _register(command_line: Sequence[str] | None) -> None:
    """Import the command modules ``command_line`` needs: its command's, or all of them."""
    # The root options (--debug, --version, --help) take no value: the first other word is the command.
    command = next((word for word in command_line or () if not word.startswith("-")), None)
    modules = [COMMAND_MODULES[command]] if command in COMMAND_MODULES else COMMAND_MODULES.values()
    for module in dict.fromkeys(modules):
        importlib.import_module(f"realrecall.cli.{module}")


def __getattr__(name: str) -> Any:
    if name == "app":
        _register(None)
        from realrecall.cli.application import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> None:
    """The ``realrecall`` command: runs ``argv`` (default ``sys.argv[1:]``) and exits with its code."""
    from realrecall.cli.application import run_cli

    if argv is None:
        # The process's own command line: only its command's module is imported (a 500-query evaluate
        # is mostly start-up). The modules loaded so far (typer, rich, the command) live as long as the
        # process, so frozen out of the collector no full collection walks them (~50 ms of a short
        # command's CPU). Not when called with arguments (tests, embedding code), which get every
        # command and live on.
        _register(sys.argv[1:])
        gc.freeze()
    else:
        _register(None)
    run_cli(argv)

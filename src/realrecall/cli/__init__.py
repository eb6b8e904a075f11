"""Command-line interface: each command parses options, calls one library function and renders.

Importing a command module registers its commands on the shared typer ``app``. The ``realrecall``
process imports only the module of the command it runs (every module for a name it does not know, so
"no such command" sees them all); the root's ``--help`` lists the commands from ``COMMANDS`` and
imports none. ``realrecall.cli.app`` and ``main(argv)`` called from Python have every command.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from realrecall.bulk import bulk_mode

__all__ = ["app", "main"]

# Each top-level command, in the order of --help: the module under realrecall.cli that registers it,
# and the first paragraph of its help, which the root's --help lists without importing the modules
# (their imports were 0.07 s of a 0.2 s --help). A test checks each against the command's own help.
COMMANDS: dict[str, tuple[str, str]] = {
    "calibrate": (
        "calibrate",
        "Quote the real figure: real vs synthetic with intervals, the gap per slice, diagnostics, gates.",
    ),
    "compare": (
        "calibrate",
        "Is b better than a? A paired test on the same queries, per origin (real and synthetic apart) "
        "and per slice; queries pair by id, so two chunkings of one corpus compare.",
    ),
    "evaluate": (
        "evaluate",
        "Score a retriever (or a run) on gold sets: recall@k, MRR, nDCG@k, sliced by any field.",
    ),
    "generate": (
        "generate",
        'Write synthetic questions for the chunks of a corpus (a gold set with origin "synthetic").',
    ),
    "run": (
        "pipeline",
        "Run the scheduled job: incremental generate, evaluate on both sets, calibrate, record history.",
    ),
    "demo": (
        "pipeline",
        "Run the whole pipeline offline on the bundled sample data and show the gap report.",
    ),
    "history": ("pipeline", "Show the trend of the real, synthetic and calibrated figures over runs."),
    "extras": (
        "pipeline",
        "Print the optional extras a pipeline needs, for pip install 'realrecall[EXTRAS]' (a CI job's).",
    ),
    "realism": (
        "realism",
        "Can a classifier tell the synthetic questions from the real ones? AUC near 0.5: they read alike.",
    ),
    "agreement": (
        "agreement",
        "Do two query sets order systems alike (Kendall tau vs the split-half floor), and can each "
        "separate them?",
    ),
    "plan": (
        "plan",
        "How many more real questions to label, and in which strata, to narrow the interval to a width.",
    ),
    "drift": (
        "drift",
        "Has recent traffic drifted from the real set (topic and style)? A calibrated permutation test.",
    ),
    "judge": (
        "judge",
        "Label unjudged passages with an LLM judge, check it against people, and correct its figures (PPI).",
    ),
    "corpus": ("corpus", "Work with corpora: export one from a vector store."),
    "gold": (
        "gold",
        "Keep a gold set honest: import it, review its misses, add and expand its gold passages.",
    ),
    "log": ("log", "Send figures where your team tracks experiments (MLflow)."),
}
COMMAND_MODULES: dict[str, str] = {name: module for name, (module, _) in COMMANDS.items()}


def _register(command_line: Sequence[str] | None) -> None:
    """Import the command modules ``command_line`` needs: its command's, or all of them; for the
    root's own help, version or option errors, none (the listing is read from ``COMMANDS``)."""
    words = list(command_line or ())
    # The root options (--debug, --version, --help) take no value: the first other word is the command.
    command = next((word for word in words if not word.startswith("-")), None)
    if command_line is not None and (command is None or "--help" in words[: words.index(command)]):
        from realrecall.cli.application import list_commands

        list_commands({name: summary for name, (_, summary) in COMMANDS.items()})
        return
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
    if argv is None:
        # The process's own command line: only its command's module is imported (a 500-query evaluate
        # is mostly start-up). The modules loaded so far (typer, rich, the command) live as long as the
        # process, so frozen out of the collector no full collection walks them (~50 ms of a short
        # command's CPU); nor is any collection run while they load, which would find nothing to free
        # (30 ms of CPU). Not when called with arguments (tests, embedding code), which get every
        # command and live on.
        collecting = gc.isenabled()
        gc.disable()
        try:
            from realrecall.cli.application import run_cli

            _register(sys.argv[1:])
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
    else:
        from realrecall.cli.application import run_cli

        _register(None)
    # The command's bulk steps (reading, scoring, writing) pause the collector and give memory back;
    # code of the user's (a retriever's module, its searches) runs outside them (realrecall.bulk).
    with bulk_mode():
        run_cli(argv)

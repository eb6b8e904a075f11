"""The help of the options that name a retriever or a store, read from the registry when help is shown.

Written into the help at import, the names and options of every retriever would import every
retriever module (bm25, the stores, the embedding cache: about 20 ms of each evaluate and calibrate
process, which reads none of them to score a run). The help strings hold ``RETRIEVERS`` and
``RETRIEVER_OPTIONS``; ``RetrieverHelp``, the command class of those commands, fills them in from
``evaluate.retrievers.registry`` just before click writes the help.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand

__all__ = ["RETRIEVERS", "RETRIEVER_OPTIONS", "RETRIEVER_SUFFIXES", "STORES", "RetrieverHelp"]

RETRIEVERS = "{retrievers}"
"""Stands for ``bm25, dense, ..., or module:function`` in an option's help."""
RETRIEVER_OPTIONS = "{retriever options}"
"""Stands for each retriever's options (``bm25: k1, b, ...; dense: ...``) in an option's help."""
STORES = "{stores}"
"""Stands for the vector stores (``chroma, lancedb, qdrant``) in an option's help."""
RETRIEVER_SUFFIXES = {
    "retriever": f" Choose from {RETRIEVERS}.",
    "retriever_options": f" Options: {RETRIEVER_OPTIONS}.",
}
"""What the help of the settings that name a retriever adds to their declarations' help."""


class RetrieverHelp(TyperCommand):
    """A command whose options' help names the registered retrievers (or stores)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from realrecall.evaluate.retrievers.registry import choices, options_help, store_choices

        filled = {RETRIEVERS: choices, RETRIEVER_OPTIONS: options_help, STORES: store_choices}
        for param in self.params:
            text = getattr(param, "help", None)
            if not isinstance(text, str):
                continue
            for placeholder, value in filled.items():
                if placeholder in text:
                    text = text.replace(placeholder, value())
            param.help = text  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)

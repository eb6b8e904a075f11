"""``realrecall corpus export``: the chunks a vector store serves, written as a corpus file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from realrecall.cli.application import ProgressBar, command_group, note, output_option, user_errors
from realrecall.cli.retriever_help import STORES, RetrieverHelp
from realrecall.errors import ServerSilent
from realrecall.evaluate.retrievers.options import REQUEST_TIMEOUT, parse_option_assignments

corpus_app = command_group("corpus", "Work with corpora: export one from a vector store.")


@corpus_app.command("export", cls=RetrieverHelp)
def export(
    store: Annotated[str, typer.Option("--from", help=f"The store: {STORES}.")],
    output: Annotated[
        Path, output_option("--output", "-o", help="Corpus JSONL to write.", example="chunks.jsonl")
    ],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="Store option KEY=VALUE, repeatable: the keys of --retriever-option for the same store "
            "(e.g. host=127.0.0.1, collection=docs, id_field=chunk_id).",
        ),
    ] = None,
    page_size: Annotated[int, typer.Option(help="Records read from the store per request.")] = 500,
    request_timeout: Annotated[
        float, typer.Option(help="Seconds a store's server may take to answer one request.")
    ] = REQUEST_TIMEOUT,
) -> None:
    """Write the ids, texts and metadata a vector store serves as a corpus (JSON Lines), page by page."""
    with user_errors():
        from realrecall.stores import export_corpus

        options = parse_option_assignments(option or [], flag="--option")
        with ProgressBar("exporting") as progress:
            try:
                written = export_corpus(
                    store, output, options=options, page_size=page_size, progress=progress,
                    request_timeout=request_timeout,
                )  # fmt: skip
            except ServerSilent as exc:  # the advice names the option, not export_corpus's keyword
                raise exc.labelled("--request-timeout") from exc
        note(f"{written} chunks written to {output}", style="")

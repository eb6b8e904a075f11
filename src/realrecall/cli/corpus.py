"""``realrecall corpus export``: the chunks a vector store serves, written as a corpus file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from realrecall.cli.application import app, err, note, user_errors

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

corpus_app = typer.Typer(help="Work with corpora: export one from a vector store.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("export")
def export(
    store: Annotated[str, typer.Option("--from", help="The store: chroma, lancedb or qdrant.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Corpus JSONL to write.")],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="Store option KEY=VALUE, repeatable: the keys of --retriever-option for the same store "
            "(e.g. host=127.0.0.1, collection=docs, id_field=chunk_id).",
        ),
    ] = None,
    page_size: Annotated[int, typer.Option(help="Records read from the store per request.")] = 500,
) -> None:
    """Write the ids, texts and metadata a vector store serves as a corpus (JSON Lines), page by page."""
    with user_errors():
        from realrecall.evaluate.retrievers.options import parse_option_assignments
        from realrecall.stores import export_corpus

        options = parse_option_assignments(option or [], flag="--option")
        with _ExportProgress() as progress:
            written = export_corpus(store, output, options=options, page_size=page_size, progress=progress)
        note(f"{written} chunks written to {output}", style="")


class _ExportProgress:
    """A rich progress bar on a terminal (stderr); nothing when stderr is a file or a pipe."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> _ExportProgress:
        return self

    def __call__(self, done: int, total: int) -> None:
        if not err.is_terminal:
            return
        if self._progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._progress = Progress(
                "exporting",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("export", total=total)
        if self._task is not None:
            self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

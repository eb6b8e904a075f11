"""The typer application and the one place that turns errors into one line and an exit code.

Every string a user, a file, an endpoint or an exception supplies is printed as plain text: both
consoles have markup and emoji codes off, and styling is applied with ``rich.text.Text`` objects, so
``[/]`` in a query type or ``[local]`` in an install hint reaches the terminal as written; its control
characters (an ESC sequence, ``\r``, a bidi control) are shown as escapes (``realrecall.cli.console``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import typer
from rich.text import Text
from typer._click.exceptions import ClickException
from typer._click.types import ParamType
from typer.core import TyperGroup

from realrecall._version import __version__
from realrecall.cli.console import DataConsole, plain
from realrecall.errors import InputError, RealrecallError
from realrecall.printable import printable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

# Results go to stdout; progress, warnings and errors to stderr, so `> file` captures only results.
# Piped output keeps full tables (rich would otherwise assume 80 columns and truncate headers).
# markup/emoji off: user text is data, never markup (see the module docstring); control characters in
# it are shown escaped (DataConsole).
out = DataConsole(highlight=False, markup=False, emoji=False, width=None if sys.stdout.isatty() else 160)
err = DataConsole(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)

_DEBUG_KEY = "realrecall.debug"

Command = TypeVar("Command", bound=Callable[..., Any])


class _OneLineErrors(TyperGroup):
    """The root command: a usage error (bad option value, unknown option, missing argument) is one
    ``error:`` line naming the fix and exit code 2, like every other input error, instead of the
    multi-line usage box typer prints."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        # click's own standalone mode prints the usage box: run it non-standalone and map errors here.
        def run() -> Any:
            return super(_OneLineErrors, self).main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )

        if not standalone_mode:
            return run()
        try:
            code = run()
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except typer.Abort:
            err.print("aborted")
            sys.exit(130)
        except ClickException as exc:
            sys.exit(_usage_error(exc))
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        # Typer ends a KeyboardInterrupt in exit 130 without a word, and an option's value refused
        # while the command's options are parsed (an output naming a folder) is the project's error:
        # both are caught here, where the command's words are still known.
        words = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            err.print(plain(interrupted_line(self._command_path(ctx, words))))
            raise typer.Exit(130) from None
        except RealrecallError as exc:
            error_line(str(exc))
            raise typer.Exit(exc.exit_code) from None

    def _command_path(self, ctx: Any, words: Sequence[str]) -> str:
        """``judge agreement`` from the words after ``realrecall`` (options before the command skipped)."""
        names = [word for word in words if not word.startswith("-")]
        path: list[str] = []
        group: Any = self
        for name in names[:2]:
            commands = getattr(group, "commands", None)
            if not commands or name not in commands:
                break
            path.append(name)
            group = commands[name]
        return " ".join(path)


# The commands that append their records one at a time (and resume from them when rerun); every other
# output is written whole by a rename, so an interrupted command leaves it as it was.
RESUMABLE_COMMANDS = frozenset({"generate", "judge", "run"})


def interrupted_line(command: str) -> str:
    """What Ctrl-C leaves behind, said in one line: nothing is ever half-written."""
    if command in RESUMABLE_COMMANDS:
        return (
            "interrupted: the records finished so far are kept, each written whole; "
            f"rerun the same realrecall {command} to resume from them"
        )
    return "interrupted: nothing was written half-way; an output not yet written is left as it was"


class OutputFile(ParamType):
    """The value of an option naming an output file, refused as typed when it can only be a folder
    (``-o newdir/``): once parsed as a ``Path`` the slash is gone and a file ``newdir`` would be
    written (``realrecall.files.check_file_name``)."""

    name = "path"

    def __init__(self, example: str) -> None:
        self.example = example

    def convert(self, value: Any, param: Any, ctx: Any) -> Path:
        if isinstance(value, Path):
            return value
        from realrecall.files import check_file_name

        label = param.opts[0] if param is not None and param.opts else "the output"
        check_file_name(str(value), label=label, example=self.example)
        return Path(value)


def output_option(*declarations: str, help: str, example: str) -> Any:
    """A ``typer.Option`` naming an output file (see ``OutputFile``); ``example`` is the file name a
    refusal suggests (``results.json``)."""
    return typer.Option(*declarations, help=help, click_type=OutputFile(example))


def _usage_error(exc: ClickException) -> int:
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # `realrecall gold` alone: show the help it asked for
        err.print(plain(message))
        return 2
    message = " ".join(str(message).split())
    # Errors raised before a command's context exists (a missing option value) point at the root help.
    command = ctx.command_path if ctx is not None else "realrecall"
    hint = f"; see '{command} --help'"
    error_line(f"{message}{hint}")
    return int(getattr(exc, "exit_code", 2) or 2)


# The --mlflow options of evaluate, calibrate and run (here, so those commands load no other's module).
MLFLOW_HELP = (
    "Log the figures, fingerprints, report and results to MLflow (MLFLOW_TRACKING_URI or --mlflow-uri)."
)
MLFLOW_URI_HELP = "MLflow tracking URI (default MLFLOW_TRACKING_URI); implies --mlflow."

# Help is click's plain text (rich_markup_mode=None): no help string is parsed as markup, and --help
# does not import typer's rich renderer (markdown, syntax highlighting: 60 ms of a 0.26 s --help).
# Lines run to the terminal's width up to 120 columns (click stops at 80 by default).
_PLAIN_HELP: dict[str, Any] = {"rich_markup_mode": None, "no_args_is_help": True}

app = typer.Typer(
    name="realrecall",
    help="How good is your retrieval really? Generate, evaluate and calibrate gold sets.",
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_OneLineErrors,
    context_settings={"max_content_width": 120},
    **_PLAIN_HELP,
)


def list_commands(summaries: Mapping[str, str]) -> None:
    """Register each top-level command by its name and summary alone, for a process that prints the
    root's help (or version) and exits: the listing reads the same without importing every command."""
    for name, summary in summaries.items():
        app.command(name, help=summary)(_listed_only)


def _listed_only() -> None:
    raise RuntimeError("a command registered for the listing alone was run; use realrecall.cli.main")


def command_group(name: str, help: str) -> typer.Typer:
    """A group of commands under ``realrecall`` (``realrecall gold ...``), with the root's plain help."""
    group = typer.Typer(help=help, **_PLAIN_HELP)
    app.add_typer(group, name=name)
    return group


def error_line(message: str) -> None:
    """``error: MESSAGE`` on stderr, the message printed as plain text."""
    err.print(Text.assemble(("error:", "bold red"), " ", plain(message)))


def warn(message: str) -> None:
    """``warning: MESSAGE`` on stderr, the message printed as plain text."""
    err.print(Text.assemble(("warning:", "yellow"), " ", plain(message)))


def note(message: str, style: str = "dim") -> None:
    """A progress or status line on stderr, the message printed as plain text."""
    err.print(plain(message, style=style))


def output_options(*names: str) -> Callable[[Command], Command]:
    """Mark a command's output options: while one of them is the standard output (``-o -``), what the
    command prints for people (tables, headlines, summaries) goes to stderr, so stdout holds that
    output alone.

        @app.command()
        @output_options("output", "per_query")
        def evaluate(...): ...
    """

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            from realrecall.files import is_standard_output

            if not any(is_standard_output(kwargs.get(name)) for name in names):
                return command(*args, **kwargs)
            out.file = sys.stderr
            try:
                return command(*args, **kwargs)
            finally:
                out.file = None  # type: ignore[assignment]  # rich: None is sys.stdout at print time

        return cast("Command", run)

    return decorate


def write_stdout(text: str) -> None:
    """Machine formats (JSON, markdown, TREC, JSONL) go to stdout byte-exact: no wrapping, no markup;
    only control characters are escaped (in JSON, as JSON escapes of the same value)."""
    sys.stdout.write(printable(text))
    sys.stdout.flush()


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Map the project's errors to one red line and their exit code; let bugs show a traceback.

    With ``--debug``, the traceback of a failure in the user's own code (the error's cause) is shown
    before the line.
    """
    try:
        yield
    except RealrecallError as exc:
        if _debug() and exc.__cause__ is not None:
            cause = exc.__cause__
            err.print(plain("".join(traceback.format_exception(type(cause), cause, cause.__traceback__))))
        error_line(str(exc))
        raise typer.Exit(exc.exit_code) from None


def _debug() -> bool:
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().meta.get(_DEBUG_KEY))


def split_list(value: str | None) -> list[str]:
    """Parse a comma-separated option (``--by type,language``) into its non-empty items."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def numbered(label: str, paths: Sequence[Path]) -> dict[str, Path]:
    """Labels for a repeatable file option in errors: ``--gold``, or ``--gold 1``, ``--gold 2``..."""
    if len(paths) == 1:
        return {label: paths[0]}
    return {f"{label} {number}": path for number, path in enumerate(paths, start=1)}


def is_interactive() -> bool:
    return sys.stderr.isatty()


def _print_version(value: bool) -> None:
    if value:
        write_stdout(f"realrecall {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show the traceback when your own code fails."),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """How good is your retrieval really? Generate, evaluate and calibrate gold sets."""
    ctx.meta[_DEBUG_KEY] = debug


def run_cli(argv: Sequence[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default: the process's arguments); exits with the command's code."""
    app(args=None if argv is None else list(argv), prog_name="realrecall")


class ProgressBar:
    """A rich progress bar on stderr for a long count (``with ProgressBar("retrieving") as update``).

    Shown only on a terminal and only once ``total`` reaches ``min_total``: a file or a pipe gets no
    bar, and a short run would only flicker. ``update(done, total)`` is what the library's progress
    callbacks take, so the library never knows about rich.
    """

    def __init__(self, label: str, *, min_total: int = 0) -> None:
        self._label = label
        self._min_total = min_total
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        return self

    def __call__(self, done: int, total: int) -> None:
        if total < self._min_total or not err.is_terminal:
            return
        if self._progress is None:
            if done >= total:
                return  # nothing left to show
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._progress = Progress(
                self._label,
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=total)
        if self._task is not None:
            self._progress.update(self._task, completed=done, total=total)
        if done >= total:
            # A finished count leaves the screen at once, so the bar that follows (retrieving after
            # embedding) takes its line instead of stacking under a full one until the command ends.
            self.__exit__()

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None


def emit_report(text: str, output: Path | None, *, headline: str) -> None:
    """A rendered report (JSON, Markdown, HTML, plain text) to stdout byte-exact, or written atomically
    to ``output`` with its headline on stdout and a note of where it went. Either way, control
    characters from data are escaped (``realrecall.printable``), whichever renderer made the text.
    ``-o -`` is stdout: the report alone, as without ``-o``."""
    from realrecall.files import atomic_write_text, is_standard_output

    if output is None or is_standard_output(output):
        write_stdout(text)
        return
    atomic_write_text(output, printable(text))
    out.print(plain(headline))
    note(f"report written to {output}", style="")


def check_format(output_format: str, formats: Sequence[str]) -> str:
    """``output_format`` when it is one of ``formats``, else the one-line error naming them."""
    if output_format not in formats:
        raise InputError(f"unknown format {output_format!r}", hint=f"choose from {', '.join(formats)}")
    return output_format

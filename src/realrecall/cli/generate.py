"""`realrecall generate`: synthetic questions from a corpus, written as a gold set.

Every line printed here is plain text (``rich.text.Text`` or the helpers of ``cli.application``): chunk ids,
paths and the endpoint's words are data, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.core import TyperCommand

from realrecall.cli.application import app, err, is_interactive, note, out, output_option, user_errors, warn
from realrecall.cli.console import plain
from realrecall.cli.settings_options import Group, named_as_options, settings_options
from realrecall.files import check_distinct, output_error

# Only the settings at start-up: the generator (asyncio, curate, numpy) loads when it runs.
from realrecall.generate.config import GenerateConfig

if TYPE_CHECKING:
    from realrecall.generate import CostEstimate, GenerateProgress, GenerateSummary
    from realrecall.llm import BatchStatus, ChatClient

STRATEGIES = "{strategies}"
"""Stands for each registered strategy and its summary in the help of ``--strategy``."""


class GenerateHelp(TyperCommand):
    """The generate command, whose ``--strategy`` help lists the strategy registry when help is shown
    (read at import, the registry would load the generator into every ``realrecall generate``)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from realrecall.generate.strategies import STRATEGIES as REGISTRY

        listed = "; ".join(f"{name}: {spec.summary}" for name, spec in REGISTRY.items())
        for param in self.params:
            text = getattr(param, "help", None)
            if isinstance(text, str) and STRATEGIES in text:
                param.help = text.replace(STRATEGIES, listed)  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


# The generate stage's options are GenerateConfig's fields; the strategies are named when help is shown.
GENERATE_OPTIONS = Group(GenerateConfig, "config", help_suffix={"strategy": f" Choose from {STRATEGIES}."})


@app.command("generate", cls=GenerateHelp)
@settings_options(GENERATE_OPTIONS)
def generate_command(
    corpus: Annotated[Path, typer.Option(help="chunks to write questions for (JSONL, BEIR folder, JSON)")],
    output: Annotated[
        Path,
        output_option(
            "--output", help="the synthetic gold set (JSONL); rerunning resumes it", example="synthetic.jsonl"
        ),
    ],
    *,
    config: GenerateConfig,
    dry_run: Annotated[bool, typer.Option(help="count requests, tokens and cost; send nothing")] = False,
) -> None:
    """Write synthetic questions for the chunks of a corpus (a gold set with origin "synthetic")."""
    with user_errors():
        from realrecall.corpus import load_corpus
        from realrecall.generate import estimate, generate

        check_paths(
            corpus,
            output,
            config.cache_path,
            config.style_examples,
            config.prompt,
            config.judge_prompt,
            config.type_rules,
        )
        chunks = load_corpus(corpus)
        if dry_run:
            render_estimate(estimate(chunks, output, config))
            return
        # The Batch API is asked by generate itself, at the settings' endpoint (--base-url).
        needs_client = (config.backend == "llm" or config.judge) and not config.batch_settings.batch
        client = make_client(config) if needs_client else None
        # The advice of a silent endpoint names --request-timeout, the option the client was made from.
        with progress_bar() as on_progress, named_as_options(GenerateConfig):
            summary = generate(
                chunks, output, config, client=client, progress=on_progress, batch_status=report_batch
            )
        render_summary(summary)


def check_paths(
    corpus: Path,
    output: Path,
    cache: Path | None,
    style_examples: Path | None,
    prompt: Path | None,
    judge_prompt: Path | None,
    type_rules: Path | None = None,
) -> None:
    """Before any work: an output that is one of the inputs would overwrite it (one line, exit 2)."""
    inputs = {
        "--corpus": corpus,
        "--style-examples": style_examples,
        "--prompt": prompt,
        "--judge-prompt": judge_prompt,
        "--type-rules": type_rules,
    }
    try:
        check_distinct(inputs, {"--output": output, "--cache": cache})
        if cache is not None:
            check_distinct({"--output": output}, {"--cache": cache})
    except OSError as exc:  # a path that cannot even be looked at (a name too long, ...)
        raise output_error(exc, exc.filename or output) from exc


def report_batch(status: BatchStatus) -> None:
    note(
        f"batch {status.id}: {status.status} ({status.counts.completed}/{status.counts.total} done, "
        f"{status.counts.failed} failed)",
        style="",
    )


def make_client(config: GenerateConfig) -> ChatClient:
    """The OpenAI client; the API key is read from the environment by the client, never from options.

    Deferred: openai loads only when a request is sent (a rerun answered from the cache sends none).
    """
    from realrecall.llm import DeferredChatClient

    return DeferredChatClient(config.llm_config())


@contextmanager
def progress_bar() -> Iterator[Callable[[GenerateProgress], None]]:
    bar = Progress(
        TextColumn("generating", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>7.1f} req/s", markup=False),
        TextColumn("tokens {task.fields[tokens_in]:,} in / {task.fields[tokens_out]:,} out", markup=False),
        TextColumn("{task.fields[failed]} failed", style="red", markup=False),
        TimeElapsedColumn(),
        console=err,
        disable=not is_interactive(),
        transient=False,
    )
    task = bar.add_task("generate", total=None, rate=0.0, tokens_in=0, tokens_out=0, failed=0)

    def update(event: GenerateProgress) -> None:
        elapsed = bar.tasks[0].elapsed or 0.0
        bar.update(
            task,
            completed=event.done,
            total=event.total,
            rate=event.requests / elapsed if elapsed > 0 else 0.0,
            tokens_in=event.tokens_in,
            tokens_out=event.tokens_out,
            failed=event.failed,
        )

    with bar:
        yield update


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4f}"


def _line(text: str) -> None:
    """A result line on stdout, as plain text."""
    out.print(plain(text))


def render_estimate(result: CostEstimate) -> None:
    _line(f"questions planned: {result.slots}, still to write: {result.pending}")
    _line(f"requests: {result.requests} (at most {result.max_requests} if every answer is rejected)")
    if result.screen_requests:
        screens = result.screen_requests
        _line(f"of which the model screen (--screen): {screens}, one per chunk not screened before")
    _line(f"tokens: ~{result.tokens_in:,} in, ~{result.tokens_out:,} out ({result.token_method})")
    _line(
        f"cost: {_money(result.cost)}" + ("" if result.cost is not None else " (give --price-in/--price-out)")
    )
    for index, strategy in enumerate(result.strategies):
        which = "this run" if index == 0 else f"--strategy {strategy.strategy}"
        _line(
            f"strategy {strategy.strategy} ({which}): {strategy.requests} requests, "
            f"~{strategy.tokens_in:,} tokens in, ~{strategy.tokens_out:,} out, cost {_money(strategy.cost)}"
        )


def render_summary(summary: GenerateSummary) -> None:
    _line(
        f"{summary.output_path}: {summary.total} questions for {summary.chunks} chunks "
        f"(added {summary.added}, kept {summary.kept}, removed {summary.removed}) in {summary.elapsed:.1f} s"
    )
    table = Table("stage", "sent", "cached", "retries", "regen", "tok in", "tok out", "cost")
    for stage in summary.stages:
        cells = (
            stage.name,
            str(stage.requests),
            str(stage.cached),
            str(stage.retries),
            str(stage.regenerations),
            f"{stage.tokens_in:,}",
            f"{stage.tokens_out:,}",
            _money(stage.cost),
        )
        table.add_row(*(plain(cell) for cell in cells))
    out.print(table)
    for stage in summary.stages:
        if stage.failures:
            reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(stage.failures.items()))
            _line(f"{stage.name} failures: {reasons}")
    if summary.screened:
        reasons = ", ".join(f"{reason} {count}" for reason, count in summary.screened_reasons.items())
        _line(
            f"chunks skipped by the screen: {len(summary.screened)} ({reasons}); see {summary.summary_path}"
        )
    if summary.pairs:
        pairs, not_made = summary.pairs, summary.pairs["not_made"]
        _line(
            f"questions over two chunks: {pairs['made']} made of {pairs['planned']} planned, "
            f"{pairs['drawn']} drawn (no related chunk {not_made['no_partner']}, "
            f"not kept {not_made['not_kept']})"
        )
    if summary.filtered:
        _line("filtered: " + ", ".join(f"{name} {count}" for name, count in sorted(summary.filtered.items())))
    if summary.missing:
        worst = sorted(summary.shortfall.items(), key=lambda item: (-item[1], item[0]))[:5]
        warn(
            f"{summary.missing} of {summary.planned} questions missing (by chunk: "
            + ", ".join(f"{chunk} {count}" for chunk, count in worst)
            + (", ..." if len(summary.shortfall) > 5 else "")
            + f"); see {summary.failures_path}"
        )
    for warning in summary.warnings:
        warn(warning)

"""`realrecall generate`: synthetic questions from a corpus, written as a gold set.

Every line printed here is plain text (``rich.text.Text`` or the helpers of ``cli.application``): chunk ids,
paths and the endpoint's words are data, never markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.core import TyperCommand

from realrecall.cli.application import app, err, is_interactive, note, out, user_errors, warn
from realrecall.cli.console import plain
from realrecall.errors import InputError
from realrecall.files import check_distinct, output_error

# Only the question types at start-up: the generator (asyncio, curate, numpy) loads when it runs.
from realrecall.generate.question_types import QUESTION_TYPES

if TYPE_CHECKING:
    from realrecall.generate import CostEstimate, GenerateConfig, GenerateProgress, GenerateSummary
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


TYPES_HELP = "question types with weights, e.g. lookup=2,conceptual=1; choose from " + ", ".join(
    QUESTION_TYPES
)


@app.command("generate", cls=GenerateHelp)
def generate_command(
    corpus: Annotated[Path, typer.Option(help="chunks to write questions for (JSONL, BEIR folder, JSON)")],
    output: Annotated[Path, typer.Option(help="the synthetic gold set (JSONL); rerunning resumes it")],
    backend: Annotated[
        str, typer.Option(help="llm (a chat model) or extractive (offline, no model)")
    ] = "llm",
    model: Annotated[str, typer.Option(help="chat model name")] = "gpt-4o-mini",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (default: env)")] = None,
    temperature: Annotated[
        float, typer.Option(help="sampling temperature of the chat model (0: its likeliest words)")
    ] = 0.7,
    max_tokens: Annotated[int, typer.Option(help="answer token limit per request")] = 200,
    prompt: Annotated[Path | None, typer.Option(help="a prompt file replacing the built-in one")] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            help=f"how the llm backend writes a question ({STRATEGIES}); default: situation, or direct "
            "with --prompt"
        ),
    ] = None,
    forms: Annotated[
        str | None,
        typer.Option(
            help="query forms with weights, e.g. keywords=2,question=2,typo=1 (also statement); default: "
            "measured from --style-examples, else keywords=2,question=2,typo=1"
        ),
    ] = None,
    types: Annotated[str, typer.Option(help=TYPES_HELP)] = "lookup=2,conceptual=1",
    languages: Annotated[
        str | None,
        typer.Option(
            help="keep the chunks in these languages, e.g. de,en (default: every chunk, each question in "
            "its chunk's language); with --cross-language the questions' languages, with weights"
        ),
    ] = None,
    cross_language: Annotated[
        bool, typer.Option(help="ask in the --languages mix whatever each chunk's language")
    ] = False,
    screen: Annotated[
        bool | None,
        typer.Option(
            "--screen/--no-screen",
            help="skip chunks no user would ask about: rules by default; --screen adds one model request "
            "per chunk, --no-screen turns the rules off",
            show_default=False,
        ),
    ] = None,
    multi_chunk: Annotated[
        float, typer.Option(help="share of questions over two related chunks (gold holds both), e.g. 0.2")
    ] = 0.0,
    persona: Annotated[list[str] | None, typer.Option(help="who asks (repeatable)")] = None,
    per_chunk: Annotated[int, typer.Option(help="questions per chunk")] = 1,
    sample: Annotated[
        float | None,
        typer.Option(help="sample the chunks: a share (0.05) or a count (50, a rate kept by later runs)"),
    ] = None,
    stratify_by: Annotated[str, typer.Option(help="metadata field the sample is stratified by")] = "document",
    seed: Annotated[
        int,
        typer.Option(
            help="seed of every random choice: the sample, each question's type, language and form, "
            "the style examples"
        ),
    ] = 0,
    shard: Annotated[str | None, typer.Option(help="i/n: this runner's share of the chunks")] = None,
    style_examples: Annotated[Path | None, typer.Option(help="real questions (gold JSONL) to match")] = None,
    n_style_examples: Annotated[int, typer.Option(help="how many real questions to show")] = 3,
    type_rules: Annotated[
        Path | None, typer.Option(help="type and form rules (TOML/JSON) the real set was typed by")
    ] = None,
    max_overlap: Annotated[
        float | None, typer.Option(help="drop/regenerate above this lexical overlap")
    ] = None,
    near_duplicate: Annotated[float, typer.Option(help="Jaccard bound for near-duplicates; 0 = off")] = 0.8,
    judge: Annotated[bool, typer.Option(help="check answerability with an LLM call")] = False,
    judge_model: Annotated[str | None, typer.Option(help="model of the judge (default: --model)")] = None,
    judge_prompt: Annotated[Path | None, typer.Option(help="a prompt file for the judge")] = None,
    max_attempts: Annotated[int, typer.Option(help="answers asked per question before giving up")] = 3,
    concurrency: Annotated[int, typer.Option(help="requests in flight")] = 8,
    price_in: Annotated[float | None, typer.Option(help="price per million input tokens")] = None,
    price_out: Annotated[float | None, typer.Option(help="price per million output tokens")] = None,
    cache: Annotated[Path | None, typer.Option(help="answer cache (default: beside --output)")] = None,
    prune: Annotated[
        bool, typer.Option(help="drop cached answers this run does not plan (other shards, old parameters)")
    ] = False,
    dry_run: Annotated[bool, typer.Option(help="count requests, tokens and cost; send nothing")] = False,
    batch: Annotated[bool, typer.Option(help="use the Batch API (cheaper, slower; resumable)")] = False,
    poll_interval: Annotated[float, typer.Option(help="seconds between batch status checks")] = 30.0,
    batch_timeout: Annotated[
        float | None, typer.Option(help="stop waiting after this many seconds (rerun resumes)")
    ] = None,
    request_timeout: Annotated[
        float,
        typer.Option(help="seconds one model request may take before it is retried (each of 6 attempts)"),
    ] = 60.0,
) -> None:
    """Write synthetic questions for the chunks of a corpus (a gold set with origin "synthetic")."""
    with user_errors():
        from realrecall.corpus import load_corpus
        from realrecall.generate import (
            BatchOptions,
            GenerateConfig,
            estimate,
            generate,
            parse_shard,
            parse_weights,
        )

        check_paths(corpus, output, cache, style_examples, prompt, judge_prompt, type_rules)
        if not (math.isfinite(request_timeout) and request_timeout > 0):
            raise InputError(
                f"--request-timeout must be a number of seconds > 0, got {request_timeout:g}",
                hint="e.g. --request-timeout 30",
            )
        config = GenerateConfig(
            backend=backend,
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            prompt=prompt,
            strategy=strategy,
            forms=None if forms is None else parse_weights(forms, what="query form"),
            types=parse_weights(types, what="question type", known=QUESTION_TYPES),
            languages={} if languages is None else parse_weights(languages, what="language"),
            cross_language=cross_language,
            screen="rules" if screen is None else "model" if screen else "off",
            multi_chunk=multi_chunk,
            personas=tuple(persona or ()),
            per_chunk=per_chunk,
            sample=int(sample) if sample is not None and sample >= 1 and sample.is_integer() else sample,
            stratify_by=stratify_by,
            seed=seed,
            shard=None if shard is None else parse_shard(shard),
            style_examples=style_examples,
            n_style_examples=n_style_examples,
            max_overlap=max_overlap,
            near_duplicate=near_duplicate or None,
            judge=judge,
            judge_model=judge_model,
            judge_prompt=judge_prompt,
            max_attempts=max_attempts,
            concurrency=concurrency,
            price_in=price_in,
            price_out=price_out,
            cache_path=cache,
            request_timeout=request_timeout,
            type_rules=type_rules,
            prune=prune,
        )
        chunks = load_corpus(corpus)
        if dry_run:
            render_estimate(estimate(chunks, output, config))
            return
        needs_model = backend == "llm" or judge
        batch_options = None
        client = None
        if needs_model and batch:
            batch_options = BatchOptions(
                llm=config.llm_config(base_url),
                poll_interval=poll_interval,
                timeout=batch_timeout,
                on_status=report_batch,
            )
        elif needs_model:
            client = make_client(config, base_url)
        with progress_bar() as on_progress:
            summary = generate(
                chunks, output, config, client=client, progress=on_progress, batch=batch_options
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


def make_client(config: GenerateConfig, base_url: str | None) -> ChatClient:
    """The OpenAI client; the API key is read from the environment by the client, never from options."""
    from realrecall.llm import OpenAIChatClient  # openai loads only when a model is called

    return OpenAIChatClient(config.llm_config(base_url))


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

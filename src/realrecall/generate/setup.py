"""Everything a generation run derives from its config before sending anything (the dry run too).

``prepare`` reads the prompt and style files, prepares the strategy (``generate.strategies``),
chooses the chunks (sample, shard, the screen's rules, languages), pairs them (``multi_chunk``) and
plans one slot per question; ``screen_with_model`` drops the chunks the model screen skips;
``check_paths`` refuses, before any work, an output that is one of the inputs.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError, OutputError
from realrecall.files import check_distinct, check_file_output, output_error
from realrecall.generate.analysis_cache import AnalysisCache
from realrecall.generate.config import GenerateConfig
from realrecall.generate.forms import FormPlan, plan_forms
from realrecall.generate.languages import read_chunk_language
from realrecall.generate.model_screen import model_screen
from realrecall.generate.pairs import pair_chunks
from realrecall.generate.planner import (
    Slot,
    chunk_language,
    inclusion_probabilities,
    plan_slots,
    sample_rate,
    select_chunks,
)
from realrecall.generate.screening import screen_reason
from realrecall.generate.store import GenerationStore, sidecar_paths
from realrecall.generate.strategies import find_strategy
from realrecall.generate.strategy import Strategy
from realrecall.generate.style import StyleExamples, format_style_examples, load_style_examples
from realrecall.generate.summary import StageCounter
from realrecall.generate.templates import PromptTemplate, builtin_prompt, load_prompt
from realrecall.labels import TypeRules, default_type_rules, load_type_rules
from realrecall.llm.types import ChatClient

__all__ = ["Setup", "check_paths", "prepare", "remembered_sample_rate", "screen_with_model"]


@dataclass(frozen=True)
class Setup:
    """Everything a run derives from its config before sending anything (shared with ``estimate``)."""

    config: GenerateConfig
    slots: tuple[Slot, ...]
    chunks: int
    strategy: Strategy | None
    """How the llm backend writes questions, its prompts read (None: the extractive backend)."""
    feedback_prompt: PromptTemplate
    judge_prompt: PromptTemplate | None
    style: StyleExamples
    style_text: str
    generator: dict[str, Any]
    inclusion: Mapping[str, float] = field(default_factory=dict)
    """Chunk id -> probability of being in the sample (absent: 1, no sample)."""
    rules: TypeRules = field(default_factory=default_type_rules)
    """The rules that give every question its type and form (the ones the real set was typed by)."""
    sample_rate: float | None = None
    """The share of the chunks the sample keeps (None: no sample); see ``generate.planner``."""
    forms: FormPlan | None = None
    """Each slot's query form and length (llm backend; ``generate.forms``)."""
    screened: Mapping[str, str] = field(default_factory=dict)
    """Chunk id -> why it was skipped (``generate.screening.REASONS``, or the model screen's reason)."""
    relations: Mapping[str, str] = field(default_factory=dict)
    """Chunk id -> how its partner is related (``same_document``, ``similar``; ``generate.pairs``)."""
    analysis: AnalysisCache = field(default_factory=AnalysisCache)
    """What was read off the chunks and questions, kept for the next run (``generate.analysis_cache``)."""


def remembered_sample_rate(output_path: str | Path, config: GenerateConfig) -> float | None:
    """The sample rate an earlier run over this output used for the same ``--sample`` count, if any.

    A count is turned into a rate once, at the first run, and kept: recomputed over a corpus that
    has grown, it would drop chunks sampled before (and the questions paid for them).
    """
    if config.sample is None or config.sample < 1:
        return None
    path = sidecar_paths(Path(output_path), config.cache_path)["summary"]
    try:
        summary = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None  # no earlier run (or an unreadable summary): the rate is set now
    earlier = summary.get("config") if isinstance(summary, dict) else None
    if not isinstance(earlier, dict) or earlier.get("sample") != config.sample:
        return None
    rate = summary.get("sample_rate")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0.0 < rate <= 1.0:
        return None
    return float(rate)


def prepare(
    corpus: Corpus,
    config: GenerateConfig,
    *,
    remembered_rate: float | None = None,
    analysis: AnalysisCache | None = None,
) -> Setup:
    """Read the prompt and style files, choose the chunks and plan the slots (no request, no write).

    ``remembered_rate``: the sample rate of an earlier run over the output (``remembered_sample_rate``);
    ``analysis``: the screen verdicts and languages an earlier run read off the chunks (read again for
    the chunks it lacks, and added to it).
    """
    analysis = AnalysisCache() if analysis is None else analysis
    strategy = None
    if config.effective_strategy is not None:  # the llm backend, and only it, has a strategy
        strategy = find_strategy(config.effective_strategy).prepare(config)
    feedback_prompt = builtin_prompt("regeneration_feedback")
    judge_prompt = None
    if config.judge:
        judge_prompt = (
            load_prompt(config.judge_prompt) if config.judge_prompt else builtin_prompt("answerability_judge")
        )
    style = StyleExamples()
    if config.style_examples is not None and strategy is not None:
        style = load_style_examples(config.style_examples, config.n_style_examples, seed=config.seed)
    forms = None
    generator: dict[str, Any] = {"backend": "extractive", "version": 1}
    if strategy is not None:
        forms = plan_forms(config.forms, config.style_examples, load_type_rules(config.type_rules))
        generator = _llm_generator(config, strategy, feedback_prompt, style, forms)
    rate = sample_rate(config, len(corpus), remembered_rate)
    chunks = select_chunks(corpus, config, rate)
    if not chunks:
        raise InputError(
            "no chunk selected: the corpus, sample or shard is empty",
            path=corpus.path,
            hint="check --sample and --shard",
        )
    chunks, screened, languages = _screen(chunks, config, analysis)
    if not chunks:
        reasons = Counter(screened.values())
        raise InputError(
            "every chunk selected was skipped by the screen ("
            + ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
            + ")",
            path=corpus.path,
            hint="--no-screen turns the rules off; --languages names the languages to keep",
        )
    pairing = None
    if strategy is not None and config.multi_chunk:
        pairing = pair_chunks(list(corpus), chunks)
    return Setup(
        config=config,
        slots=tuple(
            plan_slots(
                chunks,
                config,
                generator,
                languages=languages,
                partners=None if pairing is None else pairing.partners,
            )
        ),
        chunks=len(chunks),
        strategy=strategy,
        feedback_prompt=feedback_prompt,
        judge_prompt=judge_prompt,
        style=style,
        style_text=format_style_examples(style),
        generator=generator,
        inclusion={k: p for k, p in inclusion_probabilities(corpus, config, rate).items() if p < 1.0},
        rules=load_type_rules(config.type_rules),
        sample_rate=rate,
        forms=forms,
        screened=screened,
        relations={} if pairing is None else pairing.relations,
        analysis=analysis,
    )


def _screen(
    chunks: list[Chunk], config: GenerateConfig, analysis: AnalysisCache
) -> tuple[list[Chunk], dict[str, str], dict[str, str]]:
    """The chunks the rules and ``--languages`` keep, why the others were skipped, and each kept
    chunk's language (see ``generate.screening`` and ``generate.languages``); what ``analysis`` holds
    of a chunk is read from it, not from the chunk."""
    screened: dict[str, str] = {}
    if config.screen != "off":
        kept = []
        for chunk in chunks:
            reason = analysis.chunk(chunk, "screen", screen_reason)
            if reason is None:
                kept.append(chunk)
            else:
                screened[chunk.id] = reason
        chunks = kept
    if config.cross_language and config.backend == "llm":
        return chunks, screened, {}  # every question in a language drawn from the weights
    detected = {
        chunk.id: chunk_language(chunk) or analysis.chunk(chunk, "language", read_chunk_language)
        for chunk in chunks
    }
    # A chunk whose language cannot be told (a table, a short line) is taken to be in the corpus's.
    main = Counter(language for language in detected.values() if language).most_common(1)
    fallback = main[0][0] if main else "en"
    languages = {chunk_id: language or fallback for chunk_id, language in detected.items()}
    if config.languages and not config.cross_language:
        wanted = [chunk for chunk in chunks if languages[chunk.id] in config.languages]
        for chunk in chunks:
            if languages[chunk.id] not in config.languages:
                screened[chunk.id] = "language_not_requested"
        chunks = wanted
    return chunks, screened, languages


async def screen_with_model(
    setup: Setup, store: GenerationStore, client: ChatClient | None, counter: StageCounter
) -> tuple[Setup, list[dict[str, Any]]]:
    """``setup`` without the chunks the model screen skips, and the screen's new cache entries."""
    chunks = list({slot.chunk.id: slot.chunk for slot in setup.slots}.values())
    skipped, entries = await model_screen(
        chunks,
        client=client,
        cache=store.cache,
        template=builtin_prompt("chunk_screen"),
        config=setup.config,
        counter=counter,
    )
    if not skipped:
        return setup, entries
    slots = tuple(slot for slot in setup.slots if slot.chunk.id not in skipped)
    if not slots:
        raise InputError(
            f"the model screen skipped every chunk ({len(skipped)})",
            hint="see its reasons in the summary; leave --screen out to write questions anyway",
        )
    screened = {**setup.screened, **{chunk_id: f"model_screen: {why}" for chunk_id, why in skipped.items()}}
    return replace(setup, slots=slots, chunks=setup.chunks - len(skipped), screened=screened), entries


def check_paths(corpus: Corpus, output_path: str | Path, config: GenerateConfig) -> None:
    """Refuse, before any work, files the run would write that are its inputs or each other.

    An output equal to the corpus, the style examples or a prompt (same path, symlink or hard link)
    would overwrite it; a cache equal to the output would interleave two logs in one file.
    """
    output = Path(output_path)
    sidecars = sidecar_paths(output, config.cache_path)
    corpus_path = Path(corpus.path) if corpus.path and Path(corpus.path).exists() else None
    inputs = {
        "the corpus": corpus_path,
        "the style examples": config.style_examples,
        "the prompt": config.prompt,
        "the situation prompt": config.prompt_situation,
        "the query prompt": config.prompt_query,
        "the judge prompt": config.judge_prompt,
        "the type rules": config.type_rules,
    }
    outputs: dict[str, str | Path | None] = {
        "the output": output,
        "the cache": sidecars["cache"],
        "the failures file": sidecars["failures"],
        "the summary": sidecars["summary"],
    }
    try:
        check_distinct(inputs, outputs)
        check_distinct({"the output": output}, {"the cache": sidecars["cache"]})
    except OSError as exc:  # a path that cannot even be looked at (a name too long, ...)
        raise output_error(exc, exc.filename or output) from exc
    for label in ("the output", "the cache"):
        check_file_output(outputs[label] or output, label=label, why=_READ_BACK)
    _check_name_lengths(output, sidecars.values())


_READ_BACK = "generate reads its output and cache back to resume, and keeps files beside them"


# An atomic rewrite of NAME writes ".NAME.<8 random characters>.tmp" beside it first.
_TEMP_NAME_EXTRA = len("..12345678.tmp")


def _check_name_lengths(output: Path, paths: Iterable[Path]) -> None:
    """A name that fits while the output fits but not for a file kept beside it would fail at the
    end of a run (the summary, the final reorder): refused up front instead."""
    folder = next(
        (parent for parent in (output.parent, *output.parent.parents) if parent.is_dir()), Path(".")
    )
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    for path in (output, *paths):
        if len(os.fsencode(path.name)) + _TEMP_NAME_EXTRA > limit:
            raise OutputError(
                f"the file name is too long for the files kept beside it ({path.name})",
                path=output,
                hint="use a shorter name",
            )


def _llm_generator(
    config: GenerateConfig,
    strategy: Strategy,
    feedback: PromptTemplate,
    style: StyleExamples,
    forms: FormPlan,
) -> dict[str, Any]:
    """What writes an llm run's questions (part of every slot's key): the model and its parameters,
    the feedback prompt, the style examples, the forms, the strategy and its prompts."""
    return {
        "backend": "llm",
        "model": config.model,
        "feedback_sha256": feedback.sha256,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "style_example_ids": list(style.ids),
        **forms.describe(),
        "strategy": config.effective_strategy,
        **strategy.describe(),
    }

"""The generation run: plan the slots, settle each one (ask, validate, filter, keep), summarise.

A slot is settled when a question is kept, when its attempts (``max_attempts``) are spent on invalid
or filtered answers (a *shortfall*), or when the endpoint fails for good (a *failure*; not cached, so
the next run tries again). Filters, in order: the answer's validity, lexical overlap above
``max_overlap``, near-duplicate of a kept question, and (``judge``) answerability. A retriever never
takes part: filtering on what a retriever finds would keep only the questions it finds.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from realrecall._version import __version__
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import Deferred, InputError, LLMError, OutputError, RealrecallError
from realrecall.files import atomic_write_text, check_distinct, output_error
from realrecall.generate.anchors import question_evidence
from realrecall.generate.asking import RequestCollector
from realrecall.generate.batch import BatchOptions, BatchTotals, LeftoverClient, answer_in_batches
from realrecall.generate.config import GenerateConfig
from realrecall.generate.dedup import NearDuplicateIndex
from realrecall.generate.extractive import ExtractiveQuestions
from realrecall.generate.forms import FormPlan, plan_forms
from realrecall.generate.languages import detect_chunk_language, wrong_language
from realrecall.generate.pairs import pair_chunks
from realrecall.generate.planner import (
    Slot,
    inclusion_probabilities,
    plan_slots,
    sample_rate,
    select_chunks,
)
from realrecall.generate.screening import model_screen, screen_chunks
from realrecall.generate.sources import AnswerabilityJudge, Candidate, QuestionSource, judge_description
from realrecall.generate.store import GenerationStore, sidecar_paths
from realrecall.generate.strategies import find_strategy
from realrecall.generate.strategy import SourceContext, Strategy
from realrecall.generate.style import StyleExamples, format_style_examples, load_style_examples
from realrecall.generate.summary import GenerateProgress, GenerateSummary, StageCounter
from realrecall.generate.templates import PromptTemplate, builtin_prompt, load_prompt
from realrecall.gold import GoldQuery
from realrecall.labels import TypeRules, default_type_rules, load_type_rules
from realrecall.llm.types import ChatClient
from realrecall.provenance import PromptRef, Provenance, TokenUsage
from realrecall.text_features import identifier_overlap, lexical_overlap

__all__ = ["Setup", "agenerate", "check_paths", "generate", "prepare", "still_valid"]

ProgressCallback = Callable[[GenerateProgress], None]


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


def prepare(corpus: Corpus, config: GenerateConfig, *, remembered_rate: float | None = None) -> Setup:
    """Read the prompt and style files, choose the chunks and plan the slots (no request, no write).

    ``remembered_rate``: the sample rate of an earlier run over the output (``remembered_sample_rate``).
    """
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
    chunks, screened, languages = _screen(chunks, config)
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
    )


def _screen(
    chunks: list[Chunk], config: GenerateConfig
) -> tuple[list[Chunk], dict[str, str], dict[str, str]]:
    """The chunks the rules and ``--languages`` keep, why the others were skipped, and each kept
    chunk's language (see ``generate.screening`` and ``generate.languages``)."""
    screened: dict[str, str] = {}
    if config.screen != "off":
        chunks, screened = screen_chunks(chunks)
    if config.cross_language and config.backend == "llm":
        return chunks, screened, {}  # every question in a language drawn from the weights
    detected = {chunk.id: detect_chunk_language(chunk) for chunk in chunks}
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


async def _screen_with_model(
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


def generate(
    corpus: Corpus,
    output_path: str | Path,
    config: GenerateConfig,
    *,
    client: ChatClient | None = None,
    progress: ProgressCallback | None = None,
    batch: BatchOptions | None = None,
) -> GenerateSummary:
    """Write synthetic questions for ``corpus`` to ``output_path`` (a gold set, origin ``synthetic``).

    Resumes and updates an earlier output at the same path: questions already written for unchanged
    chunks are kept without a request, those of deleted or changed chunks are removed, and only the
    missing ones are asked for. ``client`` is required by the ``llm`` backend and by ``judge``, unless
    ``batch`` is given: then the answers are asked through the Batch API (see ``generate.batch``).
    Raises RealrecallError when no question at all could be kept (after writing the summary file).
    """

    async def run_and_close() -> GenerateSummary:
        try:
            return await agenerate(corpus, output_path, config, client=client, progress=progress, batch=batch)
        finally:
            # The event loop made here ends with this call: close the connections opened in it.
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(run_and_close())


_CLIENT_HINT = "pass client=OpenAIChatClient(LLMConfig()), or use backend='extractive' without judge"


async def agenerate(
    corpus: Corpus,
    output_path: str | Path,
    config: GenerateConfig,
    *,
    client: ChatClient | None = None,
    progress: ProgressCallback | None = None,
    batch: BatchOptions | None = None,
) -> GenerateSummary:
    """``generate`` for callers already inside an event loop."""
    started = time.monotonic()
    if client is None and batch is None and (config.backend == "llm" or config.judge):
        raise InputError(
            f"the {'judge' if config.backend != 'llm' else config.backend!r} stage needs a chat client",
            hint=_CLIENT_HINT,
        )
    check_paths(corpus, output_path, config)
    setup = prepare(corpus, config, remembered_rate=remembered_sample_rate(output_path, config))
    store = GenerationStore(output_path, config.cache_path)
    screening = StageCounter("screen")
    try:
        store.load()
        screen_entries: list[dict[str, Any]] = []
        if config.screen == "model":
            setup, screen_entries = await _screen_with_model(setup, store, client, screening)
        kept, removed = store.plan(
            (slot.key for slot in setup.slots), keep=lambda r: still_valid(r, setup), prune=config.prune
        )
        store.open()
        for entry in screen_entries:  # asked before the store could take them (the plan needed them)
            store.add_cache(entry)
        totals = None
        if batch is not None:
            totals = await _answer_in_batches(setup, store, batch)
            client = LeftoverClient(totals.refused_requests)
        run = _Run(setup, store, client, progress)
        if config.screen == "model":
            run.screening = screening
        await run.settle_all()
        if totals is not None:
            run.absorb(totals)
    except BaseException:
        store.abort()
        raise
    warning = store.close(order=[slot.key for slot in setup.slots])
    summary = run.summary(
        store,
        kept=kept,
        removed=removed,
        elapsed=time.monotonic() - started,
        warnings=tuple(w for w in (warning, run.shortfall_warning()) if w is not None),
    )
    atomic_write_text(
        store.summary_path,
        json.dumps(
            {
                "realrecall_version": __version__,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "config": _config_record(config),
                **summary.to_dict(),  # the generator's description first, as before
                # What a --sample count stood for at the first run; later runs keep it.
                "sample_rate": setup.sample_rate,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
    )
    if summary.total == 0:
        rejections = Counter(summary.filtered)
        for stage in summary.stages:
            rejections.update(stage.failures)
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(rejections.items())) or "none"
        raise RealrecallError(
            f"no question was kept ({summary.planned} planned; rejections {reasons}); "
            f"see {store.failures_path} and {store.summary_path}"
        )
    return summary


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
    _check_name_lengths(output, sidecars.values())


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


async def _answer_in_batches(setup: Setup, store: GenerationStore, options: BatchOptions) -> BatchTotals:
    async def collect() -> RequestCollector:
        collector = RequestCollector()
        await _Run(setup, store, collector, None, write=False).settle_all()
        return collector

    attempts = setup.config.max_attempts
    rounds = attempts * (attempts + 1 if setup.config.judge else 1) + 1
    if setup.strategy is not None:
        rounds *= setup.strategy.calls  # one batch per request of an attempt (situation first: two)
    return await answer_in_batches(store, options, collect, max_rounds=rounds)


def still_valid(record: dict[str, Any], setup: Setup) -> bool:
    """Whether a record written earlier passes today's filters.

    A tightened ``max_overlap`` or a judge switched on (or changed) since the record was written
    sends its question back through the filters: the cached answer is replayed, and only what is
    new (the verdict, or the next attempt) is asked for.
    """
    provenance = record.get("provenance") or {}
    overlap = provenance.get("overlap")
    bound = setup.config.max_overlap
    if bound is not None and isinstance(overlap, int | float) and overlap > bound:
        return False
    # A question kept before answers' languages were checked, in another language than asked for.
    language, query = record.get("language"), record.get("query")
    checked = setup.strategy is not None and isinstance(language, str) and isinstance(query, str)
    if checked and wrong_language(str(query), str(language), setup.config.languages):
        return False
    if setup.judge_prompt is not None:
        judged = provenance.get("judge") or {}
        wanted = judge_description(setup.judge_prompt, setup.config)
        return all(judged.get(name) == value for name, value in wanted.items())
    return True


def _searchable(slot: Slot) -> str:
    """What a slot's question is compared with: its chunk's searchable text, and its partner's."""
    if slot.partner is None:
        return slot.chunk.searchable_text()
    return f"{slot.chunk.searchable_text()}\n{slot.partner.searchable_text()}"


def _config_record(config: GenerateConfig) -> dict[str, Any]:
    record = asdict(config)
    for name, value in record.items():
        if isinstance(value, Path):
            record[name] = str(value)
    record["shard"] = None if config.shard is None else str(config.shard)
    return record


class _Run:
    """The mutable state of one run: counters, the near-duplicate index, the workers."""

    def __init__(
        self,
        setup: Setup,
        store: GenerationStore,
        client: ChatClient | RequestCollector | None,
        progress: ProgressCallback | None,
        *,
        write: bool = True,
    ) -> None:
        self.setup = setup
        self.write = write
        self.config = setup.config
        self.store = store
        self.progress = progress
        self.generation = StageCounter("generation")
        self.judging = StageCounter("judge")
        self.screening: StageCounter | None = None  # the model screen's figures (--screen)
        self.source: QuestionSource = ExtractiveQuestions(self.config)
        if setup.strategy is not None and setup.forms is not None:  # the llm backend (it has both)
            context = SourceContext(
                client=client,
                config=self.config,
                store=store,
                counter=self.generation,
                style_examples=setup.style_text,
                feedback=setup.feedback_prompt,
                forms=setup.forms,
            )
            self.source = setup.strategy.source(context)
        self.judge: AnswerabilityJudge | None = None
        if setup.judge_prompt is not None:  # judge on (prepare reads the judge prompt for nothing else)
            if client is None:
                raise InputError("the judge stage needs a chat client", hint=_CLIENT_HINT)
            self.judge = AnswerabilityJudge(client, setup.judge_prompt, self.config, store, self.judging)
        self.duplicates = NearDuplicateIndex(self.config.near_duplicate or 1.0)
        for key, record in store.records.items():
            self.duplicates.add(key, record["query"], record.get("language"))
        self.filtered: Counter[str] = Counter()
        self.shortfall: Counter[str] = Counter()
        self.pending = [slot for slot in setup.slots if slot.key not in store.records]
        self.done = len(setup.slots) - len(self.pending)
        self.added = 0
        self.failed = 0
        self.exhausted = 0  # slots whose every attempt was rejected (not endpoint failures)

    async def settle_all(self) -> None:
        queue: asyncio.Queue[Slot] = asyncio.Queue()
        for slot in self.pending:
            queue.put_nowait(slot)

        async def worker() -> None:
            while True:
                try:
                    slot = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await self.settle(slot)
                self.done += 1
                self.report()

        workers = [
            asyncio.ensure_future(worker()) for _ in range(min(self.config.concurrency, len(self.pending)))
        ]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            # One worker's failure (a full disk) stops the others now, not after every queued slot.
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise

    def report(self) -> None:
        if self.progress is None:
            return
        self.progress(
            GenerateProgress(
                done=self.done,
                total=len(self.setup.slots),
                kept=len(self.store.records),
                failed=self.failed,
                requests=self.generation.requests + self.judging.requests,
                tokens_in=self.generation.tokens_in + self.judging.tokens_in,
                tokens_out=self.generation.tokens_out + self.judging.tokens_out,
            )
        )

    async def settle(self, slot: Slot) -> None:
        reasons: list[str] = []
        spent = [0, 0]
        rejected: tuple[Candidate, str] | None = None
        for attempt in range(self.config.max_attempts):
            if attempt:
                self.generation.regenerations += 1
            stage = self.generation
            try:
                candidate = await self.source.propose(slot, attempt, rejected)
                spent[0] += candidate.usage.prompt_tokens
                spent[1] += candidate.usage.completion_tokens
                stage = self.judging
                outcome = await self.examine(slot, candidate, spent)
            except Deferred:
                return  # a batch will answer; a later round settles the slot
            except LLMError as exc:
                reason = getattr(exc, "reason", None) or "llm_error"
                stage.failures[reason] += 1
                self.fail(slot, "failed", reason, [*reasons, reason], message=str(exc))
                return
            if outcome is None:
                return
            reasons.append(outcome)
            rejected = (candidate, outcome)
        self.fail(slot, "shortfall", reasons[-1], reasons)

    async def examine(self, slot: Slot, candidate: Candidate, spent: list[int]) -> str | None:
        """Keep the candidate (returns None) or return the reason it was rejected."""
        if candidate.question is None:
            reason = candidate.failure or "invalid"
            self.generation.failures[reason] += 1
            return reason
        question = candidate.question
        strategy = self.setup.strategy
        own = None if strategy is None else strategy.examine(slot, candidate)
        if own is not None:
            self.filtered[own] += 1
            return own
        if strategy is not None and wrong_language(question, slot.language, self.config.languages):
            self.filtered["wrong_language"] += 1
            return "wrong_language"
        overlap = lexical_overlap(question, _searchable(slot), slot.language)
        if self.config.max_overlap is not None and overlap > self.config.max_overlap:
            self.filtered["overlap"] += 1
            return "overlap"
        if self.near_duplicate(question, slot.language):
            return "near_duplicate"
        judged: dict[str, Any] | None = None
        if self.judge is not None:
            verdict, failure, usage = await self.judge.check(slot, question)
            spent[0] += usage.prompt_tokens
            spent[1] += usage.completion_tokens
            if verdict is None:
                return f"judge_{failure}"
            if not verdict.answerable:
                self.filtered["unanswerable"] += 1
                return "unanswerable"
            judged = {**self.judge.describe(), "answerable": True, "reason": verdict.reason}
            # Another worker may have kept a near-duplicate while the judge was asked.
            if self.near_duplicate(question, slot.language):
                return "near_duplicate"
        self.keep(slot, candidate, question, overlap, judged, spent)
        return None

    def near_duplicate(self, question: str, language: str) -> bool:
        """Whether ``question`` nearly repeats a kept one (counted as filtered when it does)."""
        if self.config.near_duplicate is None or self.duplicates.find(question, language) is None:
            return False
        self.filtered["near_duplicate"] += 1
        return True

    def keep(
        self,
        slot: Slot,
        candidate: Candidate,
        question: str,
        overlap: float,
        judged: dict[str, Any] | None,
        spent: list[int],
    ) -> None:
        config = self.config
        prompt, strategy_keys = self.strategy_provenance(candidate)
        provenance = Provenance(
            generator=f"realrecall {__version__}",
            backend=config.backend,
            model=candidate.model,
            prompt=prompt,
            temperature=config.temperature if config.backend == "llm" else None,
            seed=config.seed,
            request_seed=candidate.request_seed,
            persona=slot.persona,
            chunk_hash=slot.chunk.content_hash,
            question_index=slot.index,
            attempt=candidate.attempt,
            usage=TokenUsage(prompt_tokens=spent[0], completion_tokens=spent[1]),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            overlap=round(overlap, 4),
            style_example_ids=self.setup.style.ids,
            judge=judged,
            slot_key=slot.key,
            # Identifiers (a setting, an error code) the prompt allows are counted apart from ``overlap``.
            extra={
                "identifier_overlap": round(identifier_overlap(question, slot.chunk.searchable_text()), 4),
                **strategy_keys,
            },
        )
        # The type and form come from the rules that label real questions, so that strata match; the
        # type an LLM was asked to write is kept beside it (a model does not always write what it is
        # asked for, and the extractive backend is asked for nothing).
        rules = self.setup.rules
        query_type, _ = rules.classify(question)
        form, _ = rules.classify_form(question)
        requested = {"requested_type": slot.type} if config.backend == "llm" else {}
        if self.setup.forms is not None and not isinstance(self.source, ExtractiveQuestions):
            choice = self.setup.forms.choose(config.seed, slot.chunk.id, slot.index)
            requested["requested_form"] = choice.form
        # Written by the gold writer's own record function, so a synthetic record is a gold record.
        gold = {slot.chunk.id: 1}
        pair: dict[str, Any] = {}
        if slot.partner is not None:
            gold[slot.partner.id] = 1
            relation = self.setup.relations.get(slot.chunk.id)
            pair = {"pair": {"chunk": slot.partner.id, "relation": relation}}
        record = GoldQuery(
            query_id=slot.query_id,
            query=question,
            gold=gold,
            evidence=question_evidence(
                slot, question, candidate, extractive=isinstance(self.source, ExtractiveQuestions)
            ),
            origin="synthetic",
            type=query_type,
            language=slot.language,
            metadata={**requested, "form": form, **pair, **self.sampled(slot)},
            provenance=provenance,
        ).to_record()
        self.duplicates.add(slot.key, question, slot.language)
        if self.write:
            self.store.add_record(slot.key, record)
        self.added += 1

    def strategy_provenance(self, candidate: Candidate) -> tuple[PromptRef | None, dict[str, Any]]:
        """``provenance.prompt`` and the strategy's keys (its name first); none for the extractive backend."""
        strategy, name = self.setup.strategy, self.config.effective_strategy
        if strategy is None or name is None:
            return None, {}
        prompt, keys = strategy.provenance(candidate)
        return prompt, {"strategy": name, **keys}

    def sampled(self, slot: Slot) -> dict[str, Any]:
        """A sampled chunk's inclusion probability and sample stratum, so figures can be weighted by 1/p."""
        probability = self.setup.inclusion.get(slot.chunk.id)
        if probability is None:
            return {}
        field_name = self.config.stratify_by
        record: dict[str, Any] = {"inclusion_probability": probability}
        value = slot.chunk.metadata.get(field_name)
        # The chunk's value of the sample's stratum field travels too, so calibrate can stratify by it.
        if value is not None and field_name not in ("query_id", "query", "gold", "origin", "type"):
            record[field_name] = value
        return record

    def fail(self, slot: Slot, outcome: str, reason: str, reasons: list[str], *, message: str = "") -> None:
        if not self.write:
            return
        self.failed += 1
        self.exhausted += outcome == "shortfall"
        self.shortfall[slot.chunk.id] += 1
        self.store.add_failure(
            {
                "query_id": slot.query_id,
                "chunk_id": slot.chunk.id,
                "question_index": slot.index,
                "outcome": outcome,
                "reason": reason,
                "rejections": reasons,
                "message": message,
                "slot_key": slot.key,
            }
        )

    def shortfall_warning(self) -> str | None:
        """Which option asks again for the questions whose every attempt was rejected.

        Their rejected answers are cached: a rerun with the same settings replays them and asks the
        model nothing, so without this a shortfall would stick silently.
        """
        if not self.exhausted:
            return None
        attempts = self.config.max_attempts
        return (
            f"{self.exhausted} question(s) fell short: all {attempts} attempts were rejected; a rerun "
            f"with the same settings replays those answers and asks nothing new; --max-attempts "
            f"{attempts + 3} (max_attempts in a pipeline) asks again for them"
        )

    def absorb(self, totals: BatchTotals) -> None:
        """Add what the batches sent and cost to this run's counters."""
        for stage, counter in (("generate", self.generation), ("judge", self.judging)):
            counter.requests += totals.requests[stage]
            counter.tokens_in += totals.tokens_in[stage]
            counter.tokens_out += totals.tokens_out[stage]
            counter.failures.update(totals.failures.get(stage, {}))

    def summary(
        self,
        store: GenerationStore,
        *,
        kept: int,
        removed: int,
        elapsed: float,
        warnings: tuple[str, ...] = (),
    ) -> GenerateSummary:
        stages = [self.generation.freeze(self.config.price_in, self.config.price_out)]
        if self.judge is not None:
            stages.append(self.judging.freeze(self.config.price_in, self.config.price_out))
        if self.screening is not None:
            stages.append(self.screening.freeze(self.config.price_in, self.config.price_out))
        return GenerateSummary(
            output_path=store.output_path,
            backend=self.config.backend,
            chunks=self.setup.chunks,
            planned=len(self.setup.slots),
            added=self.added,
            kept=kept,
            removed=removed,
            filtered=dict(self.filtered),
            shortfall=dict(self.shortfall),
            stages=tuple(stages),
            failures_path=store.failures_path,
            cache_path=store.cache_path,
            summary_path=store.summary_path,
            style_example_ids=self.setup.style.ids,
            elapsed=elapsed,
            warnings=warnings,
            generator=self.setup.generator,
            screened=dict(self.setup.screened),
        )

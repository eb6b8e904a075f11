"""The generation run: prepare (``generate.setup``), settle every slot still to write with a pool of
workers (``generate.settle``), write the summary.

Questions already written for unchanged chunks are kept without a request; every answer goes
through the cache, so a rerun, a resumed run or a killed run pays for nothing twice; with ``batch``
the answers are asked through the Batch API in rounds first (``generate.batch``), then the run
replays them from the cache.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from realrecall._version import __version__
from realrecall.corpus import Corpus
from realrecall.errors import EndpointSilent, InputError, RealrecallError
from realrecall.files import atomic_write_text
from realrecall.generate.analysis_cache import AnalysisCache
from realrecall.generate.asking import RequestCollector
from realrecall.generate.batch import (
    BatchOptions,
    BatchTotals,
    LeftoverClient,
    answer_in_batches,
    batch_endpoint,
    refuse_batch_options,
)
from realrecall.generate.config import GenerateConfig
from realrecall.generate.pairs import pair_counts, pair_warning
from realrecall.generate.planner import Slot
from realrecall.generate.settle import CLIENT_HINT, Settler, still_valid
from realrecall.generate.setup import Setup, check_paths, prepare, remembered_sample_rate, screen_with_model
from realrecall.generate.situation import copied_situations_warning
from realrecall.generate.store import GenerationStore
from realrecall.generate.summary import (
    GenerateProgress,
    GenerateSummary,
    StageCounter,
    dropped_warning,
    earlier_runs,
    run_spend,
    total_spend,
)
from realrecall.llm.types import UNANSWERED, BatchStatus, ChatClient
from realrecall.settings import settings_with

__all__ = ["agenerate", "generate"]

ProgressCallback = Callable[[GenerateProgress], None]
BatchStatusCallback = Callable[[BatchStatus], None]


def generate(
    corpus: Corpus,
    output_path: str | Path,
    settings: GenerateConfig | None = None,
    *,
    client: ChatClient | None = None,
    progress: ProgressCallback | None = None,
    batch_status: BatchStatusCallback | None = None,
    **options: Any,
) -> GenerateSummary:
    """Write synthetic questions for ``corpus`` to ``output_path`` (a gold set, origin ``synthetic``).

    ``settings`` says how (``GenerateConfig``; or its fields as keywords over it: ``model="gpt-4o"``,
    ``per_chunk=2``, ``batch=True``). Resumes and updates an earlier output at the same path:
    questions already written for unchanged chunks are kept without a request, those of deleted or
    changed chunks are removed, and only the missing ones are asked for.

    ``client`` sends the requests; it is required by the ``llm`` backend and by ``judge``, unless the
    settings' ``batch`` asks the Batch API: then the answers are asked in batches (``generate.batch``)
    at the endpoint of ``client`` when it is realrecall's own (its address, key and retries), else at
    the settings' ``base_url`` (default: ``OPENAI_BASE_URL``); ``batch_status`` is told each poll.
    On the Ray engine (``engine="ray"``) the requests are sent by a pool of Ray actors, each holding a
    client like ``client``; everything else (the cache, the plan, the checks, the deduplication, the
    store and its file) stays here, in this process.
    Raises RealrecallError when no question at all could be kept (after writing the summary file).
    """
    config = _settings(settings, options)

    async def run_and_close() -> GenerateSummary:
        try:
            return await agenerate(
                corpus, output_path, config, client=client, progress=progress, batch_status=batch_status
            )
        finally:
            # The event loop made here ends with this call: close the connections opened in it.
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(run_and_close())


async def agenerate(
    corpus: Corpus,
    output_path: str | Path,
    settings: GenerateConfig | None = None,
    *,
    client: ChatClient | None = None,
    progress: ProgressCallback | None = None,
    batch_status: BatchStatusCallback | None = None,
    **options: Any,
) -> GenerateSummary:
    """``generate`` for callers already inside an event loop."""
    config = _settings(settings, options)
    batch = _batch_options(config, client, batch_status)  # never on Ray: the settings refuse both
    engine = config.engine_settings
    if not engine.on_ray or client is None:  # no request to send (extractive): nothing to spread
        return await _generate(corpus, output_path, config, client=client, progress=progress, batch=batch)
    from realrecall.engine.cluster import open_cluster

    with open_cluster(engine) as cluster:
        if cluster is None:
            raise RuntimeError("the Ray engine opened no cluster")
        # Each actor makes its own client; the answers come back here, to the cache and the store.
        actors = cluster.chat_client(_client_recipe(client), actors=engine.generation_actors)
        return await _generate(corpus, output_path, config, client=actors, progress=progress)


def _settings(settings: GenerateConfig | None, options: dict[str, Any]) -> GenerateConfig:
    """The settings a call runs with (``settings_with``); ``batch=BatchOptions(...)`` is refused."""
    refuse_batch_options(options, what="generate", settings="poll_interval, batch_timeout and base_url")
    return settings_with(GenerateConfig, settings, options, what="generate")


def _batch_options(
    config: GenerateConfig, client: ChatClient | None, on_status: BatchStatusCallback | None
) -> BatchOptions | None:
    """How the Batch API is asked when the settings' ``batch`` says so and a model is needed at all: at
    the endpoint of realrecall's own ``client``, else the settings' (``base_url``, ``request_timeout``)."""
    if not config.batch_settings.batch or not (config.backend == "llm" or config.judge):
        return None
    endpoint = batch_endpoint(client, config.llm_config(), default_named="base_url")
    return BatchOptions.from_settings(config.batch_settings, endpoint, on_status=on_status)


def _client_recipe(client: ChatClient) -> Callable[[], ChatClient]:
    """How a Ray actor makes a client like ``client``: realrecall's own client from its config (the
    endpoint resolved here), any other client sent as it is."""
    from realrecall.llm import OpenAIChatClient

    if isinstance(client, OpenAIChatClient):
        return functools.partial(OpenAIChatClient, client.resolved_config())
    return functools.partial(_same, client)


def _same(client: ChatClient) -> ChatClient:
    return client


async def _generate(
    corpus: Corpus,
    output_path: str | Path,
    config: GenerateConfig,
    *,
    client: ChatClient | None,
    progress: ProgressCallback | None,
    batch: BatchOptions | None = None,
) -> GenerateSummary:
    started = time.monotonic()
    if client is None and batch is None and (config.backend == "llm" or config.judge):
        raise InputError(
            f"the {'judge' if config.backend != 'llm' else config.backend!r} stage needs a chat client",
            hint=CLIENT_HINT,
        )
    check_paths(corpus, output_path, config)
    store = GenerationStore(output_path, config.cache_path)
    analysis = AnalysisCache.load(store.analysis_path)
    setup = prepare(
        corpus, config, remembered_rate=remembered_sample_rate(output_path, config), analysis=analysis
    )
    screening = StageCounter("screen")
    try:
        store.load()
        screen_entries: list[dict[str, Any]] = []
        if config.screen == "model":
            setup, screen_entries = await screen_with_model(setup, store, client, screening)
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
        if analysis.changed or config.prune:
            analysis.save(store.analysis_path, prune=config.prune)  # while the output's lock is held
    except BaseException:
        store.abort()
        raise
    warning = store.close(order=[slot.key for slot in setup.slots])
    pairs = pair_counts(setup.slots, store.records) if config.multi_chunk else {}
    stage_counters = (run.settler.generation, run.settler.judging)
    warnings = (
        warning,
        run.settler.shortfall_warning(),
        dropped_warning(stage_counters),
        pair_warning(pairs),
        copied_situations_warning(store.records.values(), config),
    )
    summary = run.summary(
        store,
        kept=kept,
        removed=removed,
        elapsed=time.monotonic() - started,
        warnings=tuple(w for w in warnings if w is not None),
        pairs=pairs,
    )
    _write_summary(store, setup, summary)
    if summary.total == 0:
        rejections = Counter(summary.filtered)
        for stage in summary.stages:
            rejections.update(stage.failures)
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(rejections.items())) or "none"
        silence = run.settler.silence
        if silence is not None and rejections and set(rejections) <= UNANSWERED:
            # Fewer questions than run at once, none answered: the endpoint, not the questions, failed
            # (stop_if_silent's line, which a run this small never reaches).
            problem = f"{silence}; none of the {summary.planned} questions got an answer"
            raise EndpointSilent.of_client(problem)
        more = min(config.max_attempts + 3, 100)
        raise RealrecallError(
            f"no question was kept ({summary.planned} planned; rejections {reasons}); "
            f"see {store.failures_path} and {store.summary_path}; each question had "
            f"{config.max_attempts} attempt(s): --max-attempts {more} (max_attempts in a pipeline) "
            "asks again for those whose answers were all rejected"
        )
    return summary


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


def _write_summary(store: GenerationStore, setup: Setup, summary: GenerateSummary) -> None:
    """The summary file beside the output: the run's config, its summary and the sample's rate, and
    the spend of every run into this output so far (``runs``, summed in ``spend``): a rerun that sent
    nothing does not hide what the job cost."""
    created = datetime.now(UTC).isoformat(timespec="seconds")
    runs = [*earlier_runs(store.summary_path), run_spend(summary.stages, created)]
    record = {
        "realrecall_version": __version__,
        "created": created,
        "config": _config_record(setup.config),
        **summary.to_dict(),  # the generator's description first, as before
        # What a --sample count stood for at the first run; later runs keep it.
        "sample_rate": setup.sample_rate,
        "spend": total_spend(runs),
        "runs": runs,
    }
    atomic_write_text(store.summary_path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def _config_record(config: GenerateConfig) -> dict[str, Any]:
    record = asdict(config)
    # Where the requests were sent from is not a choice of what was generated: one "engine" key, only
    # for the Ray engine (as results.json has it).
    engine = record.pop("engine_settings")
    if engine["engine"] != "local":
        record["engine"] = engine["engine"]
    if record.pop("batch_settings")["batch"]:  # how the answers were asked, like the engine
        record["batch"] = True
    del record["base_url"]  # where they were asked is no choice of what was generated (nor shown)
    for name, value in record.items():
        if isinstance(value, Path):
            record[name] = str(value)
    record["shard"] = None if config.shard is None else str(config.shard)
    return record


class _Run:
    """One run's workers over the slots still to write, its progress and its summary."""

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
        self.config = setup.config
        self.store = store
        self.progress = progress
        self.settler = Settler(setup, store, client, write=write)
        self.screening: StageCounter | None = None  # the model screen's figures (--screen)
        self.pending = [slot for slot in setup.slots if slot.key not in store.records]
        self.done = len(setup.slots) - len(self.pending)

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
                await self.settler.settle(slot)
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
        settler = self.settler
        generation, judging = settler.generation, settler.judging
        self.progress(
            GenerateProgress(
                done=self.done,
                total=len(self.setup.slots),
                kept=len(self.store.records),
                failed=settler.failed,
                requests=generation.requests + judging.requests,
                tokens_in=generation.tokens_in + judging.tokens_in,
                tokens_out=generation.tokens_out + judging.tokens_out,
            )
        )

    def absorb(self, totals: BatchTotals) -> None:
        """Add what the batches sent and cost to this run's counters."""
        for stage, counter in (("generate", self.settler.generation), ("judge", self.settler.judging)):
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
        pairs: dict[str, Any] | None = None,
    ) -> GenerateSummary:
        settler, prices = self.settler, (self.config.price_in, self.config.price_out)
        stages = [settler.generation.freeze(*prices)]
        if settler.judge is not None:
            stages.append(settler.judging.freeze(*prices))
        if self.screening is not None:
            stages.append(self.screening.freeze(*prices))
        return GenerateSummary(
            output_path=store.output_path,
            backend=self.config.backend,
            chunks=self.setup.chunks,
            planned=len(self.setup.slots),
            added=settler.added,
            kept=kept,
            removed=removed,
            filtered=dict(settler.filtered),
            shortfall=dict(settler.shortfall),
            stages=tuple(stages),
            failures_path=store.failures_path,
            cache_path=store.cache_path,
            summary_path=store.summary_path,
            style_example_ids=self.setup.style.ids,
            elapsed=elapsed,
            warnings=warnings,
            generator=self.setup.generator,
            screened=dict(self.setup.screened),
            pairs=pairs or {},
        )

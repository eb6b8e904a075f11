"""The scheduled job: incremental generate, evaluate on both sets, calibrate, and a history row.

``run_pipeline`` is what ``realrecall run pipeline.toml`` and ``realrecall demo`` call. A second run
with nothing changed sends no request (the generator's cache answers everything) and its history row
is marked ``unchanged``; a changed chunk is the only one sent again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.errors import EndpointSilent, GateFailed, InputError, ServerSilent
from realrecall.evaluate.settings import DEFAULT_RETRIEVER
from realrecall.files import check_distinct
from realrecall.pipeline.config import PipelineConfig
from realrecall.pipeline.history import (
    GateRecord,
    GenerationCounts,
    HistoryFigures,
    HistoryRow,
    append_history,
    load_history,
)
from realrecall.pipeline.lock import lock_path, run_lock

if TYPE_CHECKING:
    from realrecall.calibrate import CalibrationReport, Interval
    from realrecall.calibrate.drift import DriftReport
    from realrecall.corpus import Corpus
    from realrecall.evaluate import EvaluationInputs, EvaluationResult
    from realrecall.generate import GenerateConfig, GenerateSummary
    from realrecall.gold import GoldSet
    from realrecall.llm import BatchStatus, ChatClient
    from realrecall.settings import EngineSettings

__all__ = ["PipelineResult", "run_pipeline", "run_pipelines"]


@dataclass(frozen=True)
class PipelineResult:
    """What one run produced: the generation summary, the report and where the files went."""

    generation: GenerateSummary
    report: CalibrationReport
    history_row: HistoryRow
    results_path: Path
    per_query_path: Path
    report_paths: Mapping[str, Path]
    warnings: tuple[str, ...] = ()
    """Everything evaluate and calibrate warned about (also in every report): worth showing the user."""

    @property
    def unchanged(self) -> bool:
        return self.history_row.unchanged


def run_pipeline(
    config: PipelineConfig,
    *,
    client: ChatClient | None = None,
    now: dt.datetime | None = None,
    progress: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_result: Callable[[PipelineResult], None] | None = None,
    wait: bool = False,
) -> PipelineResult:
    """Run the configured job end to end and append its figures to the history file.

    One run of a pipeline at a time (``pipeline.toml.lock``, see ``pipeline.lock``): a second is refused
    at once with an InputError naming the run in progress, or with ``wait`` starts once it has finished.

    Gates (``fail_under``, ``max_gap``) are checked after the history row is written, so a failing
    run is still on record; they raise :class:`GateFailed`. The warnings of evaluate and calibrate
    (gold passages missing from the corpus, a stale calibration, ...) are in every report and in
    ``PipelineResult.warnings``; ``on_warning`` gets each of them before the gates are checked, so a
    caller can show them even when a gate fails. ``on_result`` gets the result at the same point (the
    CLI's ``--mlflow`` logs it there, so a run that fails a gate is tracked too).

    ``config.engine`` (``[engine]``) says where every stage's work runs. On the Ray engine the run
    starts (or joins, with ``address``) one cluster once its checks pass and its lock is held, every
    stage sends its work there (generation's requests, evaluate's retrieval and per-query scoring), and
    the cluster started is shut down when the run ends, however it ends (Ctrl-C included); every
    statistic, report, history row, gate and file write stays in this process.
    """
    from realrecall.engine.cluster import open_cluster

    say = progress or (lambda _message: None)
    paths = _output_paths(config)
    _check_outputs(config, _listed(paths))
    with run_lock(config.path, wait=wait, on_wait=say, on_takeover=on_warning), open_cluster(config.engine):
        staged = _generated(config, client, now or dt.datetime.now(dt.UTC), say, paths)
        say("evaluating on the synthetic and real sets")
        with _stores_named_in(config):
            evaluation = staged.inputs.evaluate(more_gold=[staged.synthetic])
        done = _finished(staged, evaluation, say, on_warning, on_result)
    if done.report.failed_gates:
        done.report.check_gates()
    return done


def run_pipelines(
    configs: Sequence[PipelineConfig],
    *,
    client: ChatClient | None = None,
    now: dt.datetime | None = None,
    progress: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_result: Callable[[PipelineResult], None] | None = None,
    wait: bool = False,
) -> list[PipelineResult]:
    """Run several pipelines as one job (a nightly job over many indexes), each as ``run_pipeline``
    runs it, the results in the configs' order.

    Every pipeline is checked before any work (each one's outputs against its own inputs and outputs
    and every other pipeline's), then every pipeline's lock is taken. The pipelines must name the same
    engine (``[engine]``). On the local engine they run one after the other. On the Ray engine one
    cluster serves them all: each pipeline's generation sends its requests through the cluster's
    actors (its cache, plan and store here), then each pipeline's retrieval and per-query scoring is
    one Ray task, the tasks side by side on the cluster; the statistics, reports, history rows and
    every file write are done here, pipeline by pipeline, as ``run_pipeline`` does them.

    ``on_result`` gets each pipeline's result once its history row is written. The gates are checked
    once every pipeline has finished: a GateFailed names each pipeline whose gates failed.
    """
    from realrecall.engine.cluster import open_cluster

    if not configs:
        raise InputError("no pipeline to run", hint="give one pipeline.toml or more")
    say = progress or (lambda _message: None)
    paths = [_output_paths(config) for config in configs]
    for config, outputs in zip(configs, paths, strict=True):
        _check_outputs(config, _listed(outputs))
    _check_apart(configs, paths)
    engine = _one_engine(configs)
    started = now or dt.datetime.now(dt.UTC)
    with contextlib.ExitStack() as stack:
        for config in configs:
            stack.enter_context(run_lock(config.path, wait=wait, on_wait=say, on_takeover=on_warning))
        cluster = stack.enter_context(open_cluster(engine))
        results = []
        if cluster is None:
            for config, outputs in zip(configs, paths, strict=True):
                say(f"{config.path}: generating, evaluating, calibrating")
                staged = _generated(config, client, started, say, outputs)
                with _stores_named_in(config):
                    evaluation = staged.inputs.evaluate(more_gold=[staged.synthetic])
                results.append(_finished(staged, evaluation, say, on_warning, on_result))
        else:
            from realrecall.evaluate.evaluation import EvaluateCall, evaluate_each

            everything = []
            for config, outputs in zip(configs, paths, strict=True):
                say(f"{config.path}: generating synthetic questions")
                everything.append(_generated(config, client, started, say, outputs))
            say(f"evaluating {len(configs)} pipelines on the Ray cluster, one task each")
            calls = [
                EvaluateCall(
                    [*staged.inputs.gold_sets, staged.synthetic], staged.inputs.corpus,
                    staged.inputs.retriever, staged.inputs.run, staged.inputs.settings,
                )
                for staged in everything
            ]  # fmt: skip
            evaluations = evaluate_each(calls, cluster=cluster)
            for staged, evaluation in zip(everything, evaluations, strict=True):
                results.append(_finished(staged, evaluation, say, on_warning, on_result))
    failed = [
        (done, config) for done, config in zip(results, configs, strict=True) if done.report.failed_gates
    ]
    if failed:
        raise GateFailed(
            "gate failed: "
            + "; ".join(
                f"{config.path}: " + ", ".join(g.message for g in done.report.failed_gates)
                for done, config in failed
            )
        )
    return results


@contextlib.contextmanager
def _stores_named_in(config: PipelineConfig) -> Iterator[None]:
    """A store's server that answered nothing: the advice names the key that allows more time as
    this pipeline sets it, ``[evaluate] request_timeout in pipeline.toml`` (not the command's option)."""
    try:
        yield
    except ServerSilent as exc:
        raise exc.labelled(f"[evaluate] {exc.setting} in {config.path}") from exc


def _output_paths(config: PipelineConfig) -> tuple[Path, Path, Mapping[str, Path]]:
    output = config.output_dir
    report_paths = {
        fmt: output / f"report.{ext}" for fmt, ext in (("html", "html"), ("markdown", "md"), ("json", "json"))
    }
    return output / "results.json", output / "per_query.jsonl", report_paths


def _requests(
    config: GenerateConfig, client: ChatClient | None, say: Callable[[str], None]
) -> dict[str, Any]:
    """How generate asks its model: through the Batch API when ``[generate] batch`` says so (generate
    asks it at the settings' endpoint; each poll said), else ``client`` (default: realrecall's client
    at the endpoint; none for the extractive backend)."""
    if config.batch_settings.batch:

        def polled(status: BatchStatus) -> None:
            counts = status.counts
            say(f"batch {status.id}: {status.status} ({counts.completed}/{counts.total} done)")

        return {"batch_status": polled}
    if client is None and config.backend == "llm":
        from realrecall.llm import DeferredChatClient  # openai loads only if a request is sent

        client = DeferredChatClient(config.llm_config())  # request_timeout applies
    return {"client": client}


def _listed(paths: tuple[Path, Path, Mapping[str, Path]]) -> list[Path]:
    results_path, per_query_path, report_paths = paths
    return [results_path, per_query_path, *report_paths.values()]


def _check_apart(
    configs: Sequence[PipelineConfig], paths: Sequence[tuple[Path, Path, Mapping[str, Path]]]
) -> None:
    """Pipelines run together: none writes what another reads or writes (each named by its file)."""
    inputs: dict[str, Path | None] = {}
    outputs: dict[str, Path | None] = {}
    for config, given in zip(configs, paths, strict=True):
        own_inputs, own_outputs = _files(config, _listed(given))
        inputs.update({f"{config.path}: {label}": path for label, path in own_inputs.items()})
        outputs.update({f"{config.path}: {label}": path for label, path in own_outputs.items()})
    check_distinct(inputs, outputs)


def _one_engine(configs: Sequence[PipelineConfig]) -> EngineSettings:
    """The engine every pipeline run together names: one cluster serves them all."""
    first = configs[0]
    for config in configs[1:]:
        if config.engine != first.engine:
            raise InputError(
                f"pipelines run together share one engine, but {first.path} and {config.path} name "
                "different ones ([engine])",
                hint="give them the same [engine], or run them apart",
            )
    return first.engine


@dataclass(frozen=True)
class _Generated:
    """A pipeline's run up to its evaluation: its inputs read, its synthetic set generated."""

    config: PipelineConfig
    inputs: EvaluationInputs
    corpus: Corpus
    synthetic: GoldSet
    generation: GenerateSummary
    drift: DriftReport | None
    history: list[HistoryRow]
    now: dt.datetime
    paths: tuple[Path, Path, Mapping[str, Path]]


def _generated(
    config: PipelineConfig,
    client: ChatClient | None,
    now: dt.datetime,
    say: Callable[[str], None],
    paths: tuple[Path, Path, Mapping[str, Path]],
) -> _Generated:
    """A pipeline's run once its outputs are checked and its lock is held, up to its evaluation."""
    from realrecall.calibrate.remeasure import refuse_uncarried
    from realrecall.evaluate import load_inputs
    from realrecall.generate import generate
    from realrecall.gold import load_gold

    # Every input is read and the retriever built before generation, which may take long and cost
    # requests: a bad line in the real set or a broken retriever file must not wait for it.
    real = [(config.real, "real")] if config.real is not None else []
    with _stores_named_in(config):
        inputs = load_inputs(real, corpus=config.corpus, settings=config.stage_evaluate())
    corpus = inputs.corpus
    if corpus is None:  # load_inputs loads the corpus whenever it builds a retriever
        raise InputError("the pipeline needs a corpus", path=config.path, hint="set [corpus] path")
    for gold in inputs.gold_sets:  # before generation: a real set today's corpus cannot score
        refuse_uncarried(gold, corpus)
    generate_config = config.stage_generate()
    # Before generation too: a traffic file or a history that cannot be read must not wait for it.
    drift = _drift(config, say)
    history = load_history(config.history)

    say("generating synthetic questions (only new or changed chunks are sent)")
    try:
        generation = generate(
            corpus, config.synthetic, generate_config, **_requests(generate_config, client, say)
        )
    except EndpointSilent as exc:
        if client is not None:  # a caller's own client keeps its own timeout: the advice says so
            raise
        # The client was made from [generate] request_timeout: the advice names that key.
        raise exc.labelled(f"[generate] {exc.setting} in {config.path}") from exc
    synthetic = load_gold(config.synthetic, origin="synthetic")
    return _Generated(config, inputs, corpus, synthetic, generation, drift, history, now, paths)


def _finished(
    staged: _Generated,
    result: EvaluationResult,
    say: Callable[[str], None],
    on_warning: Callable[[str], None] | None,
    on_result: Callable[[PipelineResult], None] | None,
) -> PipelineResult:
    """A pipeline's run after its evaluation: its files, calibration, reports and history row (the
    gates are the caller's to check)."""
    from realrecall.calibrate import calibrate
    from realrecall.calibrate.report import render, write_report
    from realrecall.calibrate.report.html import render_html
    from realrecall.evaluate import write_per_query, write_results

    config, now, drift, history = staged.config, staged.now, staged.drift, staged.history
    results_path, per_query_path, report_paths = staged.paths
    write_results(result, results_path)
    write_per_query(result, per_query_path)

    say("calibrating")
    # The headline metric is the pipeline's (its default checked against k when the config was read).
    report = calibrate(
        [result], corpus=staged.corpus, settings=config.calibrate, metric=config.metric, now=now
    )
    if drift is not None and drift.drifted:
        # Figures calibrated on a real set that traffic has left behind describe yesterday's users.
        report = replace(
            report, warnings=(*report.warnings, f"{drift.verdict} Calibrated figures are stale.")
        )
    generation = staged.generation
    row = _history_row(config, result.to_dict(), report, generation, now, history[-1] if history else None)
    if drift is not None:
        figures = replace(
            row.figures,
            drifted=drift.drifted,
            drift_auc=drift.auc,
            calibrated_stale=True if drift.drifted else row.figures.calibrated_stale,
        )
        row = replace(row, figures=figures)
    for fmt, path in report_paths.items():
        text = render_html(report, history=[*history, row]) if fmt == "html" else render(report, fmt)
        write_report(text, path)
    append_history(config.history, row)
    if on_warning is not None:
        for message in report.warnings:
            on_warning(message)
    done = PipelineResult(
        generation, report, row, results_path, per_query_path, report_paths, warnings=report.warnings
    )
    if on_result is not None:
        on_result(done)
    return done


def _drift(config: PipelineConfig, say: Callable[[str], None]) -> DriftReport | None:
    """The drift test of ``[drift] traffic`` against the real set; None when no traffic is given."""
    if config.traffic is None or config.real is None:
        return None
    from realrecall.calibrate.drift import detect_drift  # numpy and scipy, loaded when asked
    from realrecall.calibrate.realism import load_questions

    say("testing recent traffic for drift from the real set")
    return detect_drift(load_questions(config.real), load_questions(config.traffic), settings=config.drift)


def _check_outputs(config: PipelineConfig, outputs: list[Path]) -> None:
    """Before any work: no output of the run (the synthetic set and the files kept beside it included)
    may be one of its inputs (the config file, the corpus, the real set, the drift traffic, generate's
    prompts and style examples, the retriever's store folder or code) or lie inside an input folder,
    or be another output.
    """
    if config.synthetic.suffix.lower() != ".jsonl":
        # The run reads the set it generates back by its name: another suffix reads as TREC qrels.
        raise InputError(
            f"[generate] output {config.synthetic.name} is not a .jsonl file",
            path=config.path,
            hint="the synthetic set is JSON Lines: name it e.g. synthetic.jsonl",
        )
    inputs, written = _files(config, outputs)
    check_distinct(inputs, written)
    kept = {label: path for label, path in written.items() if not label.startswith("[generate]")}
    check_distinct({"[generate] output": config.synthetic}, kept)


def _files(
    config: PipelineConfig, outputs: list[Path]
) -> tuple[dict[str, Path | None], dict[str, Path | None]]:
    """The run's inputs and outputs, each by the key that names it."""
    from realrecall.evaluate.retrievers import retriever_inputs
    from realrecall.generate.store import sidecar_paths

    generate = config.generate
    evaluation = config.evaluate
    retriever = retriever_inputs(
        evaluation.retriever or DEFAULT_RETRIEVER,
        dict(evaluation.retriever_options),
        defaults=evaluation.retriever_defaults(),
    )
    inputs = {
        "the config file": config.path,
        "[corpus] path": config.corpus,
        "[real] path": config.real,
        "[drift] traffic": config.traffic,
        **{
            f"[generate] {key}": getattr(generate, key)
            for key in ("prompt", "style_examples", "judge_prompt", "type_rules")
        },
        **{
            ("[evaluate] retriever" if key == "function" else f"[evaluate.retriever] {key}"): path
            for key, path in retriever.items()
        },
    }
    sidecars = sidecar_paths(config.synthetic, generate.cache_path)
    generated = {
        "[generate] output": config.synthetic,
        **{f"[generate] output's {name}": sidecars[name] for name in ("cache", "failures", "summary")},
    }
    named = {f"[output] dir's {path.name}": path for path in outputs}
    named["the run's lock file"] = lock_path(config.path)
    return inputs, {**generated, "[output] history": config.history, **named}


def _fingerprint(config: PipelineConfig, results: Mapping[str, Any], generator: Mapping[str, Any]) -> str:
    """Everything that decides the figures: inputs' hashes, generator, retriever and settings."""
    material = {
        "corpus": results["corpus"]["sha256"],
        "gold": sorted((g["name"], g["sha256"]) for g in results["gold_sets"]),
        "generator": generator,
        "retriever": results["retriever"]["description"],
        "metrics": results["metrics"],
        "by": list(config.evaluate.by),
    }
    index = ((results.get("fingerprints") or {}).get("retriever") or {}).get("index")
    if index:  # a store rebuilt (a new collection id, table version) is no 'unchanged' rerun
        material["index"] = index
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _history_row(
    config: PipelineConfig,
    results: Mapping[str, Any],
    report: CalibrationReport,
    generation: GenerateSummary,
    now: dt.datetime,
    previous: HistoryRow | None,
) -> HistoryRow:
    generator = generation.generator
    fingerprint = _fingerprint(config, results, generator)
    counts = GenerationCounts(
        added=generation.added,
        kept=generation.kept,
        removed=generation.removed,
        requests=sum(stage.requests for stage in generation.stages),
        tokens_in=sum(stage.tokens_in for stage in generation.stages),
        tokens_out=sum(stage.tokens_out for stage in generation.stages),
    )
    overall = report.overall()
    calibrated = report.calibrated
    return HistoryRow(
        time=now.isoformat(timespec="seconds"),
        unchanged=previous is not None
        and previous.fingerprint == fingerprint
        and counts.requests == 0
        and counts.added == 0
        and counts.removed == 0,
        fingerprint=fingerprint,
        corpus_sha256=results["corpus"]["sha256"],
        prompt_sha256=generator.get("prompt_sha256"),
        model=generator.get("model"),
        retriever=results["retriever"]["description"],
        figures=HistoryFigures(
            metric=report.metric,
            real=_number(overall.real.value),
            real_ci=_interval(overall.real.interval),
            synthetic=_number(overall.synthetic.value),
            gap=_number(overall.gap),
            calibrated=_number(calibrated.value) if calibrated else None,
            calibrated_on=calibrated.calibrated_on if calibrated else None,
            calibrated_stale=calibrated.stale if calibrated else None,
            n_real=overall.n_real,
            n_synthetic=overall.n_synthetic,
        ),
        overall={g["name"]: g["overall"]["metrics"] for g in results["gold_sets"]},
        generation=counts,
        gates=tuple(GateRecord(gate=g.gate, passed=g.passed) for g in report.gates),
        headline=report.headline.text,
    )


def _number(value: float | None) -> float | None:
    """JSON has no NaN: a figure that could not be computed (no query) is recorded as null."""
    return None if value is None or math.isnan(value) else float(value)


def _interval(interval: Interval) -> tuple[float, float] | None:
    return (float(interval.low), float(interval.high)) if interval.defined else None

"""The scheduled job: incremental generate, evaluate on both sets, calibrate, and a history row.

``run_pipeline`` is what ``realrecall run pipeline.toml`` and ``realrecall demo`` call. A second run
with nothing changed sends no request (the generator's cache answers everything) and its history row
is marked ``unchanged``; a changed chunk is the only one sent again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.errors import InputError
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
    from realrecall.generate import GenerateConfig, GenerateSummary
    from realrecall.llm import BatchStatus, ChatClient

__all__ = ["PipelineResult", "run_pipeline"]


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
    output = config.output_dir
    results_path, per_query_path = output / "results.json", output / "per_query.jsonl"
    report_paths = {
        fmt: output / f"report.{ext}" for fmt, ext in (("html", "html"), ("markdown", "md"), ("json", "json"))
    }
    _check_outputs(config, [results_path, per_query_path, *report_paths.values()])
    with run_lock(config.path, wait=wait, on_wait=say, on_takeover=on_warning), open_cluster(config.engine):
        return _run(
            config, client, now or dt.datetime.now(dt.UTC), say, on_warning, on_result,
            (results_path, per_query_path, report_paths),
        )  # fmt: skip


def _requests(
    config: GenerateConfig, client: ChatClient | None, say: Callable[[str], None]
) -> dict[str, Any]:
    """How generate asks its model: through the Batch API when ``[generate] batch`` says so, else
    ``client`` (default: realrecall's client at the endpoint; none for the extractive backend)."""
    needs_model = config.backend == "llm" or config.judge
    if needs_model and config.batch_settings.batch:
        from realrecall.generate import BatchOptions

        def polled(status: BatchStatus) -> None:
            counts = status.counts
            say(f"batch {status.id}: {status.status} ({counts.completed}/{counts.total} done)")

        return {
            "batch": BatchOptions.from_settings(config.batch_settings, config.llm_config(), on_status=polled)
        }
    if client is None and config.backend == "llm":
        from realrecall.llm import DeferredChatClient  # openai loads only if a request is sent

        client = DeferredChatClient(config.llm_config())  # request_timeout applies
    return {"client": client}


def _run(
    config: PipelineConfig,
    client: ChatClient | None,
    now: dt.datetime,
    say: Callable[[str], None],
    on_warning: Callable[[str], None] | None,
    on_result: Callable[[PipelineResult], None] | None,
    paths: tuple[Path, Path, Mapping[str, Path]],
) -> PipelineResult:
    """``run_pipeline`` once its outputs are checked and its lock is held."""
    from realrecall.calibrate import calibrate
    from realrecall.calibrate.remeasure import refuse_uncarried
    from realrecall.calibrate.report import render, write_report
    from realrecall.calibrate.report.html import render_html
    from realrecall.evaluate import load_inputs, write_per_query, write_results
    from realrecall.generate import generate
    from realrecall.gold import load_gold

    results_path, per_query_path, report_paths = paths
    # Every input is read and the retriever built before generation, which may take long and cost
    # requests: a bad line in the real set or a broken retriever file must not wait for it.
    real = [(config.real, "real")] if config.real is not None else []
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
    generation = generate(
        corpus, config.synthetic, generate_config, **_requests(generate_config, client, say)
    )

    say("evaluating on the synthetic and real sets")
    synthetic = load_gold(config.synthetic, origin="synthetic")
    result = inputs.evaluate(more_gold=[synthetic])
    write_results(result, results_path)
    write_per_query(result, per_query_path)

    say("calibrating")
    # The headline metric is the pipeline's (its default checked against k when the config was read).
    report = calibrate([result], corpus=corpus, settings=config.calibrate, metric=config.metric, now=now)
    if drift is not None and drift.drifted:
        # Figures calibrated on a real set that traffic has left behind describe yesterday's users.
        report = replace(
            report, warnings=(*report.warnings, f"{drift.verdict} Calibrated figures are stale.")
        )
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
    if report.failed_gates:
        report.check_gates()
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
    if config.synthetic.suffix.lower() != ".jsonl":
        # The run reads the set it generates back by its name: another suffix reads as TREC qrels.
        raise InputError(
            f"[generate] output {config.synthetic.name} is not a .jsonl file",
            path=config.path,
            hint="the synthetic set is JSON Lines: name it e.g. synthetic.jsonl",
        )
    sidecars = sidecar_paths(config.synthetic, generate.cache_path)
    generated = {
        "[generate] output": config.synthetic,
        **{f"[generate] output's {name}": sidecars[name] for name in ("cache", "failures", "summary")},
    }
    named = {f"[output] dir's {path.name}": path for path in outputs}
    named["the run's lock file"] = lock_path(config.path)
    check_distinct(inputs, {**generated, "[output] history": config.history, **named})
    check_distinct({"[generate] output": config.synthetic}, {"[output] history": config.history, **named})


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

"""The scheduled job's configuration (``pipeline.toml``), validated with errors that name the key.

```toml
[corpus]
path = "docs.jsonl"              # required

[real]                           # optional: the real gold set the figures are quoted on
path = "real.jsonl"
date = "2026-11-30"              # when it was collected (default: the file's modification date)

[generate]                       # the synthetic set, regenerated incrementally on every run
output = "synthetic.jsonl"       # required
backend = "llm"                  # or "extractive" (offline, no model)
model = "gpt-4o-mini"
options = { per_chunk = 1, types = "lookup=1,conceptual=2,comparison=1", concurrency = 8 }

[evaluate]
retriever = "bm25"               # or dense, local-dense, hybrid, module:function, path/to/file.py:function
k = [1, 5, 10, 50]
metrics = ["recall@10", "recall@2000tok"]   # optional: explicit metrics (default: what k gives)
by = ["type", "language"]
query_timeout = 30               # seconds a custom retriever may take per query (default 300)
request_timeout = 60             # seconds a store's server or an embeddings endpoint may take (default 60)
gold_from = "auto"               # or "ids", "evidence" (auto: ids the corpus holds, evidence for the rest)
evidence_coverage = 0.5          # share of an evidence span a chunk must hold to be gold, in (0, 1]
# With options, the retriever is a table instead: [evaluate.retriever] with name = "bm25", k1 = 1.2 ...
# (any option of the retriever, as docs/retrievers.md lists them).

[calibrate]
metric = "recall@10"             # one of the metrics evaluated: [evaluate] metrics, or what k gives:
                                 # recall@K, mrr@<largest K>, ndcg@<K nearest 10>
max_age_days = 90                # warn when the real set is older (the default, as in `realrecall calibrate`)
fail_under = { "recall@10" = 0.6 }
max_gap = 0.2
gate_on = "point"                # or "bound": gates check the interval's unfavourable bound
realism = false                  # true: the reports score how well a classifier tells the sets apart

[drift]                          # optional: is recent traffic still like the real set? (needs [real])
traffic = "traffic.txt"          # recent user queries, one a line or JSONL
alpha = 0.05                     # the alarm's significance level; a drift marks calibrated figures stale

[output]
dir = "realrecall-runs"          # results.json, per_query.jsonl and the reports of the last run
history = "history.jsonl"        # one line appended per run
```

Relative paths (a retriever's ``path/to/file.py`` included) are read relative to the folder of the
config file. Every mistake is found before any work starts and named with the file, the section and
the key (and the line, where it can be found): an unknown key in a section or in ``[generate] options``
(whose keys are ``GenerateConfig``'s fields), a value of the wrong type or out of range, a headline
metric or gate that ``k`` does not compute, an output that is one of the inputs.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import UnionType
from typing import Any, NoReturn

from realrecall.calibrate.settings import CalibrateSettings, fail_under_problem
from realrecall.errors import InputError, SettingError
from realrecall.evaluate.retrievers.options import make_options
from realrecall.evaluate.settings import DEFAULT_RETRIEVER, HEADLINE_METRIC, EvaluateSettings, default_metrics
from realrecall.resolution import check_gold_from

__all__ = ["PipelineConfig", "load_pipeline_config"]

_SECTIONS: dict[str, dict[str, type | UnionType | tuple[type, ...]]] = {
    "corpus": {"path": str},
    "real": {"path": str, "date": (str, dt.date)},
    "generate": {"output": str, "backend": str, "model": str, "options": dict},
    "evaluate": {
        "retriever": (str, dict),
        "k": list,
        "metrics": list,
        "by": list,
        "embed_model": str,
        "query_timeout": float | int,
        "request_timeout": float | int,
        "gold_from": str,
        "evidence_coverage": float | int,
    },
    "calibrate": {
        "metric": str,
        "max_age_days": float | int,
        "fail_under": dict,
        "max_gap": float | int,
        "gate_on": str,
        "confidence": float | int,
        "realism": bool,
    },
    "drift": {"traffic": str, "alpha": float},
    "output": {"dir": str, "history": str},
}
_REQUIRED = {"corpus": ("path",), "generate": ("output",)}
_EVALUATE = EvaluateSettings()
_RUN = _EVALUATE.run_settings
_CALIBRATE = CalibrateSettings()


@dataclass(frozen=True)
class PipelineConfig:
    """Everything one run of the scheduled job needs, with paths resolved."""

    path: Path
    corpus: Path
    synthetic: Path
    real: Path | None = None
    real_date: str | None = None
    backend: str = "extractive"
    model: str | None = None
    generate_options: Mapping[str, Any] = field(default_factory=dict)
    retriever: str = DEFAULT_RETRIEVER
    retriever_options: Mapping[str, Any] = field(default_factory=dict)  # [evaluate.retriever], checked
    embed_model: str | None = None
    query_timeout: float | None = _RUN.query_timeout
    request_timeout: float = _RUN.request_timeout
    k: tuple[int, ...] = _EVALUATE.k
    metrics: tuple[str, ...] = ()  # explicit metrics, e.g. budgeted ones; empty: what k gives
    by: tuple[str, ...] = ("type", "language")
    gold_from: str = _EVALUATE.gold_from
    evidence_coverage: float = _EVALUATE.evidence_coverage
    metric: str = HEADLINE_METRIC
    max_age_days: float | None = _CALIBRATE.max_age_days
    fail_under: Mapping[str, float] = field(default_factory=dict)
    max_gap: float | None = None
    gate_on: str = "point"
    confidence: float = _CALIBRATE.confidence
    realism: bool = _CALIBRATE.realism
    output_dir: Path = Path("realrecall-runs")
    history: Path = Path("history.jsonl")
    traffic: Path | None = None
    drift_alpha: float = 0.05


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Read and validate ``pipeline.toml``; every mistake names the file and the key."""
    p = Path(path)
    if not p.is_file():
        raise InputError(
            "pipeline config not found", path=p, hint="see `realrecall run --help` for an example"
        )
    try:
        text = p.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=p) from exc
    except UnicodeDecodeError as exc:
        raise InputError("not valid UTF-8", path=p, hint="save the file as UTF-8") from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=p) from exc
    check = _Checker(p, text)
    check.shape(data)
    base = p.parent
    section = {name: data.get(name, {}) for name in _SECTIONS}

    def resolve(value: str) -> Path:
        candidate = Path(value).expanduser()
        return candidate if candidate.is_absolute() else base / candidate

    real_date = section["real"].get("date")
    if isinstance(real_date, str):
        check.date(real_date)
    k = section["evaluate"].get("k", list(_EVALUATE.k))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in k) or not k:
        check.fail(
            "evaluate", "k", "[evaluate] k must be a list of positive integers", hint="e.g. k = [1, 5, 10]"
        )
    metrics = check.metric_names(section["evaluate"].get("metrics", []))
    by = section["evaluate"].get("by", ["type", "language"])
    if not all(isinstance(name, str) and name.strip() for name in by):
        check.fail("evaluate", "by", "[evaluate] by must be a list of field names", hint='e.g. by = ["type"]')
    retriever, retriever_options = check.retriever(section["evaluate"], base)
    query_timeout = section["evaluate"].get("query_timeout", _RUN.query_timeout)
    check.positive("evaluate", "query_timeout", query_timeout, hint="seconds per query, e.g. 30")
    request_timeout = section["evaluate"].get("request_timeout", _RUN.request_timeout)
    check.positive("evaluate", "request_timeout", request_timeout, hint="seconds per request, e.g. 60")
    gold_from, evidence_coverage = check.resolution(section["evaluate"])
    calibrate = section["calibrate"]
    fail_under = calibrate.get("fail_under", {})
    for metric, bound in fail_under.items():
        if isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound):
            check.fail("calibrate", "fail_under", f"[calibrate] fail_under.{metric} must be a number")
        problem = fail_under_problem(bound)
        if problem is not None:
            check.fail(
                "calibrate",
                "fail_under",
                f"[calibrate] fail_under.{metric} = {bound!r} {problem}",
                hint="e.g. 0.7",
            )
    metric = calibrate.get("metric", HEADLINE_METRIC)
    check.metrics(metric, list(fail_under), tuple(k), metrics)
    for key in ("max_age_days", "max_gap"):
        if key in calibrate:
            check.positive("calibrate", key, calibrate[key], zero=True)
    confidence = calibrate.get("confidence", _CALIBRATE.confidence)
    if not 0.0 < confidence < 1.0:
        check.fail(
            "calibrate", "confidence", f"[calibrate] confidence must be between 0 and 1, got {confidence}"
        )
    gate_on = calibrate.get("gate_on", "point")
    if gate_on not in ("point", "bound"):
        check.fail(
            "calibrate", "gate_on", f"[calibrate] gate_on {gate_on!r} is unknown", hint="use point or bound"
        )
    generate = section["generate"]
    backend = generate.get("backend", "extractive")
    if backend not in ("llm", "extractive"):
        check.fail(
            "generate", "backend", f"[generate] backend {backend!r} is unknown", hint="use llm or extractive"
        )
    if backend == "llm" and "model" not in generate:
        check.fail(
            "generate",
            None,
            "[generate] model is required with backend llm",
            hint='e.g. model = "gpt-4o-mini"',
        )
    options = dict(generate.get("options", {}))
    check.generate_options(options, backend, generate.get("model"))
    drift = section["drift"]
    if drift and "traffic" not in drift:
        check.fail("drift", None, "[drift] traffic is required", hint='e.g. traffic = "traffic.txt"')
    if "traffic" in drift and "path" not in section["real"]:
        check.fail("drift", "traffic", "[drift] needs the real set to compare with", hint="set [real] path")
    drift_alpha = drift.get("alpha", 0.05)
    if not 0.0 < drift_alpha < 1.0:
        check.fail("drift", "alpha", f"[drift] alpha must be between 0 and 1, got {drift_alpha}")
    return PipelineConfig(
        path=p,
        corpus=resolve(section["corpus"]["path"]),
        synthetic=resolve(generate["output"]),
        real=resolve(section["real"]["path"]) if "path" in section["real"] else None,
        real_date=str(real_date) if real_date is not None else None,
        backend=backend,
        model=generate.get("model"),
        generate_options=options,
        retriever=_resolve_retriever(retriever, base),
        retriever_options=retriever_options,
        embed_model=section["evaluate"].get("embed_model"),
        query_timeout=float(query_timeout),
        request_timeout=float(request_timeout),
        k=tuple(k),
        metrics=metrics,
        by=tuple(by),
        gold_from=gold_from,
        evidence_coverage=float(evidence_coverage),
        metric=metric,
        max_age_days=float(calibrate.get("max_age_days", _CALIBRATE.max_age_days)),
        fail_under={str(m): float(v) for m, v in fail_under.items()},
        max_gap=float(calibrate["max_gap"]) if "max_gap" in calibrate else None,
        gate_on=gate_on,
        confidence=float(confidence),
        realism=bool(calibrate.get("realism", _CALIBRATE.realism)),
        output_dir=resolve(section["output"].get("dir", "realrecall-runs")),
        history=resolve(section["output"].get("history", "history.jsonl")),
        traffic=resolve(drift["traffic"]) if "traffic" in drift else None,
        drift_alpha=float(drift_alpha),
    )


def _resolve_retriever(spec: str, base: Path) -> str:
    """``path/to/file.py:function`` read relative to the config's folder, like every other path."""
    target, sep, function = spec.rpartition(":")
    if not sep or not (target.endswith(".py") or "/" in target or "\\" in target):
        return spec
    path = Path(target).expanduser()
    return f"{path if path.is_absolute() else base / path}:{function}"


class _Checker:
    """Raises the one-line errors of a config file, with the line of the key when it can be found."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def fail(
        self, section: str | None, key: str | None, message: str, *, hint: str | None = None
    ) -> NoReturn:
        raise InputError(message, path=self.path, line=self.line_of(section, key), hint=hint)

    def line_of(self, section: str | None, key: str | None) -> int | None:
        """The line of ``key`` in ``[section]`` (or of the section header), None if it cannot be told.

        A plain scan, not a TOML parser: good enough to point at the line, never used for values.
        """
        if section is None:
            return None
        header = re.compile(rf"^\s*\[\s*{re.escape(section)}\s*\]")
        pattern = None if key is None else re.compile(rf"(^|[{{,\s])[\"']?{re.escape(key)}[\"']?\s*=")
        inside, header_line = False, None
        for number, line in enumerate(self.lines, start=1):
            if re.match(r"^\s*\[", line):
                inside = header.match(line) is not None
                if inside:
                    header_line = number
                continue
            if inside and pattern is not None and pattern.search(line.split("#", 1)[0]):
                return number
        return header_line

    def shape(self, data: Mapping[str, Any]) -> None:
        for name, value in data.items():
            if name not in _SECTIONS:
                raise InputError(f"unknown section [{name}]", path=self.path, hint=_suggest(name, _SECTIONS))
            if not isinstance(value, dict):
                self.fail(
                    name, None, f"[{name}] must be a table", hint=f"write it as [{name}] with keys below"
                )
            expected = _SECTIONS[name]
            for key, item in value.items():
                if key not in expected:
                    self.fail(name, key, f"unknown key {key!r} in [{name}]", hint=_suggest(key, expected))
                # A bool is an int to isinstance: only a key declared bool takes one.
                if (isinstance(item, bool) and expected[key] is not bool) or not isinstance(
                    item, expected[key]
                ):
                    self.fail(name, key, f"[{name}] {key} has the wrong type ({type(item).__name__})")
        for name, keys in _REQUIRED.items():
            for key in keys:
                if key not in data.get(name, {}):
                    self.fail(name, None, f"[{name}] {key} is required")

    def positive(
        self, section: str, key: str, value: float, *, zero: bool = False, hint: str | None = None
    ) -> None:
        low_ok = value >= 0 if zero else value > 0
        if not (math.isfinite(value) and low_ok):
            bound = "0 or more" if zero else "more than 0"
            self.fail(section, key, f"[{section}] {key} must be a number of {bound}, got {value}", hint=hint)

    def date(self, text: str) -> None:
        try:
            dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            self.fail(
                "real", "date", f"[real] date {text!r} is not an ISO date", hint='write it as "2026-11-30"'
            )

    def resolution(self, evaluate: Mapping[str, Any]) -> tuple[str, float]:
        """``gold_from`` and ``evidence_coverage`` of ``[evaluate]``, checked as evaluate checks them."""
        gold_from = evaluate.get("gold_from", _EVALUATE.gold_from)
        coverage = evaluate.get("evidence_coverage", _EVALUATE.evidence_coverage)
        try:
            check_gold_from(gold_from, coverage)
        except SettingError as exc:
            self.fail("evaluate", exc.setting, f"[evaluate] {exc.message}", hint=exc.hint)
        return gold_from, coverage

    def retriever(self, evaluate: Mapping[str, Any], base: Path) -> tuple[str, dict[str, Any]]:
        """The retriever's name and the options given: ``retriever = "bm25"`` or ``[evaluate.retriever]``.

        The options are checked by building them now; the values kept are the converted ones (relative
        paths resolved), and only those the table gives, so the run builds the same options again.
        """
        from realrecall.evaluate.retrievers.registry import RETRIEVERS, choices, find_spec

        value = evaluate.get("retriever", DEFAULT_RETRIEVER)
        table = dict(value) if isinstance(value, dict) else {"name": value}
        spec = table.pop("name", DEFAULT_RETRIEVER)

        def fail(key: str | None, message: str, hint: str | None) -> NoReturn:
            # The key's line in an [evaluate.retriever] table, else the retriever line of [evaluate].
            line = self.line_of("evaluate.retriever", key) or self.line_of("evaluate", "retriever")
            raise InputError(message, path=self.path, line=line, hint=hint)

        if not isinstance(spec, str) or (spec not in RETRIEVERS and ":" not in spec):
            fail("name", f"[evaluate] retriever {spec!r} is unknown", f"choose from {choices()}")
        try:
            options = make_options(
                find_spec(spec), table, defaults={"embed_model": evaluate.get("embed_model")}, base=base
            )
        except InputError as exc:
            bad = next((key for key in table if re.search(rf"\b{re.escape(key)}\b", exc.message)), None)
            fail(bad, f"[evaluate.retriever] {exc.message}", exc.hint)
        if spec == "dense" and not getattr(options, "embed_model", None):
            fail(
                "name",
                "[evaluate] retriever dense needs embed_model",
                'e.g. embed_model = "text-embedding-3-small", or retriever = "local-dense"',
            )
        return spec, {key: getattr(options, key) for key in table}

    def metric_names(self, names: list[Any]) -> tuple[str, ...]:
        """``[evaluate] metrics``: names the metric registry knows (budgeted ones included)."""
        from realrecall.evaluate.metrics import parse_metric

        for name in names:
            if not isinstance(name, str):
                self.fail(
                    "evaluate", "metrics", "[evaluate] metrics must be a list of metric names",
                    hint='e.g. metrics = ["recall@10", "recall@2000tok"]',
                )  # fmt: skip
            try:
                parse_metric(name)
            except InputError as exc:
                self.fail("evaluate", "metrics", f"[evaluate] metrics: {exc.message}", hint=exc.hint)
        return tuple(dict.fromkeys(names))

    def metrics(self, metric: str, gates: list[str], k: tuple[int, ...], explicit: tuple[str, ...]) -> None:
        """The headline metric and the gates must be among the metrics evaluate computes."""
        computed = list(explicit) or default_metrics(k)
        where = "in [evaluate] metrics" if explicit else f"with k = {list(k)}"
        fix = "or add it to [evaluate] metrics" if explicit else "or add its cutoff to [evaluate] k"
        for key, name in [("metric", metric), *(("fail_under", gate) for gate in gates)]:
            if name not in computed:
                self.fail(
                    "calibrate",
                    key,
                    f"[calibrate] {key} {name!r} is not computed {where}",
                    hint=f"choose from {', '.join(computed)}, {fix}",
                )

    def generate_options(self, options: Mapping[str, Any], backend: str, model: str | None) -> None:
        """Keys of ``[generate] options`` are GenerateConfig's fields, and its values what they take."""
        from realrecall.generate.config import GenerateConfig

        valid = [item.name for item in fields(GenerateConfig) if item.name not in _SECTION_LEVEL]
        for key in options:
            if key in _SECTION_LEVEL:
                self.fail(
                    "generate",
                    key,
                    f"[generate] options: {key} is set in [generate] itself",
                    hint=f"move it out of options: {key} = ... under [generate]",
                )
            if key not in valid:
                self.fail(
                    "generate", key, f"unknown key {key!r} in [generate] options", hint=_suggest(key, valid)
                )
        # Values too, by building the config the run will use (it reads no file): a value of the wrong
        # kind is found now, before any input is read or any question generated.
        section_level = {"backend": backend, **({"model": model} if model else {})}
        try:
            GenerateConfig.from_options(
                {**section_level, **options}, source=self.path, label="[generate] option"
            )
        except InputError as exc:
            bad = next(
                (key for key in options if re.search(rf"\b{re.escape(key)}\b", exc.message)), "options"
            )
            raise InputError(
                exc.message, path=self.path, line=self.line_of("generate", bad), hint=exc.hint
            ) from None


# Given as keys of [generate] itself, so not in its options table.
_SECTION_LEVEL = ("backend", "model")


def _suggest(word: str, choices: Iterable[str]) -> str:
    names = list(choices)
    close = difflib.get_close_matches(word, names, n=1)
    known = ", ".join(names)
    return f"did you mean {close[0]!r}? (known: {known})" if close else f"known: {known}"

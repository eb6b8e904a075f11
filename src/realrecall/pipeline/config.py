"""The scheduled job's configuration (``pipeline.toml``), validated with errors that name the key.

```toml
[corpus]
path = "docs.jsonl"              # required

[real]                           # optional: the real gold set the figures are quoted on
path = "real.jsonl"
date = "2026-11-30"              # when it was collected (default: the file's modification date)

[generate]                       # the synthetic set, regenerated incrementally on every run
output = "synthetic.jsonl"       # required
backend = "llm"                  # or "extractive" (offline, no model; the default here)
model = "gpt-4o-mini"            # required with backend llm
per_chunk = 1                    # any setting of realrecall generate, by its name (GenerateConfig)
types = "lookup=1,conceptual=2,comparison=1"
concurrency = 8

[evaluate]                       # any setting of realrecall evaluate, by its name (EvaluateSettings)
retriever = "bm25"               # or dense, local-dense, hybrid, module:function, path/to/file.py:function
k = [1, 5, 10, 50]
metrics = ["recall@10", "recall@2000tok"]   # optional: explicit metrics (default: what k gives)
by = ["type", "language"]        # the pipeline's default
query_timeout = 30               # seconds a custom retriever may take per query (default 300)
gold_from = "auto"               # or "ids", "evidence" (auto: ids the corpus holds, evidence for the rest)
# With options, the retriever is a table instead: [evaluate.retriever] with name = "bm25", k1 = 1.2 ...
# (any option of the retriever, as docs/retrievers.md lists them).

[calibrate]                      # any setting of realrecall calibrate, by its name (CalibrateSettings)
metric = "recall@10"             # one of the metrics evaluated: [evaluate] metrics, or what k gives:
                                 # recall@K, mrr@<largest K>, ndcg@<K nearest 10>
calibrate_by = "type"
max_age_days = 90                # warn when the real set is older (the default, as in `realrecall calibrate`)
fail_under = { "recall@10" = 0.6 }
max_gap = 0.2
gate_on = "point"                # or "bound": gates check the interval's unfavourable bound
realism = false                  # true: the reports score how well a classifier tells the sets apart

[drift]                          # optional: is recent traffic still like the real set? (needs [real])
traffic = "traffic.txt"          # recent user queries, one a line or JSONL
alpha = 0.05                     # the alarm's significance level; a drift marks calibrated figures stale
                                 # (any setting of realrecall drift, by its name: DriftSettings)

[engine]                         # optional: where every stage's work runs (default: this process)
engine = "ray"                   # local or ray (pip install 'realrecall[ray]'); `run --engine` overrides
address = "auto"                 # an existing Ray cluster (default: one started here for the run)
retrieval_actors = 2             # any setting of the engine, by its name (EngineSettings)

[output]
dir = "realrecall-runs"          # results.json, per_query.jsonl and the reports of the last run
history = "history.jsonl"        # one line appended per run
```

``[generate]``, ``[evaluate]``, ``[calibrate]`` and ``[drift]`` map each key to the field of that
name of the stage's settings (``GenerateConfig``, ``EvaluateSettings``, ``CalibrateSettings``,
``DriftSettings``; ``[generate]`` has its ``output`` besides, ``[drift]`` its ``traffic``), so every
option of ``realrecall generate``, ``evaluate``, ``calibrate`` and ``drift`` can be set here, and is
checked by the same rules with the same words. Relative paths (a retriever's ``path/to/file.py``
included) are read relative to the folder of the config file. Every mistake is found before any work
starts and named with the file, the section and the key (and the line, where it can be found): an
unknown section or key (with the closest name), a value of the wrong type or out of range, a headline
metric or gate that ``k`` does not compute, an output that is one of the inputs. The old ``[generate]
options`` table is refused, naming the keys to move.

``[engine]`` maps its keys to ``EngineSettings``' fields the same way, and is the only place a pipeline
says where its work runs: it applies to every stage of the run, which shares one cluster. An engine
key under ``[generate]`` or ``[evaluate]`` (both stages' settings hold the engine's fields, as their
commands' ``--engine`` does) is refused in one line naming ``[engine]``: two places could disagree.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import UnionType
from typing import Any, NoReturn, TypeVar

from realrecall.calibrate.settings import CalibrateSettings, DriftSettings
from realrecall.errors import InputError, OutputError, SettingError
from realrecall.evaluate.retrievers.options import make_options
from realrecall.evaluate.settings import DEFAULT_RETRIEVER, HEADLINE_METRIC, EvaluateSettings
from realrecall.files import check_file_name, same_file
from realrecall.generate.config import GenerateConfig
from realrecall.settings import EngineSettings, Settings, setting_fields, settings_from

__all__ = ["PIPELINE_EVALUATE", "PIPELINE_GENERATE", "PipelineConfig", "load_pipeline_config"]

S = TypeVar("S", bound=Settings)

PIPELINE_GENERATE = GenerateConfig(backend="extractive")
"""What ``[generate]`` starts from: generate's defaults, offline (a model is named to use one)."""
PIPELINE_EVALUATE = EvaluateSettings(by=("type", "language"))
"""What ``[evaluate]`` starts from: evaluate's defaults, slicing by type and language."""

# The stages' sections: each key is a field of the stage's settings, by its name (and the section's
# own keys of _SECTIONS, such as [generate] output).
_STAGES: dict[str, type[Settings]] = {
    "generate": GenerateConfig,
    "evaluate": EvaluateSettings,
    "calibrate": CalibrateSettings,
    "drift": DriftSettings,
    "engine": EngineSettings,
}
# The engine's keys: [engine]'s alone, though the generate and evaluate settings hold them too.
_ENGINE_KEYS = frozenset(item.name for item in setting_fields(EngineSettings))
# The sections' own keys, with the type each takes.
_SECTIONS: dict[str, dict[str, type | UnionType | tuple[type, ...]]] = {
    "corpus": {"path": str},
    "real": {"path": str, "date": (str, dt.date)},
    "generate": {"output": str},
    "drift": {"traffic": str},
    "output": {"dir": str, "history": str},
}
_SECTION_NAMES = ("corpus", "real", "generate", "evaluate", "calibrate", "drift", "engine", "output")
_REQUIRED = {"corpus": ("path",), "generate": ("output",)}


def _keys(section: str) -> list[str]:
    """The keys ``[section]`` takes: the section's own, and its stage's settings."""
    own = list(_SECTIONS.get(section, {}))
    if section in _STAGES:
        # The engine's keys are [engine]'s only.
        left_out = _ENGINE_KEYS if section != "engine" else frozenset()
        fields = setting_fields(_STAGES[section])
        own += [item.name for item in fields if item.has_text_form and item.name not in left_out]
    return own


@dataclass(frozen=True)
class PipelineConfig:
    """Everything one run of the scheduled job needs, with paths resolved: each stage's settings."""

    path: Path
    corpus: Path
    synthetic: Path
    generate: GenerateConfig = PIPELINE_GENERATE
    evaluate: EvaluateSettings = PIPELINE_EVALUATE
    calibrate: CalibrateSettings = field(default_factory=CalibrateSettings)
    real: Path | None = None
    output_dir: Path = Path("realrecall-runs")
    history: Path = Path("history.jsonl")
    traffic: Path | None = None
    drift: DriftSettings = field(default_factory=DriftSettings)
    engine: EngineSettings = field(default_factory=EngineSettings)
    """``[engine]``: where every stage's work runs (this process, or one Ray cluster for the run)."""

    def __post_init__(self) -> None:
        if self.generate.batch_settings.batch and self.engine.on_ray:  # `run --engine ray`, or Python
            raise InputError(
                "[generate] batch = true and the Ray engine are two ways to send the requests",
                path=self.path,
                hint="drop batch = true from [generate], or run on the local engine",
            )
        for stage in ("generate", "evaluate"):
            if getattr(self, stage).engine_settings != EngineSettings():
                raise SettingError(
                    "engine_settings",
                    f"of a pipeline's {stage} settings is the pipeline's engine, which every stage shares",
                    hint="give PipelineConfig(engine=EngineSettings(...)), or [engine] in pipeline.toml",
                    label=f"PipelineConfig.{stage}.engine_settings",
                )

    def stage_generate(self) -> GenerateConfig:
        """``generate``'s settings as the run uses them: on the pipeline's engine."""
        return replace(self.generate, engine_settings=self.engine)

    def stage_evaluate(self) -> EvaluateSettings:
        """``evaluate``'s settings as the run uses them: on the pipeline's engine."""
        return replace(self.evaluate, engine_settings=self.engine)

    @property
    def metric(self) -> str:
        """The headline metric: ``[calibrate] metric``, or the one reports lead with by default."""
        return self.calibrate.metric or HEADLINE_METRIC


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
    section = {name: data.get(name, {}) for name in _SECTION_NAMES}

    def resolve(value: str) -> Path:
        candidate = Path(value).expanduser()
        return candidate if candidate.is_absolute() else base / candidate

    evaluation = check.stage("evaluate", PIPELINE_EVALUATE, check.retriever(section["evaluate"], base), base)
    dated = {"real_date": ("real", "date")} if "date" in section["real"] else None
    calibration = check.stage(
        "calibrate", CalibrateSettings(), _calibrate_values(check, section), base, given_as=dated
    )
    check.metrics(calibration.metric or HEADLINE_METRIC, list(calibration.fail_under), evaluation)
    generate = section["generate"]
    if generate.get("backend", PIPELINE_GENERATE.backend) == "llm" and "model" not in generate:
        check.fail(
            "generate",
            None,
            "[generate] model is required with backend llm",
            hint='e.g. model = "gpt-4o-mini"',
        )
    drift = section["drift"]
    if drift and "traffic" not in drift:
        check.fail("drift", None, "[drift] traffic is required", hint='e.g. traffic = "traffic.txt"')
    if "traffic" in drift and "path" not in section["real"]:
        check.fail("drift", "traffic", "[drift] needs the real set to compare with", hint="set [real] path")
    if "traffic" in drift and same_file(resolve(drift["traffic"]), resolve(section["real"]["path"])):
        # The real set tested against itself reads as "no drift", a finding about nothing.
        check.fail(
            "drift", "traffic", "[drift] traffic is the real set's file ([real] path)",
            hint="give recent user queries, another file",
        )  # fmt: skip
    history = section["output"].get("history", "history.jsonl")
    try:
        check_file_name(history, label="[output] history", example="history.jsonl")
    except OutputError as exc:  # "runs/": a Path drops the slash and a file "runs" would be appended to
        check.fail("output", "history", exc.message, hint=exc.hint)
    drifting = {key: value for key, value in drift.items() if key != "traffic"}
    drift_settings = check.stage("drift", DriftSettings(), drifting, base)
    engine = check.stage("engine", EngineSettings(), section["engine"], base)
    generation = check.generate({key: value for key, value in generate.items() if key != "output"})
    if generation.batch_settings.batch and engine.on_ray:
        # Said here, not once generation starts (after the corpus is read, maybe after a long wait).
        check.fail(
            "generate", "batch",
            '[generate] batch = true and [engine] engine = "ray" are two ways to send the requests',
            hint='drop batch = true from [generate], or set engine = "local" in [engine]',
        )  # fmt: skip
    return PipelineConfig(
        path=p,
        corpus=resolve(section["corpus"]["path"]),
        synthetic=resolve(generate["output"]),
        generate=generation,
        evaluate=evaluation,
        calibrate=calibration,
        real=resolve(section["real"]["path"]) if "path" in section["real"] else None,
        output_dir=resolve(section["output"].get("dir", "realrecall-runs")),
        history=resolve(history),
        traffic=resolve(drift["traffic"]) if "traffic" in drift else None,
        drift=drift_settings,
        engine=engine,
    )


def _calibrate_values(check: _Checker, section: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``[calibrate]``, with ``[real] date`` as its ``real_date`` (the real set's date, said once)."""
    values = dict(section["calibrate"])
    date = section["real"].get("date")
    if date is not None:
        if "real_date" in values:
            check.fail(
                "calibrate", "real_date", "[calibrate] real_date is [real] date already",
                hint="give the real set's date once, as [real] date",
            )  # fmt: skip
        values["real_date"] = str(date)
    return values


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
            if name not in _SECTION_NAMES:
                raise InputError(
                    f"unknown section [{name}]", path=self.path, hint=_suggest(name, _SECTION_NAMES)
                )
            if not isinstance(value, dict):
                self.fail(
                    name, None, f"[{name}] must be a table", hint=f"write it as [{name}] with keys below"
                )
            expected = _keys(name)
            for key, item in value.items():
                if (name, key) == ("generate", "options"):
                    self.old_generate_options(item)
                if name in ("generate", "evaluate") and key in _ENGINE_KEYS:
                    message = f"[{name}] {key} is a key of [engine], which sets the engine of every stage"
                    self.fail(name, key, message, hint=f"move {key} = ... to [engine]")
                if key not in expected:
                    self.fail(name, key, f"unknown key {key!r} in [{name}]", hint=_suggest(key, expected))
                types = _SECTIONS.get(name, {}).get(key)
                if types is not None and (isinstance(item, bool) or not isinstance(item, types)):
                    self.fail(name, key, f"[{name}] {key} has the wrong type ({type(item).__name__})")
        for name, keys in _REQUIRED.items():
            for key in keys:
                if key not in data.get(name, {}):
                    self.fail(name, None, f"[{name}] {key} is required")

    def stage(
        self,
        section: str,
        start: S,
        values: Mapping[str, Any],
        base: Path,
        *,
        given_as: Mapping[str, tuple[str, str]] | None = None,
    ) -> S:
        """``[section]`` as the stage's settings: each key its field's value, checked by the stage's own
        rules; a bad value is their message naming the section and the key (``given_as``: the place of
        a setting written elsewhere, ``{"real_date": ("real", "date")}``)."""
        try:
            return settings_from(type(start), values, start=start, base=base, what=f"[{section}]")
        except SettingError as exc:
            where, key = (given_as or {}).get(exc.setting, (section, exc.setting))
            raise exc.labelled(f"[{where}] {key}", path=self.path, line=self.line_of(where, key)) from None

    def retriever(self, evaluate: Mapping[str, Any], base: Path) -> dict[str, Any]:
        """``[evaluate]`` with its retriever named and its options checked: ``retriever = "bm25"``, or a
        table ``[evaluate.retriever]`` with the name and the options (or ``retriever_options``).

        The options are checked by building them now; the values kept are the converted ones (relative
        paths resolved), and only those given, so the run builds the same options again. A retriever
        named by its file (``path/to/file.py:function``) is read from the config's folder.
        """
        from realrecall.evaluate.retrievers.registry import RETRIEVERS, choices, find_spec

        values = dict(evaluate)
        value = values.get("retriever", DEFAULT_RETRIEVER)
        table = dict(value) if isinstance(value, dict) else {"name": value}
        spec = table.pop("name", DEFAULT_RETRIEVER)

        def fail(key: str | None, message: str, hint: str | None) -> NoReturn:
            # The key's line in an [evaluate.retriever] table, else the retriever line of [evaluate].
            line = self.line_of("evaluate.retriever", key) or self.line_of("evaluate", "retriever")
            raise InputError(message, path=self.path, line=line, hint=hint)

        if table and "retriever_options" in values:
            hint = "give them in [evaluate.retriever] alone"
            fail(None, "[evaluate] retriever options are given twice", hint)
        given = table or values.get("retriever_options", {})
        if not isinstance(given, dict):
            self.fail("evaluate", "retriever_options", "[evaluate] retriever_options must be a table")
        if not isinstance(spec, str) or (spec not in RETRIEVERS and ":" not in spec):
            fail("name", f"[evaluate] retriever {spec!r} is unknown", f"choose from {choices()}")
        embed_model = values.get("embed_model")
        try:
            options = make_options(find_spec(spec), given, defaults={"embed_model": embed_model}, base=base)
        except InputError as exc:
            bad = next((key for key in given if re.search(rf"\b{re.escape(key)}\b", exc.message)), None)
            fail(bad, f"[evaluate.retriever] {exc.message}", exc.hint)
        if spec == "dense" and not getattr(options, "embed_model", None):
            fail(
                "name",
                "[evaluate] retriever dense needs embed_model",
                'e.g. embed_model = "text-embedding-3-small", or retriever = "local-dense"',
            )
        if "retriever" in values:
            values["retriever"] = _resolve_retriever(spec, base)
        values["retriever_options"] = {key: getattr(options, key) for key in given}
        return values

    def metrics(self, metric: str, gates: list[str], evaluation: EvaluateSettings) -> None:
        """The headline metric and the gates must be among the metrics evaluate computes."""
        computed = list(evaluation.metric_names())
        explicit = bool(evaluation.metrics)
        where = "in [evaluate] metrics" if explicit else f"with k = {list(evaluation.k)}"
        fix = "or add it to [evaluate] metrics" if explicit else "or add its cutoff to [evaluate] k"
        for key, name in [("metric", metric), *(("fail_under", gate) for gate in gates)]:
            if name not in computed:
                self.fail(
                    "calibrate",
                    key,
                    f"[calibrate] {key} {name!r} is not computed {where}",
                    hint=f"choose from {', '.join(computed)}, {fix}",
                )

    def generate(self, values: Mapping[str, Any]) -> GenerateConfig:
        """``[generate]`` (but its ``output``) as a GenerateConfig: each key its field's value, checked by
        GenerateConfig's own rules. Built now, reading no file: a value of the wrong kind is found before
        any input is read or any question generated."""
        try:
            return settings_from(GenerateConfig, values, start=PIPELINE_GENERATE, base=self.path.parent)
        except SettingError as exc:
            label = f"[generate] {exc.setting}"
            raise exc.labelled(label, path=self.path, line=self.line_of("generate", exc.setting)) from None
        except InputError as exc:  # a reader's words ("bad weight 'x' ..."), or a rule across settings
            key = self._culprit(values, exc.message)
            named = f"{key}: " if key is not None and not exc.message.startswith(key) else ""
            message = f"[generate] {named}{exc.message}"
            line = self.line_of("generate", key)
            raise InputError(message, path=self.path, line=line, hint=exc.hint) from None

    def _culprit(self, values: Mapping[str, Any], message: str) -> str | None:
        """The key an error of GenerateConfig is about: the one its message names, else the first whose
        value alone breaks a rule; None for a rule no single key breaks."""
        named = [key for key in values if re.search(rf"\b{re.escape(key)}\b", message)]
        if named:
            return named[0]
        for key, value in values.items():
            try:
                settings_from(GenerateConfig, {key: value}, start=PIPELINE_GENERATE, base=self.path.parent)
            except InputError:
                return key
        return None

    def old_generate_options(self, options: object) -> NoReturn:
        """``[generate] options = { ... }``, the old spelling: refused, naming where its keys go now."""
        keys = list(options) if isinstance(options, dict) else []
        moved = ", ".join(f"{key} = ..." for key in keys) if keys else "per_chunk = 1"
        self.fail(
            "generate",
            "options",
            "[generate] options is no longer a table of its own: its keys are keys of [generate]",
            hint=f"write {moved} under [generate] and remove options",
        )


def _suggest(word: str, choices: Iterable[str]) -> str:
    names = list(choices)
    close = difflib.get_close_matches(word, names, n=1)
    known = ", ".join(names)
    return f"did you mean {close[0]!r}? (known: {known})" if close else f"known: {known}"

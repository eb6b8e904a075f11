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
retriever = "bm25"
k = [1, 5, 10, 50]
by = ["type", "language"]

[calibrate]
metric = "recall@10"
max_age_days = 180
fail_under = { "recall@10" = 0.6 }
max_gap = 0.2

[output]
dir = "realrecall-runs"          # results.json, per_query.jsonl and the reports of the last run
history = "history.jsonl"        # one line appended per run
```

Relative paths are read relative to the folder of the config file.
"""

from __future__ import annotations

import datetime as dt
import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError

__all__ = ["PipelineConfig", "load_pipeline_config"]

_SECTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "corpus": {"path": str},
    "real": {"path": str, "date": (str, dt.date)},
    "generate": {"output": str, "backend": str, "model": str, "options": dict},
    "evaluate": {"retriever": str, "k": list, "by": list, "embed_model": str},
    "calibrate": {
        "metric": str,
        "max_age_days": int,
        "fail_under": dict,
        "max_gap": float | int,
        "confidence": float,
    },
    "output": {"dir": str, "history": str},
}
_REQUIRED = {"corpus": ("path",), "generate": ("output",)}


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
    retriever: str = "bm25"
    embed_model: str | None = None
    k: tuple[int, ...] = (1, 5, 10, 50)
    by: tuple[str, ...] = ("type", "language")
    metric: str = "recall@10"
    max_age_days: int | None = None
    fail_under: Mapping[str, float] = field(default_factory=dict)
    max_gap: float | None = None
    confidence: float = 0.95
    output_dir: Path = Path("realrecall-runs")
    history: Path = Path("history.jsonl")


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Read and validate ``pipeline.toml``; every mistake names the file and the key."""
    p = Path(path)
    if not p.is_file():
        raise InputError(
            "pipeline config not found", path=p, hint="see `realrecall run --help` for an example"
        )
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=p) from exc
    except UnicodeDecodeError as exc:
        raise InputError("not valid UTF-8", path=p, hint="save the file as UTF-8") from exc
    _check_shape(data, p)
    base = p.parent
    section = {name: data.get(name, {}) for name in _SECTIONS}

    def resolve(value: str) -> Path:
        candidate = Path(value).expanduser()
        return candidate if candidate.is_absolute() else base / candidate

    real_date = section["real"].get("date")
    k = section["evaluate"].get("k", [1, 5, 10, 50])
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in k) or not k:
        raise InputError(
            "[evaluate] k must be a list of positive integers", path=p, hint="e.g. k = [1, 5, 10]"
        )
    by = section["evaluate"].get("by", ["type", "language"])
    if not all(isinstance(name, str) for name in by):
        raise InputError("[evaluate] by must be a list of field names", path=p, hint='e.g. by = ["type"]')
    fail_under = section["calibrate"].get("fail_under", {})
    for metric, bound in fail_under.items():
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise InputError(f"[calibrate] fail_under.{metric} must be a number", path=p)
    backend = section["generate"].get("backend", "extractive")
    if backend not in ("llm", "extractive"):
        raise InputError(f"[generate] backend {backend!r} is unknown", path=p, hint="use llm or extractive")
    if backend == "llm" and "model" not in section["generate"]:
        raise InputError(
            "[generate] model is required with backend llm", path=p, hint='e.g. model = "gpt-4o-mini"'
        )
    return PipelineConfig(
        path=p,
        corpus=resolve(section["corpus"]["path"]),
        synthetic=resolve(section["generate"]["output"]),
        real=resolve(section["real"]["path"]) if "path" in section["real"] else None,
        real_date=str(real_date) if real_date is not None else None,
        backend=backend,
        model=section["generate"].get("model"),
        generate_options=dict(section["generate"].get("options", {})),
        retriever=section["evaluate"].get("retriever", "bm25"),
        embed_model=section["evaluate"].get("embed_model"),
        k=tuple(k),
        by=tuple(by),
        metric=section["calibrate"].get("metric", "recall@10"),
        max_age_days=section["calibrate"].get("max_age_days"),
        fail_under={str(m): float(v) for m, v in fail_under.items()},
        max_gap=float(section["calibrate"]["max_gap"]) if "max_gap" in section["calibrate"] else None,
        confidence=float(section["calibrate"].get("confidence", 0.95)),
        output_dir=resolve(section["output"].get("dir", "realrecall-runs")),
        history=resolve(section["output"].get("history", "history.jsonl")),
    )


def _check_shape(data: Mapping[str, Any], path: Path) -> None:
    for name, value in data.items():
        if name not in _SECTIONS:
            raise InputError(f"unknown section [{name}]", path=path, hint=_suggest(name, _SECTIONS))
        if not isinstance(value, dict):
            raise InputError(
                f"[{name}] must be a table", path=path, hint=f"write it as [{name}] with keys below"
            )
        for key, item in value.items():
            expected = _SECTIONS[name]
            if key not in expected:
                raise InputError(f"unknown key {key!r} in [{name}]", path=path, hint=_suggest(key, expected))
            if isinstance(item, bool) or not isinstance(item, expected[key]):
                raise InputError(f"[{name}] {key} has the wrong type ({type(item).__name__})", path=path)
    for name, keys in _REQUIRED.items():
        for key in keys:
            if key not in data.get(name, {}):
                raise InputError(f"[{name}] {key} is required", path=path)


def _suggest(word: str, choices: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    known = ", ".join(choices)
    return f"did you mean {close[0]!r}? (known: {known})" if close else f"known: {known}"

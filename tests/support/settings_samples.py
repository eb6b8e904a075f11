"""A value other than its default for every setting of a stage, made from the field's declared type.

The tests that walk a stage's settings (every field set from the command line and from pipeline.toml)
use one sample per field, so a field added to a settings class is walked with no test edited; only a
field whose rules take a shape its type cannot suggest (a metric name, a date) has an entry in
``SHAPED``, and one no sample can be made for fails the walk naming it.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from realrecall.settings import SettingField, Settings, setting_fields, shown

# Fields whose rules want a shape their type alone does not give (known metric names, ISO dates).
SHAPED: dict[str, Any] = {
    "metrics": ("recall@3", "mrr@3"),
    "metric": "recall@5",
    "real_date": "2026-01-31",
    "fail_under": {"recall@5": 0.25},
    "stratum_weights": {"lookup": 0.75, "conceptual": 0.25},
    "origins": {"questions": "real"},
    "retriever": "local-dense",
    "retriever_options": {"k1": "1.5"},
    "calibrate_by": "language",
    "hybrid_dense": "dense",
    "by": ("language", "form"),
    "base_url": "http://127.0.0.1:9/v1",
}


def walked_fields(cls: type[Settings]) -> list[SettingField]:
    """The settings a command line or a config file can give."""
    return [item for item in setting_fields(cls) if item.has_text_form]


def sample(item: SettingField, folder: Path) -> Any:
    """A typed value of ``item`` other than its default."""
    value = SHAPED[item.name] if item.name in SHAPED else _of_type(item.hint, item.default, folder, item.name)
    assert value != item.default, f"the sample of {item.name} is its default"
    return value


def as_text(value: Any) -> list[str]:
    """The command-line words of a typed sample: ``["1,5"]``, or one ``KEY=VALUE`` word per item."""
    if isinstance(value, Mapping):
        return [f"{key}={shown(item)}" for key, item in value.items()]
    return [shown(value)]


def as_toml(value: Any) -> str:
    """A TOML value of a typed sample."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(as_toml(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f'"{key}" = {as_toml(item)}' for key, item in value.items()) + " }"
    raise AssertionError(f"no TOML for {value!r}")


def _of_type(hint: Any, default: Any, folder: Path, name: str) -> Any:
    args = typing.get_args(hint)
    if type(None) in args:
        inner = [arg for arg in args if arg is not type(None)]
        assert len(inner) == 1, f"no sample for {name}: {hint}"
        return _of_type(inner[0], default, folder, name)
    if typing.get_origin(hint) is Literal:
        return next(choice for choice in args if choice != default)
    if hint is bool:
        return not default
    if hint is int:
        return 3 if default is None else default + 1
    if hint is float:
        return 0.375 if default is None else default / 2
    if hint is str:
        return f"sample-{name}"
    if hint is Path:
        return folder / f"{name}.sample"
    if typing.get_origin(hint) is tuple and args[0] is int:
        return (2, 3)
    raise AssertionError(f"no sample for setting {name} ({hint}): add one to SHAPED")

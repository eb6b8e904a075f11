"""One settings object per stage: a frozen dataclass whose fields are the stage's options.

A setting is declared once, as a field with its type, its default and one line of help::

    k: Annotated[tuple[int, ...], "Cutoffs, comma-separated: recall@k of each, ..."] = (1, 5, 10, 50)

and everything else is derived from that declaration:

- the object converts and checks every value when it is made (``Settings.__post_init__``): a value is
  taken in its declared type or as the text a command line or a file gives (``"1,5,10"`` for a tuple
  of ints, ``["recall@10=0.7"]`` for a mapping, ``"none"`` for None), and a value of the wrong kind is
  one ``SettingError`` naming the setting. Rules beyond the type (a cut-off is >= 1) are written once,
  in the class's ``__post_init__``; whoever gave the value (Python, the CLI, pipeline.toml) gets the
  same message, with the setting named their way (``SettingError.labelled``);
- ``settings_from(cls, values)`` makes one from a mapping of field names (a pipeline.toml section,
  keyword arguments), refusing an unknown name with the closest one; ``settings_with`` is what a
  library function taking ``settings=None, **options`` calls;
- the command line's options (``realrecall.cli.settings_options``): one ``--field-name`` per field
  (``Flag`` renames it), with the declaration's help and the field's default; a field whose text
  form its type cannot give (weights whose names may go without one, a shard written ``0/4``, a
  ``--screen/--no-screen`` switch standing for a choice) declares how it is read with ``Text``;
- the docs' tables (``setting_rows``).

A field whose type is itself a ``Settings`` class is *flattened*: its fields are set by their own names
beside the outer ones (``workers`` is ``EvaluateSettings.run_settings.workers``), so names are unique
across the levels. A field whose type cannot be written as text (a callback) is Python's alone: it has
no option and no pipeline key.

A setting every stage shares (say, where the work runs) is one field of ``StageSettings``, the base of
every stage's settings: each stage's command line, pipeline section and library function then take it
with nothing else edited.

This module is a leaf (the standard library and ``errors``): the CLI reads the declarations at start-up.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from realrecall.errors import SettingError

__all__ = [
    "ENGINES",
    "BatchSettings",
    "EngineName",
    "EngineSettings",
    "Flag",
    "SettingField",
    "Settings",
    "StageSettings",
    "Text",
    "check_choice",
    "convert",
    "setting_fields",
    "setting_rows",
    "settings_from",
    "settings_with",
    "shown",
]

S = TypeVar("S", bound="Settings")


@dataclass(frozen=True)
class Flag:
    """How a setting is written on the command line when ``--field-name`` will not do.

    ``Annotated[float, "Warn when ...", Flag("--max-age")]``. ``metavar``: what the value looks like
    in ``--help`` (``METRIC=VALUE``), and in the message when a ``KEY=VALUE`` item is malformed.
    """

    name: str
    metavar: str | None = None


@dataclass(frozen=True)
class Text:
    """How a setting is read from a command line or a config file when its type's own form will not
    do: ``Annotated[Mapping[str, float], "Weights.", Text(read_weights, "NAME[=WEIGHT],...")]``.

    ``read`` takes what was given (a command line's text, a config file's value, or a value already in
    the field's form, which it returns as it is) and returns the field's value, or raises a
    SettingError naming the setting (or an InputError whose words name what is wrong). ``form`` is how
    the command line gives it: ``"text"``, one value; ``"repeated"``, one option per item (``read``
    gets the list); ``"switch"``, ``--name/--no-name`` (``read`` gets True or False; given neither, the
    field keeps its default). ``metavar``: what the value looks like in ``--help``.
    """

    read: Callable[[Any], object]
    metavar: str = "TEXT"
    form: Literal["text", "repeated", "switch"] = "text"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Base of every settings dataclass: converts and checks each field when an object is made.

    A subclass adds its rules in its own ``__post_init__``, after calling this one.
    """

    def __post_init__(self) -> None:
        for item in _own_fields(type(self)):
            value = getattr(self, item.name)
            converted = convert(item.name, value, item.hint)
            if converted is not value:
                object.__setattr__(self, item.name, converted)


EngineName = Literal["local", "ray"]
ENGINES: tuple[EngineName, ...] = ("local", "ray")


@dataclass(frozen=True, kw_only=True)
class EngineSettings(Settings):
    """Where the work runs. ``local``: in this process, as always. ``ray``: evaluate's retrieval and
    per-query scoring as a Ray Data job and generate's requests through a pool of Ray actors, while
    every statistic, report and file write stays here, on the driver (docs/scale.md).

    The evaluate and generate stages hold one (``engine_settings``), set by its fields' names
    (``engine``, ``address``, ...) like their own; calibrate's one-call mode takes evaluate's."""

    engine: Annotated[
        EngineName,
        "Where the work runs: local (this process) or ray (a Ray cluster; pip install 'realrecall[ray]').",
    ] = "local"
    address: Annotated[
        str | None,
        "Ray engine: the cluster to join (host:port, ray://host:port or auto); default: start one here.",
        Flag("--ray-address"),
    ] = None
    num_cpus: Annotated[
        int | None,
        "Ray engine: CPUs of the cluster started here (default: every CPU of this machine).",
        Flag("--ray-cpus"),
    ] = None
    retrieval_actors: Annotated[
        int | None, "Ray engine: actors that each build the retriever once and search (default: one a CPU)."
    ] = None
    generation_actors: Annotated[
        int | None, "Ray engine: actors that each hold an LLM client and send the requests (one a CPU)."
    ] = None
    actor_retries: Annotated[
        int, "Ray engine: times an actor that dies is restarted and its work retried before the run stops."
    ] = 3
    ray_logs: Annotated[bool, "Ray engine: show Ray's own log lines (hidden by default)."] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.address is not None and not self.address.strip():
            raise SettingError("address", "must name a Ray cluster, got ''", hint="e.g. auto, 10.0.0.5:6379")
        for name in ("num_cpus", "retrieval_actors", "generation_actors"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise SettingError(name, f"must be a whole number >= 1, got {value!r}", hint="e.g. 2")
        if self.actor_retries < 0:
            raise SettingError(
                "actor_retries", f"must be a whole number >= 0, got {self.actor_retries!r}", hint="e.g. 3"
            )
        if self.address is not None and self.num_cpus is not None:
            raise SettingError(
                "num_cpus",
                "is for a cluster started here; a cluster joined at an address has its own",
                hint="give address or num_cpus, not both",
            )

    @property
    def on_ray(self) -> bool:
        return self.engine == "ray"


@dataclass(frozen=True, kw_only=True)
class BatchSettings(Settings):
    """Whether the requests go through the provider's Batch API (cheaper, slower, resumable), how often
    a batch is polled and how long this process waits for it (``generate.batch.BatchOptions`` is made
    from them and checked by these rules).

    The generate and judge commands hold one, set by its fields' names (``--batch``,
    ``--poll-interval``, ``--batch-timeout``)."""

    batch: Annotated[bool, "Use the Batch API (cheaper, slower; resumable)."] = False
    poll_interval: Annotated[float, "Seconds between batch status checks."] = 30.0
    batch_timeout: Annotated[
        float | None, "Stop waiting for a batch after this many seconds (a rerun resumes it)."
    ] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        # 0 would poll in a tight loop; infinity would never poll again.
        if not (math.isfinite(self.poll_interval) and self.poll_interval > 0):
            raise SettingError(
                "poll_interval",
                f"must be a number of seconds > 0, got {self.poll_interval!r}",
                hint="e.g. 30",
            )
        if self.batch_timeout is not None and not (
            math.isfinite(self.batch_timeout) and self.batch_timeout >= 0
        ):
            raise SettingError(
                "batch_timeout",
                f"must be a number of seconds >= 0, got {self.batch_timeout!r}",
                hint="e.g. 600",
            )


@dataclass(frozen=True, kw_only=True)
class StageSettings(Settings):
    """Base of each stage's settings (evaluate, calibrate, compare): a field here is every stage's."""


@dataclass(frozen=True)
class SettingField:
    """One setting as the front ends see it: a field, flattened out of any nested settings."""

    name: str
    hint: Any
    """The declared type, without its ``Annotated`` help."""
    help: str
    default: Any
    flag: Flag | None
    path: tuple[str, ...]
    """Attributes from the outer settings object to the value: ``("run_settings", "workers")``."""
    text: Text | None = None
    """How the value is read from text, when the type's own form will not do."""

    @property
    def option(self) -> str:
        """The command-line option: ``--field-name``, or the name its ``Flag`` gives."""
        return self.flag.name if self.flag is not None else "--" + self.name.replace("_", "-")

    @property
    def has_text_form(self) -> bool:
        """Whether a command line or a config file can give it (a callback cannot)."""
        return self.text is not None or _text_form(self.hint)


def setting_fields(cls: type[Settings]) -> tuple[SettingField, ...]:
    """Every setting of ``cls``, nested settings flattened into their fields, in declaration order."""
    cached = _FLAT.get(cls)
    if cached is not None:
        return cached
    found: list[SettingField] = []
    for item in _own_fields(cls):
        if _is_settings(item.hint):
            found.extend(
                dataclasses.replace(inner, path=(item.name, *inner.path))
                for inner in setting_fields(item.hint)
            )
        else:
            found.append(item)
    names = [item.name for item in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # a declaration mistake, found by the first test that touches the class
        raise RuntimeError(f"{cls.__name__}: settings {repeated} are declared twice (nested names differ)")
    _FLAT[cls] = tuple(found)
    return _FLAT[cls]


# Each class's fields, read from its declaration once (type hints are resolved on first use).
_FLAT: dict[type[Settings], tuple[SettingField, ...]] = {}
_OWN: dict[type[Settings], tuple[SettingField, ...]] = {}


def _own_fields(cls: type[Settings]) -> tuple[SettingField, ...]:
    cached = _OWN.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls, include_extras=True)
    found = []
    for item in dataclasses.fields(cls):
        hint = hints[item.name]
        extras: tuple[Any, ...] = ()
        if typing.get_origin(hint) is typing.Annotated:
            hint, *rest = typing.get_args(hint)
            extras = tuple(rest)
        if item.default is not dataclasses.MISSING:
            default: Any = item.default
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = dataclasses.MISSING
        found.append(
            SettingField(
                name=item.name,
                hint=hint,
                help=next((extra for extra in extras if isinstance(extra, str)), ""),
                default=default,
                flag=next((extra for extra in extras if isinstance(extra, Flag)), None),
                path=(item.name,),
                text=next((extra for extra in extras if isinstance(extra, Text)), None),
            )
        )
    _OWN[cls] = tuple(found)
    return _OWN[cls]


def settings_from(
    cls: type[S],
    values: Mapping[str, object],
    *,
    start: S | None = None,
    text: bool = False,
    base: Path | None = None,
    what: str | None = None,
) -> S:
    """``cls`` with the settings ``values`` names (flattened names included), the rest from ``start``
    (default: the defaults). An unknown name is a SettingError naming the closest one.

    ``text``: the values are a command line's text (``"1,5,10"``, ``"none"``, ``["k1=1.2"]``), parsed
    by each field's type first; otherwise they are typed, as Python and TOML give them. A field with a
    ``Text`` reads its value either way. ``base``: the folder relative paths are read from (a config
    file's).
    """
    table = {item.name: item for item in setting_fields(cls)}
    for key in values:
        if key not in table:
            raise _unknown(str(key), list(table), what or cls.__name__)
    changes: dict[str, object] = {}
    nested: dict[str, dict[str, object]] = {}
    for key, value in values.items():
        item = table[key]
        if item.text is not None:
            value = item.text.read(value)
        elif text:
            value = parse(key, value, item.hint)
        if base is not None and isinstance(value, str | Path) and Path in _members(item.hint):
            value = _relative_to(base, value)
        if len(item.path) == 1:
            changes[key] = value
        else:
            nested.setdefault(item.path[0], {})[key] = value
    groups = {item.name: item.hint for item in _own_fields(cls)}
    for group, inner in nested.items():
        inner_start = getattr(start, group) if start is not None else None
        changes[group] = settings_from(groups[group], inner, start=inner_start, base=base, what=what)
    if start is None:
        return cls(**changes)
    return dataclasses.replace(start, **changes) if changes else start


def settings_with(
    cls: type[S], settings: S | Mapping[str, object] | None, options: Mapping[str, object], *, what: str
) -> S:
    """The settings a library function runs with: ``settings`` (an object, a mapping or None for the
    defaults) with the keyword ``options`` over it. ``what`` names the function in errors."""
    if settings is None or isinstance(settings, cls):
        return settings_from(cls, options, start=settings, what=what)
    if isinstance(settings, Mapping):
        return settings_from(cls, {**settings, **options}, what=what)
    raise SettingError("settings", f"of {what} must be a {cls.__name__}, got {type(settings).__name__}")


def check_choice(name: str, value: object, choices: typing.Sequence[str]) -> None:
    """The one message for a value that is not one of ``choices``."""
    if value not in choices:
        raise SettingError(name, f"must be {_one_of(choices)}, got {value!r}", hint=f"e.g. {choices[0]}")


def convert(name: str, value: object, hint: object) -> object:
    """``value`` checked against ``hint``, in the field's own form (a list becomes a tuple, an int a
    float, text a Path, one item a tuple of one); a SettingError naming ``name`` if it is not one."""
    if _is_mapping(_without_none(hint)) and not (value is None and _is_optional(hint)):
        return _mapping(name, value, _without_none(hint))
    converted = _typed(hint, value)
    if converted is _NO:
        if typing.get_origin(hint) is Literal:
            check_choice(name, value, [str(arg) for arg in typing.get_args(hint)])
        raise SettingError(name, f"must be {type_text(hint)}, got {_shown_value(value)}")
    return converted


def parse(name: str, value: object, hint: object) -> object:
    """A command line's text as ``hint``'s value (``"1,5,10"``, ``"none"``, ``["a=1"]``); anything but
    text (a flag's bool) is left as given. The result is checked by ``convert``, when the object is made."""
    if _is_mapping(_without_none(hint)):
        if _is_none_text(value) and _is_optional(hint):
            return None
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list | tuple) and all(isinstance(item, str) for item in items):
            value_hint = _value_type(_without_none(hint))
            parsed_items = {}
            for key, text in _assignments(name, items, value_hint).items():
                parsed_items[key] = _parsed(value_hint, text)
                if parsed_items[key] is _NO:
                    raise SettingError(name, f"of {key!r} must be {type_text(value_hint)}, got {text!r}")
            return parsed_items
        return value
    if not isinstance(value, str):
        return value
    parsed = _parsed(hint, value)
    if parsed is _NO:
        raise SettingError(name, f"must be {type_text(hint)}, got {value!r}")
    return parsed


def setting_rows(cls: type[Settings]) -> list[tuple[str, str, str, str]]:
    """``(name, type, default, help)`` of each setting a command line or a file can give, for docs."""
    return [
        (item.name, type_text(item.hint), shown(item.default) or "none", item.help)
        for item in setting_fields(cls)
        if item.has_text_form
    ]


def shown(value: object) -> str:
    """A default as a command line writes it: ``1,5,10,50``, ``true``, ``0.95``; empty for none."""
    if value is None or value is dataclasses.MISSING:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(shown(item) for item in value)
    if isinstance(value, Mapping):
        return ",".join(f"{key}={shown(item)}" for key, item in value.items())
    return str(value)


def type_text(hint: object) -> str:
    """What a value of ``hint`` is, in a message: ``a whole number``, ``one of auto, ids, evidence``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        names = list(dict.fromkeys(type_text(member) for member in typing.get_args(hint)))
        return " or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1]
    if origin is Literal:
        return _one_of([str(arg) for arg in typing.get_args(hint)])
    if origin is tuple:
        return f"a list of {_plural(typing.get_args(hint)[0])}"
    if _is_mapping(hint):
        return f"a table of names to {_plural(_value_type(hint))}"
    return _NAMES.get(hint, "a Python object (Python only)")


_NAMES: dict[object, str] = {
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    str: "text",
    Path: "a path",
    type(None): "none",
    object: "a value",
}
_PLURALS: dict[object, str] = {
    int: "whole numbers",
    float: "numbers",
    bool: "true or false values",
    str: "names",
    Path: "paths",
    object: "values",
}


def _plural(hint: object) -> str:
    if typing.get_origin(hint) is Literal:
        return f"values among {', '.join(str(arg) for arg in typing.get_args(hint))}"
    return _PLURALS.get(hint, "values")


def _one_of(choices: typing.Sequence[str]) -> str:
    return "one of " + ", ".join(choices)


class _Missing:
    def __repr__(self) -> str:
        return "<not converted>"


_NO: Any = _Missing()
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _typed(hint: object, value: object) -> object:
    """``value`` if it is a ``hint`` (in the field's own form), else ``_NO``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(hint)
        if value is None:
            return None if type(None) in members else _NO
        for member in members:
            if member is not type(None):
                converted = _typed(member, value)
                if converted is not _NO:
                    return converted
        return _NO
    if hint is type(None):
        return None if value is None else _NO
    if origin is Literal:
        return value if value in typing.get_args(hint) else _NO
    if origin is tuple:
        items = list(value) if isinstance(value, list | tuple) else [value]  # one item: a tuple of one
        converted = [_typed(typing.get_args(hint)[0], item) for item in items]
        return _NO if any(item is _NO for item in converted) else tuple(converted)
    if _is_settings(hint):
        if isinstance(value, typing.cast(type, hint)):
            return value
        return settings_from(typing.cast(type[Settings], hint), value) if isinstance(value, Mapping) else _NO
    if hint in _TYPED:
        return _TYPED[hint](value)
    if hint is Any or hint is object:
        return value
    if origin is Callable:
        return value if callable(value) else _NO
    if isinstance(hint, type):
        return value if isinstance(value, hint) else _NO
    return value


def _typed_float(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        # NaN and infinity are refused: a gate or a bound compared with either passes or fails always.
        return float(value) if math.isfinite(value) else _NO
    return _NO


def _typed_path(value: object) -> object:
    if isinstance(value, Path):
        return value
    if isinstance(value, str) and value.strip():  # a path given as text, as Python callers often do
        return Path(value.strip()).expanduser()
    return _NO


_TYPED: dict[object, Callable[[object], object]] = {
    bool: lambda value: value if isinstance(value, bool) else _NO,
    int: lambda value: value if isinstance(value, int) and not isinstance(value, bool) else _NO,
    float: _typed_float,
    str: lambda value: value if isinstance(value, str) else _NO,
    Path: _typed_path,
}


def _parsed(hint: object, text: object) -> object:
    """``text`` (a command line's) as a value of ``hint``, else ``_NO``; a value that is not text is
    left as it is."""
    if not isinstance(text, str):
        return text
    stripped = text.strip()
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(hint)
        if type(None) in members and _is_none_text(stripped):
            return None
        for member in members:
            if member is not type(None):
                parsed = _parsed(member, text)
                if parsed is not _NO and _typed(member, parsed) is not _NO:
                    return parsed
        return _NO
    if origin is Literal:
        return stripped
    if origin is tuple:
        items = [_parsed(typing.get_args(hint)[0], part) for part in stripped.split(",") if part.strip()]
        return _NO if any(item is _NO for item in items) else tuple(items)
    if hint is bool:
        lowered = stripped.lower()
        return lowered in _TRUE if lowered in (*_TRUE, *_FALSE) else _NO
    if hint in (int, float):
        try:
            return typing.cast(Callable[[str], object], hint)(stripped)
        except ValueError:
            return _NO
    if hint in (str, Any, object):
        return text
    if hint is Path:
        return Path(stripped).expanduser() if stripped else _NO
    return _NO  # a Python object (a callback): no text makes one


def _mapping(name: str, value: object, hint: object) -> dict[Any, Any]:
    """A mapping whose values are each checked, an error naming the key whose value is wrong."""
    if not isinstance(value, Mapping):
        raise SettingError(name, f"must be {type_text(hint)}, got {_shown_value(value)}")
    value_hint = _value_type(hint)
    converted = {}
    for key, item in value.items():
        result = _typed(value_hint, item)
        if result is _NO:
            raise SettingError(name, f"of {key!r} must be {type_text(value_hint)}, got {_shown_value(item)}")
        converted[key] = result
    return converted


def _assignments(name: str, items: typing.Sequence[str], value_hint: object) -> dict[str, str]:
    """``["recall@10=0.7,ndcg@10=0.5"]`` -> ``{"recall@10": "0.7", "ndcg@10": "0.5"}``; no key twice.

    Items of a mapping to numbers or choices may be comma-separated, and split at their last ``=`` (a
    gold set's name may hold one); free text values (a retriever option's URL) are split at the first.
    """
    free = value_hint in (str, object, Any)
    parts = items if free else [part for item in items for part in item.split(",") if part.strip()]
    parsed: dict[str, str] = {}
    for part in parts:
        key, sep, text = part.partition("=") if free else part.rpartition("=")
        key = key.strip()
        if not sep or not key:
            raise SettingError(name, f"takes KEY=VALUE items, got {part!r}", hint="e.g. name=value")
        if key in parsed:
            raise SettingError(name, f"gives {key!r} twice", hint="give each key once")
        parsed[key] = text.strip()
    return parsed


def _unknown(key: str, names: list[str], what: str) -> SettingError:
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    known = f"settings: {', '.join(names)}"
    return SettingError(key, f"is not a setting of {what}", label=repr(key), hint=f"{guess}({known})")


def _relative_to(base: Path, value: str | Path) -> object:
    if isinstance(value, str) and not value.strip():
        return value
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _members(hint: object) -> tuple[object, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _is_optional(hint: object) -> bool:
    return type(None) in _members(hint) and len(_members(hint)) > 1


def _without_none(hint: object) -> object:
    members = [member for member in _members(hint) if member is not type(None)]
    return members[0] if len(members) == 1 else hint


def _is_mapping(hint: object) -> bool:
    return typing.get_origin(hint) in (Mapping, dict)


def _value_type(hint: object) -> object:
    args = typing.get_args(hint)
    return args[1] if len(args) == 2 else object


def _is_settings(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, Settings)


def _is_none_text(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("none", "null")


def _text_form(hint: object) -> bool:
    """Whether a value of ``hint`` can be written as text (or TOML): scalars, choices, lists, tables."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return all(_text_form(member) for member in typing.get_args(hint) if member is not type(None))
    if origin is Literal or hint in _TYPED or hint is object or hint is Any:
        return True
    if origin is tuple:
        return _text_form(typing.get_args(hint)[0])
    if _is_mapping(hint):
        return _text_form(_value_type(hint))
    return False


def _shown_value(value: object) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return repr(value)

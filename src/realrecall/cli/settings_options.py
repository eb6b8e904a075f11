"""A command's options derived from a stage's settings dataclass: one option per field, help from its
declaration, default from its default (``realrecall.settings``).

``@settings_options(Group(EvaluateSettings, "settings"))`` under ``@app.command()`` replaces the
command's ``settings`` parameter by one option per setting (``--k``, ``--by``, ``--workers``...) and
calls the command with the object made from the options given (the others keep their defaults). The
options take text and the settings convert and check it, so ``--k 0`` and ``k = [0]`` in pipeline.toml
break one rule with one message, each naming the setting its own way.

A group marked ``over`` gives its parameter an ``Over`` instead: the options given on the command line,
to lay over settings read elsewhere (``run --engine ray`` over pipeline.toml's ``[engine]``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer

from realrecall.cli.application import user_errors
from realrecall.errors import EndpointSilent, ServerSilent, SettingError
from realrecall.settings import SettingField, Settings, Text, setting_fields, settings_from, shown

__all__ = ["Group", "Over", "named_as_options", "options_given", "settings_options"]

Command = Callable[..., Any]
S = TypeVar("S", bound=Settings)


@dataclass(frozen=True)
class Group:
    """The options of one settings class on a command.

    ``param``: the command's parameter that receives the object. ``help_prefix`` goes before each
    option's help (``One-call mode: ``), ``help_suffix[name]`` after one (the retriever names, filled
    in when help is shown). A setting two groups share (``by``) is one option setting both.
    """

    cls: type[Settings]
    param: str
    help_prefix: str = ""
    help_suffix: Mapping[str, str] = field(default_factory=dict)
    over: bool = False
    """The parameter gets an ``Over`` (the options given) instead of a settings object."""


@dataclass(frozen=True)
class Over:
    """The options of one settings class given on the command line, to lay over other settings."""

    group: Group
    given: Mapping[str, Any]
    """Each setting given, by its field's name, as the command line's text."""

    def over(self, start: S) -> S:
        """``start`` with the options given over it; a rule broken across both names the option."""
        return typing.cast(S, _made(self.group, self.given, start=start))


def settings_options(*groups: Group) -> Callable[[Command], Command]:
    """Give a command one option per setting of each group, and the settings objects they make."""

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        owners: dict[str, list[Group]] = {}
        derived: dict[str, list[inspect.Parameter]] = {}
        for group in groups:
            if group.param not in signature.parameters:
                raise RuntimeError(
                    f"{command.__name__} has no parameter {group.param!r} for {group.cls.__name__}"
                )
            derived[group.param] = []
            for item in _options(group.cls):
                if item.name in signature.parameters:
                    raise RuntimeError(
                        f"{command.__name__}: option {item.name!r} is both a setting and a parameter"
                    )
                if item.name not in owners:
                    derived[group.param].append(_parameter(item, group))
                owners.setdefault(item.name, []).append(group)
        parameters = []
        for parameter in signature.parameters.values():
            if parameter.name in derived:
                parameters.extend(derived[parameter.name])
            else:
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        def with_settings(**given: Any) -> Any:
            texts = {name: given.pop(name) for name in owners}
            typed = _typed_on_command_line(texts)
            with user_errors():
                made: dict[str, Settings | Over] = {group.param: _made(group, typed) for group in groups}
            for group in groups:
                if group.over:
                    names = {item.name for item in _options(group.cls)}
                    made[group.param] = Over(group, {k: v for k, v in typed.items() if k in names})
            return command(**given, **made)

        with_settings.__name__ = command.__name__
        with_settings.__qualname__ = command.__qualname__
        with_settings.__doc__ = command.__doc__
        with_settings.__module__ = command.__module__
        with_settings.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        with_settings.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_settings

    return decorate


def options_given(settings: Settings, *, besides: Iterable[str] = ()) -> list[str]:
    """The options whose settings differ from their defaults (but ``besides``), as a message names
    them: ``--k``, ``--gold-from``."""
    defaults = type(settings)()
    return [
        item.option
        for item in _options(type(settings))
        if item.name not in besides and _value(settings, item) != _value(defaults, item)
    ]


@contextmanager
def named_as_options(cls: type[Settings]) -> Iterator[None]:
    """A library call's setting error names the setting as this command's option (``calibrate_by`` ->
    ``--by``), as a bad value typed on the command line does; the file and hint stay. So does the
    advice of an endpoint or a store's server that answered nothing (``request_timeout`` ->
    ``--request-timeout``)."""
    try:
        yield
    except (SettingError, EndpointSilent, ServerSilent) as exc:
        item = {item.name: item for item in _options(cls)}.get(exc.setting)
        if item is None:
            raise
        if isinstance(exc, SettingError):
            raise exc.labelled(item.option, path=exc.path, line=exc.line) from None
        raise exc.labelled(item.option) from exc


def _value(settings: Settings, item: SettingField) -> Any:
    value: Any = settings
    for name in item.path:
        value = getattr(value, name)
    return value


def _options(cls: type[Settings]) -> list[SettingField]:
    return [item for item in setting_fields(cls) if item.has_text_form]


def _made(group: Group, texts: Mapping[str, Any], *, start: Settings | None = None) -> Settings:
    """The group's settings from the options typed (over ``start``); a bad value names the option."""
    options = {item.name: item for item in _options(group.cls)}
    values = {name: texts[name] for name in options if name in texts}
    try:
        return settings_from(group.cls, values, start=start, text=True)
    except SettingError as exc:
        item = options.get(exc.setting)
        if item is None:
            raise
        # A value of the wrong kind is a usage error: its line points at the help, as click's do.
        hint = exc.hint or f"see '{_command_path()} --help'"
        raise SettingError(exc.setting, exc.problem, hint=hint, label=item.option) from None


def _typed_on_command_line(texts: Mapping[str, Any]) -> dict[str, Any]:
    """The options given on the command line: the others hold their default's text, for the help, and
    are left to the settings' own defaults."""
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is None:  # called as a plain function: every value given is meant
        return {name: value for name, value in texts.items() if value is not None}
    return {
        name: value
        for name, value in texts.items()
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


def _command_path() -> str:
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    return ctx.command_path if ctx is not None else "realrecall"


def _parameter(item: SettingField, group: Group) -> inspect.Parameter:
    """The typer parameter of one setting: text (or a flag, or a repeatable KEY=VALUE) whose default
    is the field's, written as text for the help."""
    own = item.help
    if group.help_prefix and own[1:2].islower():  # "One-call mode: the retriever...", not "The"
        own = own[:1].lower() + own[1:]
    help_text = group.help_prefix + own + group.help_suffix.get(item.name, "")
    hint = _without_none(item.hint)
    default: Any = shown(item.default) or None
    annotation: Any
    if group.over:  # no default of its own: an option not given leaves the value it lies over
        name = item.option.removeprefix("--")
        flag = (f"--{name}/--no-{name}",) if hint is bool else (item.option,)
        metavar = None if hint is bool else _metavar(hint)
        option = typer.Option(*flag, help=help_text, metavar=metavar, show_default=False)
        annotation = Annotated[(bool if hint is bool else str) | None, option]
        return inspect.Parameter(
            item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
        )
    if item.text is not None:
        annotation, default = _read_by_text(item, item.text, help_text, default)
    elif hint is bool:
        name = item.option.removeprefix("--")
        annotation = Annotated[bool, typer.Option(f"--{name}/--no-{name}", help=help_text)]
        default = bool(item.default)
    elif typing.get_origin(hint) in (Mapping, dict):
        metavar = item.flag.metavar if item.flag is not None and item.flag.metavar else "KEY=VALUE"
        annotation = Annotated[list[str] | None, typer.Option(item.option, help=help_text, metavar=metavar)]
        default = None
    else:
        annotation = Annotated[str | None, typer.Option(item.option, help=help_text, metavar=_metavar(hint))]
    return inspect.Parameter(
        item.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _read_by_text(item: SettingField, text: Text, help_text: str, default: Any) -> tuple[Any, Any]:
    """The annotation and default of a setting its own ``Text`` reads: a ``--name/--no-name`` switch
    (no default shown: neither keeps the field's), an option given once per item, or one text option."""
    if text.form == "switch":
        name = item.option.removeprefix("--")
        option = typer.Option(f"--{name}/--no-{name}", help=help_text, show_default=False)
        return Annotated[bool | None, option], None
    option = typer.Option(item.option, help=help_text, metavar=text.metavar)
    if text.form == "repeated":
        return Annotated[list[str] | None, option], None
    return Annotated[str | None, option], default


_METAVARS: dict[object, str] = {int: "int", float: "float", str: "str", Path: "path"}


def _metavar(hint: object) -> str:
    """``<int>``, ``<int,...>``, ``<auto|ids|evidence>``: the value's shape, as typer writes its own."""
    if typing.get_origin(hint) is tuple:
        return _metavar(typing.get_args(hint)[0]).removesuffix(">") + ",...>"
    if typing.get_origin(hint) is Literal:
        return "<" + "|".join(str(arg) for arg in typing.get_args(hint)) + ">"
    return f"<{_METAVARS.get(hint, 'str')}>"


def _without_none(hint: object) -> object:
    members = [member for member in typing.get_args(hint) if member is not type(None)]
    if members and type(None) in typing.get_args(hint) and len(members) == 1:
        return members[0]
    return hint

"""Query types and forms by readable rules: ordered regular expressions, first match wins.

The default rules ship as ``type_rules.toml`` beside this module; a user's own file (TOML or JSON,
same keys) replaces them. A rule set is data, so a reader can see why a query got its type.

Two labels come from the rules: the ``type`` (what the query asks: lookup, troubleshooting...) and the
``form`` (how it is written: ``keywords`` typed into a search box, a written ``question``, a
``statement``). Real and synthetic queries get both from the same rules, so their strata match.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from realrecall.errors import InputError
from realrecall.files import TOO_DEEP, read_text_lines
from realrecall.labels.screens import literal_screen, screened_search

__all__ = [
    "FormRule",
    "FormRules",
    "TypeRule",
    "TypeRules",
    "default_type_rules",
    "load_type_rules",
]


@dataclass(frozen=True)
class TypeRule:
    """A named pattern and the type it gives."""

    name: str
    type: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class FormRule:
    """A named pattern and the form it gives."""

    name: str
    form: str
    pattern: re.Pattern[str]


_Rule = TypeVar("_Rule", TypeRule, FormRule)


def _screens(rules: tuple[_Rule, ...]) -> tuple[re.Pattern[str] | None, ...]:
    return tuple(literal_screen(rule.pattern) for rule in rules)


def _first_match(
    rules: tuple[_Rule, ...], screens: tuple[re.Pattern[str] | None, ...], question: str
) -> _Rule | None:
    """The first rule whose pattern is found in ``question`` (first match wins), or None."""
    lowered = question.lower() if question.isascii() else None  # once, for every rule's screen
    for rule, screen in zip(rules, screens, strict=True):
        if screened_search(rule.pattern, screen, question, lowered):
            return rule
    return None


@dataclass(frozen=True)
class FormRules:
    """Form rules tried in order, and the form of a query none of them matches."""

    rules: tuple[FormRule, ...]
    default: str
    source: str = ""
    screens: tuple[re.Pattern[str] | None, ...] = field(init=False, repr=False, compare=False)
    """Per rule, its ``literal_screen``: most texts are told apart from a rule without searching it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "screens", _screens(self.rules))

    def classify(self, question: str) -> tuple[str, str | None]:
        """``(form, name of the rule that matched)``; the rule name is ``None`` for the default."""
        rule = _first_match(self.rules, self.screens, question)
        return (self.default, None) if rule is None else (rule.form, rule.name)


def _builtin_forms() -> FormRules:
    return default_type_rules().forms


@dataclass(frozen=True)
class TypeRules:
    """Rules tried in order, and the type of a question none of them matches.

    ``forms``: the form rules (a user's file without a ``[form]`` table keeps the built-in ones).
    """

    rules: tuple[TypeRule, ...]
    default: str
    source: str = ""
    forms: FormRules = field(default_factory=_builtin_forms)
    screens: tuple[re.Pattern[str] | None, ...] = field(init=False, repr=False, compare=False)
    """Per rule, its ``literal_screen`` (a million distinct questions labelled in 9 s, not 29)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "screens", _screens(self.rules))

    def classify(self, question: str) -> tuple[str, str | None]:
        """``(type, name of the rule that matched)``; the rule name is ``None`` for the default."""
        rule = _first_match(self.rules, self.screens, question)
        return (self.default, None) if rule is None else (rule.type, rule.name)

    def classify_form(self, question: str) -> tuple[str, str | None]:
        """``(form, name of the form rule that matched)``; ``None`` for the default form."""
        return self.forms.classify(question)


def default_type_rules() -> TypeRules:
    """The rules shipped with realrecall (``realrecall/labels/type_rules.toml``), read once."""
    return _builtin_rules()


@cache  # labelling a gold set asks for them per query: parse and compile the patterns once
def _builtin_rules() -> TypeRules:
    resource = resources.files("realrecall.labels").joinpath("type_rules.toml")
    return _parse(tomllib.loads(resource.read_text(encoding="utf-8")), "type_rules.toml (built in)")


def load_type_rules(path: str | Path | None = None) -> TypeRules:
    """Read a rules file (``.toml`` or ``.json``), or the built-in rules when ``path`` is None."""
    if path is None:
        return default_type_rules()
    p = Path(path)
    if not p.is_file():
        raise InputError("type rules file not found", path=p, hint="give a .toml or .json rules file")
    text = "\n".join(line for _, line in read_text_lines(p))  # names the line of a byte that is not UTF-8
    try:
        data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot parse type rules: {exc}", path=p) from exc
    except RecursionError:
        raise InputError(f"cannot parse type rules: {TOO_DEEP}", path=p) from None
    if not isinstance(data, dict):
        raise InputError('type rules must be an object with "default" and "rules"', path=p)
    return _parse(data, str(p))


def _parse(data: Mapping[str, Any], source: str) -> TypeRules:
    default = data.get("default", "conceptual")
    if not isinstance(default, str) or not default:
        raise InputError('"default" must be a non-empty type name', path=source)
    rules = [
        TypeRule(name=name, type=label, pattern=pattern)
        for name, label, pattern in _parse_rules(data.get("rules", []), "type", "rule", "[[rules]]", source)
    ]
    if "form" not in data:
        return TypeRules(rules=tuple(rules), default=default, source=source)
    return TypeRules(
        rules=tuple(rules), default=default, source=source, forms=_parse_forms(data["form"], source)
    )


def _parse_forms(data: Any, source: str) -> FormRules:
    if not isinstance(data, dict):
        raise InputError(
            '"form" must be a table with "default" and "rules"', path=source, hint="write [form]"
        )
    unknown = set(data) - {"default", "rules"}
    if unknown:
        raise InputError(f"[form] has unknown key(s) {', '.join(sorted(unknown))}", path=source)
    default = data.get("default", "keywords")
    if not isinstance(default, str) or not default:
        raise InputError('"form.default" must be a non-empty form name', path=source)
    found = _parse_rules(data.get("rules", []), "form", "form rule", "[[form.rules]]", source)
    rules = tuple(FormRule(name=name, form=label, pattern=pattern) for name, label, pattern in found)
    return FormRules(rules=rules, default=default, source=source)


def _parse_rules(
    raw_rules: Any, label: str, noun: str, table: str, source: str
) -> list[tuple[str, str, re.Pattern[str]]]:
    """``(name, label, compiled pattern)`` of each rule; ``label`` is the key naming what it gives."""
    if not isinstance(raw_rules, list):
        raise InputError(
            f'"{table[2:-2]}" must be a list of tables', path=source, hint=f"write {table} in TOML"
        )
    keys = {"name", label, "pattern", "ignore_case"}
    rules = []
    for number, raw in enumerate(raw_rules, start=1):
        where = f"{noun} {number}"
        if not isinstance(raw, dict):
            raise InputError(f"{where} is not a table", path=source)
        unknown = set(raw) - keys
        if unknown:
            raise InputError(
                f"{where} has unknown key(s) {', '.join(sorted(unknown))}",
                path=source,
                hint=f"use {', '.join(sorted(keys))}",
            )
        for key in ("name", label, "pattern"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise InputError(f'{where} needs a non-empty "{key}" string', path=source)
        flags = re.IGNORECASE if raw.get("ignore_case", False) else 0
        try:
            pattern = re.compile(raw["pattern"], flags)
        except re.error as exc:
            raise InputError(f"{where} ({raw['name']}): bad regular expression: {exc}", path=source) from exc
        rules.append((raw["name"], raw[label], pattern))
    return rules

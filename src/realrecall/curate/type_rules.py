"""Query types by readable rules: ordered regular expressions, first match wins.

The default rules ship as ``type_rules.toml`` beside this module; a user's own file (TOML or JSON,
same keys) replaces them. A rule set is data, so a reader can see why a query got its type.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import read_text_lines

__all__ = ["TypeRule", "TypeRules", "default_type_rules", "load_type_rules"]

_RULE_KEYS = {"name", "type", "pattern", "ignore_case"}


@dataclass(frozen=True)
class TypeRule:
    """A named pattern and the type it gives."""

    name: str
    type: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class TypeRules:
    """Rules tried in order, and the type of a question none of them matches."""

    rules: tuple[TypeRule, ...]
    default: str
    source: str = ""

    def classify(self, question: str) -> tuple[str, str | None]:
        """``(type, name of the rule that matched)``; the rule name is ``None`` for the default."""
        for rule in self.rules:
            if rule.pattern.search(question):
                return rule.type, rule.name
        return self.default, None


def default_type_rules() -> TypeRules:
    """The rules shipped with realrecall (``realrecall/curate/type_rules.toml``)."""
    resource = resources.files("realrecall.curate").joinpath("type_rules.toml")
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
    if not isinstance(data, dict):
        raise InputError('type rules must be an object with "default" and "rules"', path=p)
    return _parse(data, str(p))


def _parse(data: Mapping[str, Any], source: str) -> TypeRules:
    default = data.get("default", "conceptual")
    if not isinstance(default, str) or not default:
        raise InputError('"default" must be a non-empty type name', path=source)
    raw_rules = data.get("rules", [])
    if not isinstance(raw_rules, list):
        raise InputError('"rules" must be a list of tables', path=source, hint="write [[rules]] in TOML")
    rules = []
    for number, raw in enumerate(raw_rules, start=1):
        where = f"rule {number}"
        if not isinstance(raw, dict):
            raise InputError(f"{where} is not a table", path=source)
        unknown = set(raw) - _RULE_KEYS
        if unknown:
            raise InputError(
                f"{where} has unknown key(s) {', '.join(sorted(unknown))}",
                path=source,
                hint=f"use {', '.join(sorted(_RULE_KEYS))}",
            )
        for key in ("name", "type", "pattern"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise InputError(f'{where} needs a non-empty "{key}" string', path=source)
        flags = re.IGNORECASE if raw.get("ignore_case", False) else 0
        try:
            pattern = re.compile(raw["pattern"], flags)
        except re.error as exc:
            raise InputError(f"{where} ({raw['name']}): bad regular expression: {exc}", path=source) from exc
        rules.append(TypeRule(name=raw["name"], type=raw["type"], pattern=pattern))
    return TypeRules(rules=tuple(rules), default=default, source=source)

"""The registry of prompt strategies: a name (``--strategy``, ``strategy`` in a pipeline) to its spec.

``STRATEGIES`` maps each name to its ``StrategySpec`` (see ``generate.strategy``), one line per
strategy below. Adding a strategy is one new module defining ``STRATEGY = StrategySpec(...)``, plus
one line here (or a ``register(spec)`` call from your own code). The config's check of the name, the
"choose from" message, the help of ``--strategy`` and the dry run's table are all read from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from realrecall.errors import InputError
from realrecall.generate import direct, situation
from realrecall.generate.strategy import StrategySpec

__all__ = ["STRATEGIES", "choices", "find_strategy", "register", "unregister"]

_REGISTRY: dict[str, StrategySpec] = {spec.name: spec for spec in (situation.STRATEGY, direct.STRATEGY)}
STRATEGIES: Mapping[str, StrategySpec] = MappingProxyType(_REGISTRY)
"""Name -> spec of every registered strategy (read-only; add with ``register``)."""


def register(spec: StrategySpec, *, replace: bool = False) -> None:
    """Make ``spec.name`` a strategy ``GenerateConfig``, ``--strategy`` and pipeline.toml know."""
    name = spec.name
    if not isinstance(name, str) or not name or name != name.strip():
        raise InputError(
            f"strategy name {name!r} cannot be registered",
            hint="use a non-empty name without spaces at its ends",
        )
    if name in _REGISTRY and not replace:
        raise InputError(f"a strategy named {name!r} is already registered", hint="pass replace=True")
    _REGISTRY[name] = spec


def unregister(name: str) -> None:
    """Forget a registered strategy (a test's own, say)."""
    _REGISTRY.pop(name, None)


def choices() -> str:
    """``situation, direct``: what ``--strategy`` takes."""
    return ", ".join(_REGISTRY)


def find_strategy(name: str) -> StrategySpec:
    """The spec registered as ``name``; an unknown name is one InputError line listing the others."""
    spec = _REGISTRY.get(name)
    if spec is None:
        raise InputError(f"unknown strategy {name!r}", hint=f"choose from {choices()}")
    return spec

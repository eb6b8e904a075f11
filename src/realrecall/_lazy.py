"""Lazy exports: a package maps each name it exports to the module that defines it, imported on first use.

Used by the packages whose exports would otherwise load heavy dependencies at import time (numpy,
openai, the generator), so ``import realrecall`` and the CLI's start-up stay cheap.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps a name to its defining module.

    A name mapped to ``f"{package}.{name}"`` is a subpackage and resolves to the module itself. A
    resolved value is set on the package, so later lookups never come back here.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module)
        value = imported if module == f"{package}.{name}" else getattr(imported, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

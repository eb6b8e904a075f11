"""Lazy exports: a package's ``if TYPE_CHECKING:`` imports are the one list of the names it exports.

    import typing as _typing

    from realrecall._lazy import lazy_exports as _lazy_exports

    if _typing.TYPE_CHECKING:
        from realrecall.gold import GoldSet as GoldSet
        from realrecall.gold import load_gold as load_gold

    __all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

Type checkers read those imports (``X as X`` marks a re-export). At run time they never run:
``lazy_exports`` reads the same lines from the package's source, ``__all__`` lists the names, and each
is imported from its module on first use, so ``import realrecall`` and the CLI's start-up load no
numpy, openai or generator until a name that needs them is used. A name imported from the package
itself (``from realrecall import evaluate as evaluate``) is a subpackage, reachable as an attribute
but left out of ``__all__`` (``from realrecall import *`` does not load every stage).

The package's own names start with ``_`` (``_typing``, ``_lazy_exports``), so ``dir()`` shows only
its exports and submodules. The source is read with regular expressions, not ``ast``, whose import
would cost every command's start-up about 2 ms; tests/test_lazy_exports.py checks that they read
each package as ``ast`` does.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports", "read_exports"]

# The block under ``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``): its indented lines.
_BLOCK = re.compile(r"^if (?:\w+\.)?TYPE_CHECKING:[^\n]*\n((?:[ \t]+[^\n]*\n|[ \t]*\n)+)", re.MULTILINE)
_FROM = re.compile(r"\bfrom\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]*)")
_COMMENT = re.compile(r"#[^\n]*")


def read_exports(source: str) -> dict[str, str]:
    """Name -> module of every ``from MODULE import NAME [as NAME]`` under ``if TYPE_CHECKING:``."""
    exports: dict[str, str] = {}
    for block in _BLOCK.findall(source):
        for module, names in _FROM.findall(_COMMENT.sub("", block)):
            for item in names.strip("()").split(","):
                name = item.split()[-1] if item.strip() else ""
                if name:
                    exports[name] = module
    return exports


def lazy_exports(
    package: str, init_file: str
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, from the exports its source declares.

    A resolved value is set on the package, so later lookups never come back here.
    """
    with open(init_file, encoding="utf-8") as file:
        exports = read_exports(file.read())
    public = sorted(name for name, module in exports.items() if module != package)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module == package:  # a subpackage
            value: Any = importlib.import_module(f"{package}.{name}")
        else:
            value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return public, __getattr__, __dir__

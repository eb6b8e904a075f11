"""realrecall: how good is your retrieval really?

The public API is imported lazily, so ``import realrecall`` stays cheap (no numpy until it is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Run", "__version__", "load_run", "score", "score_queries"]

_LAZY = {
    "Run": "realrecall.runs",
    "load_run": "realrecall.runs",
    "score": "realrecall.evaluate.scoring",
    "score_queries": "realrecall.evaluate.scoring",
}

if TYPE_CHECKING:
    from realrecall.evaluate.scoring import score, score_queries
    from realrecall.runs import Run, load_run


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'realrecall' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""realrecall: how good is your retrieval really?

The public API is imported lazily, so ``import realrecall`` stays cheap (no numpy until it is used).
The three stages are subpackages, never functions of the same name (``realrecall.evaluate`` is always
the package; its function is ``realrecall.evaluate.evaluate``), so no import order changes what a
name means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from realrecall._lazy import lazy_getattr as _lazy_getattr
from realrecall._version import __version__

_LAZY = {
    "Chunk": "realrecall.corpus",
    "Corpus": "realrecall.corpus",
    "load_corpus": "realrecall.corpus",
    "GoldQuery": "realrecall.gold",
    "GoldSet": "realrecall.gold",
    "load_gold": "realrecall.gold",
    "Run": "realrecall.runs",
    "load_run": "realrecall.runs",
    "score": "realrecall.evaluate.scoring",
    "score_queries": "realrecall.evaluate.scoring",
    "build_retriever": "realrecall.evaluate.retrievers",
    "GenerateConfig": "realrecall.generate",
    "run_pipeline": "realrecall.pipeline.run",
    "load_pipeline_config": "realrecall.pipeline.config",
    "RealrecallError": "realrecall.errors",
    "InputError": "realrecall.errors",
}

__all__ = [
    "Chunk",
    "Corpus",
    "GenerateConfig",
    "GoldQuery",
    "GoldSet",
    "InputError",
    "RealrecallError",
    "Run",
    "__version__",
    "build_retriever",
    "load_corpus",
    "load_gold",
    "load_pipeline_config",
    "load_run",
    "run_pipeline",
    "score",
    "score_queries",
]

if TYPE_CHECKING:
    from realrecall.corpus import Chunk, Corpus, load_corpus
    from realrecall.errors import InputError, RealrecallError
    from realrecall.evaluate.retrievers import build_retriever
    from realrecall.evaluate.scoring import score, score_queries
    from realrecall.generate import GenerateConfig
    from realrecall.gold import GoldQuery, GoldSet, load_gold
    from realrecall.pipeline.config import load_pipeline_config
    from realrecall.pipeline.run import run_pipeline
    from realrecall.runs import Run, load_run


# Subpackages are reachable as attributes without an explicit import (``realrecall.evaluate.evaluate(...)``).
__getattr__ = _lazy_getattr(
    "realrecall",
    {
        **_LAZY,
        **{name: f"realrecall.{name}" for name in ("calibrate", "evaluate", "curate", "generate", "llm")},
    },
)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

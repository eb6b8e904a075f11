"""realrecall: how good is your retrieval really?

The public API is imported lazily, so ``import realrecall`` stays cheap (no numpy until it is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

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
    "evaluate": "realrecall.evaluate",
    "build_retriever": "realrecall.evaluate.retrievers",
    "generate": "realrecall.generate",
    "GenerateConfig": "realrecall.generate",
    "calibrate": "realrecall.calibrate",
    "compare": "realrecall.calibrate",
    "run_pipeline": "realrecall.pipeline",
    "load_pipeline_config": "realrecall.pipeline_config",
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
    "calibrate",
    "compare",
    "evaluate",
    "generate",
    "load_corpus",
    "load_gold",
    "load_pipeline_config",
    "load_run",
    "run_pipeline",
    "score",
    "score_queries",
]

if TYPE_CHECKING:
    from realrecall.calibrate import calibrate, compare
    from realrecall.corpus import Chunk, Corpus, load_corpus
    from realrecall.errors import InputError, RealrecallError
    from realrecall.evaluate import evaluate
    from realrecall.evaluate.retrievers import build_retriever
    from realrecall.evaluate.scoring import score, score_queries
    from realrecall.generate import GenerateConfig, generate
    from realrecall.gold import GoldQuery, GoldSet, load_gold
    from realrecall.pipeline import run_pipeline
    from realrecall.pipeline_config import load_pipeline_config
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

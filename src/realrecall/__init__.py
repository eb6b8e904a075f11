"""realrecall: how good is your retrieval really?

The public API is imported lazily, so ``import realrecall`` stays cheap (no numpy until it is used).
The three stages are subpackages, never functions of the same name (``realrecall.evaluate`` is always
the package; its function is ``realrecall.evaluate.evaluate``), so no import order changes what a
name means.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from realrecall import calibrate as calibrate
    from realrecall import curate as curate
    from realrecall import evaluate as evaluate
    from realrecall import generate as generate
    from realrecall import llm as llm
    from realrecall._version import __version__ as __version__
    from realrecall.corpus import Chunk as Chunk
    from realrecall.corpus import Corpus as Corpus
    from realrecall.corpus import load_corpus as load_corpus
    from realrecall.errors import InputError as InputError
    from realrecall.errors import RealrecallError as RealrecallError
    from realrecall.evaluate.retrievers import build_retriever as build_retriever
    from realrecall.evaluate.scoring import score as score
    from realrecall.evaluate.scoring import score_queries as score_queries
    from realrecall.generate import GenerateConfig as GenerateConfig
    from realrecall.gold import GoldQuery as GoldQuery
    from realrecall.gold import GoldSet as GoldSet
    from realrecall.gold import load_gold as load_gold
    from realrecall.pipeline.config import load_pipeline_config as load_pipeline_config
    from realrecall.pipeline.run import run_pipeline as run_pipeline
    from realrecall.runs import Run as Run
    from realrecall.runs import load_run as load_run

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

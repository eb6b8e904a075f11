"""The generate stage: synthetic questions from chunks, written as a gold set with provenance.

    from realrecall.generate import GenerateConfig, generate
    summary = generate(load_corpus("chunks.jsonl"), "synthetic.jsonl", GenerateConfig(), client=client)

Each output line is a gold-set record (``query_id``, ``query``, ``gold: {chunk_id: 1}``, ``origin:
"synthetic"``, ``type``, ``language``) with a ``provenance`` object saying how it was made.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# The generator loads asyncio, curate and numpy: exported lazily, so ``realrecall generate --help``
# and the CLI's other commands start without it (the config module alone is light).
if _typing.TYPE_CHECKING:
    from realrecall.generate.batch import BatchOptions as BatchOptions
    from realrecall.generate.config import BACKENDS as BACKENDS
    from realrecall.generate.config import QUESTION_TYPES as QUESTION_TYPES
    from realrecall.generate.config import GenerateConfig as GenerateConfig
    from realrecall.generate.config import Shard as Shard
    from realrecall.generate.config import parse_shard as parse_shard
    from realrecall.generate.config import parse_weights as parse_weights
    from realrecall.generate.dry_run import CostEstimate as CostEstimate
    from realrecall.generate.dry_run import estimate as estimate
    from realrecall.generate.run import agenerate as agenerate
    from realrecall.generate.run import generate as generate
    from realrecall.generate.summary import GenerateProgress as GenerateProgress
    from realrecall.generate.summary import GenerateSummary as GenerateSummary
    from realrecall.generate.summary import StageSummary as StageSummary
    from realrecall.style_leak import style_leak_warning as style_leak_warning
    from realrecall.text_features import lexical_overlap as lexical_overlap

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

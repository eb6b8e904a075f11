"""The scheduled job in one package: its config (``pipeline.toml``), the run, its history, the demo.

    run.py      run_pipeline: incremental generate, evaluate on both sets, calibrate, a history row
    config.py   load_pipeline_config: pipeline.toml, checked whole before any work
    history.py  the append-only history of runs and the trend of the quoted figures
    demo.py     the offline demo on the bundled sample data

Names are imported lazily, so ``realrecall history`` does not load the generator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "PipelineResult": "run",
    "run_pipeline": "run",
    "PipelineConfig": "config",
    "load_pipeline_config": "config",
    "HistoryTrend": "history",
    "TrendRow": "history",
    "append_history": "history",
    "history_trend": "history",
    "load_history": "history",
    "check_demo_folder": "demo",
    "run_demo": "demo",
}

__all__ = [
    "HistoryTrend",
    "PipelineConfig",
    "PipelineResult",
    "TrendRow",
    "append_history",
    "check_demo_folder",
    "history_trend",
    "load_history",
    "load_pipeline_config",
    "run_demo",
    "run_pipeline",
]

if TYPE_CHECKING:
    from realrecall.pipeline.config import PipelineConfig, load_pipeline_config
    from realrecall.pipeline.demo import check_demo_folder, run_demo
    from realrecall.pipeline.history import (
        HistoryTrend,
        TrendRow,
        append_history,
        history_trend,
        load_history,
    )
    from realrecall.pipeline.run import PipelineResult, run_pipeline


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'realrecall.pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"realrecall.pipeline.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

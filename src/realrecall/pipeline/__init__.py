"""The scheduled job in one package: its config (``pipeline.toml``), the run, its history, the demo.

    run.py      run_pipeline: incremental generate, evaluate on both sets, calibrate, a history row
    config.py   load_pipeline_config: pipeline.toml, checked whole before any work
    history.py  the append-only history of runs (typed rows) and the trend of the quoted figures
    demo.py     the offline demo on the bundled sample data

Names are imported lazily, so ``realrecall history`` does not load the generator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from realrecall._lazy import lazy_getattr as _lazy_getattr

_LAZY = {
    "PipelineResult": "realrecall.pipeline.run",
    "run_pipeline": "realrecall.pipeline.run",
    "PipelineConfig": "realrecall.pipeline.config",
    "load_pipeline_config": "realrecall.pipeline.config",
    "HistoryRow": "realrecall.pipeline.history",
    "HistoryTrend": "realrecall.pipeline.history",
    "TrendRow": "realrecall.pipeline.history",
    "append_history": "realrecall.pipeline.history",
    "history_trend": "realrecall.pipeline.history",
    "load_history": "realrecall.pipeline.history",
    "check_demo_folder": "realrecall.pipeline.demo",
    "run_demo": "realrecall.pipeline.demo",
}

__all__ = [
    "HistoryRow",
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
        HistoryRow,
        HistoryTrend,
        TrendRow,
        append_history,
        history_trend,
        load_history,
    )
    from realrecall.pipeline.run import PipelineResult, run_pipeline


__getattr__ = _lazy_getattr("realrecall.pipeline", _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

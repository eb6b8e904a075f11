"""The scheduled job in one package: its config (``pipeline.toml``), the run, its history, the demo.

    run.py      run_pipeline: incremental generate, evaluate on both sets, calibrate, a history row;
                run_pipelines: several as one job (on the Ray engine, one task a pipeline)
    config.py   load_pipeline_config: pipeline.toml, checked whole before any work
    history.py  the append-only history of runs (typed rows) and the trend of the quoted figures
    lock.py     one run of a pipeline at a time (pipeline.toml.lock), refused or waited for
    demo.py     the offline demo on the bundled sample data

Names are imported lazily, so ``realrecall history`` does not load the generator.
"""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from realrecall.pipeline.config import PipelineConfig as PipelineConfig
    from realrecall.pipeline.config import load_pipeline_config as load_pipeline_config
    from realrecall.pipeline.demo import check_demo_folder as check_demo_folder
    from realrecall.pipeline.demo import run_demo as run_demo
    from realrecall.pipeline.history import HistoryRow as HistoryRow
    from realrecall.pipeline.history import HistoryTrend as HistoryTrend
    from realrecall.pipeline.history import TrendRow as TrendRow
    from realrecall.pipeline.history import append_history as append_history
    from realrecall.pipeline.history import history_trend as history_trend
    from realrecall.pipeline.history import load_history as load_history
    from realrecall.pipeline.run import PipelineResult as PipelineResult
    from realrecall.pipeline.run import run_pipeline as run_pipeline
    from realrecall.pipeline.run import run_pipelines as run_pipelines

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

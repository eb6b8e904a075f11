"""The calibrate stage: the synthetic-vs-real gap, the figure to quote, and paired comparisons."""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_exports as _lazy_exports

# Exported lazily: the stage loads numpy and scipy, which ``calibrate.settings`` (read by the CLI's
# option defaults at start-up) must not pay for.
if _typing.TYPE_CHECKING:
    from realrecall.calibrate.agreement import RankAgreement as RankAgreement
    from realrecall.calibrate.agreement import SystemScore as SystemScore
    from realrecall.calibrate.agreement import rank_agreement as rank_agreement
    from realrecall.calibrate.answers import AnswerGrid as AnswerGrid
    from realrecall.calibrate.answers import answer_grid as answer_grid
    from realrecall.calibrate.answers import load_answers as load_answers
    from realrecall.calibrate.calibrated_estimate import CalibratedEstimate as CalibratedEstimate
    from realrecall.calibrate.calibrated_estimate import Stratum as Stratum
    from realrecall.calibrate.calibration import CalibrationReport as CalibrationReport
    from realrecall.calibrate.calibration import GateResult as GateResult
    from realrecall.calibrate.calibration import calibrate as calibrate
    from realrecall.calibrate.comparison import ComparisonReport as ComparisonReport
    from realrecall.calibrate.comparison import PairedComparison as PairedComparison
    from realrecall.calibrate.comparison import compare as compare
    from realrecall.calibrate.diagnostics import Diagnostics as Diagnostics
    from realrecall.calibrate.diagnostics import SetDiagnostics as SetDiagnostics
    from realrecall.calibrate.diagnostics import Summary as Summary
    from realrecall.calibrate.gap import Headline as Headline
    from realrecall.calibrate.gap import SliceGap as SliceGap
    from realrecall.calibrate.realism import RealismFeature as RealismFeature
    from realrecall.calibrate.realism import RealismScore as RealismScore
    from realrecall.calibrate.realism import realism_of_files as realism_of_files
    from realrecall.calibrate.realism import realism_score as realism_score
    from realrecall.calibrate.settings import CalibrateSettings as CalibrateSettings
    from realrecall.calibrate.settings import CompareSettings as CompareSettings
    from realrecall.calibrate.statistics import Estimate as Estimate
    from realrecall.calibrate.statistics import Interval as Interval
    from realrecall.evaluate.results import EvaluationResult as EvaluationResult
    from realrecall.evaluate.results import QueryResult as QueryResult
    from realrecall.evaluate.results import load_results as load_results

__all__, __getattr__, __dir__ = _lazy_exports(__name__, __file__)

"""The calibrate stage: the synthetic-vs-real gap, the figure to quote, and paired comparisons."""

from __future__ import annotations

import typing as _typing

from realrecall._lazy import lazy_getattr as _lazy_getattr

# Exported lazily: the stage loads numpy and scipy, which ``calibrate.defaults`` (read by the CLI's
# option defaults at start-up) must not pay for.
_LAZY = {
    "AnswerGrid": "realrecall.calibrate.answers",
    "CalibratedEstimate": "realrecall.calibrate.calibrated_estimate",
    "CalibrationReport": "realrecall.calibrate.calibration",
    "ComparisonReport": "realrecall.calibrate.comparison",
    "Diagnostics": "realrecall.calibrate.diagnostics",
    "Estimate": "realrecall.calibrate.statistics",
    "EvaluationResult": "realrecall.evaluate.results",
    "GateResult": "realrecall.calibrate.calibration",
    "Headline": "realrecall.calibrate.gap",
    "Interval": "realrecall.calibrate.statistics",
    "PairedComparison": "realrecall.calibrate.comparison",
    "QueryResult": "realrecall.evaluate.results",
    "RankAgreement": "realrecall.calibrate.agreement",
    "RealismFeature": "realrecall.calibrate.realism",
    "RealismScore": "realrecall.calibrate.realism",
    "SetDiagnostics": "realrecall.calibrate.diagnostics",
    "SliceGap": "realrecall.calibrate.gap",
    "Stratum": "realrecall.calibrate.calibrated_estimate",
    "Summary": "realrecall.calibrate.diagnostics",
    "SystemScore": "realrecall.calibrate.agreement",
    "answer_grid": "realrecall.calibrate.answers",
    "calibrate": "realrecall.calibrate.calibration",
    "compare": "realrecall.calibrate.comparison",
    "load_answers": "realrecall.calibrate.answers",
    "load_results": "realrecall.evaluate.results",
    "parse_gate": "realrecall.calibrate.calibration",
    "rank_agreement": "realrecall.calibrate.agreement",
    "realism_score": "realrecall.calibrate.realism",
}

if _typing.TYPE_CHECKING:
    from realrecall.calibrate.agreement import RankAgreement, SystemScore, rank_agreement
    from realrecall.calibrate.answers import AnswerGrid, answer_grid, load_answers
    from realrecall.calibrate.calibrated_estimate import CalibratedEstimate, Stratum
    from realrecall.calibrate.calibration import CalibrationReport, GateResult, calibrate, parse_gate
    from realrecall.calibrate.comparison import ComparisonReport, PairedComparison, compare
    from realrecall.calibrate.diagnostics import Diagnostics, SetDiagnostics, Summary
    from realrecall.calibrate.gap import Headline, SliceGap
    from realrecall.calibrate.realism import RealismFeature, RealismScore, realism_score
    from realrecall.calibrate.statistics import Estimate, Interval
    from realrecall.evaluate.results import EvaluationResult, QueryResult, load_results

__getattr__ = _lazy_getattr("realrecall.calibrate", _LAZY)

__all__ = [
    "AnswerGrid",
    "CalibratedEstimate",
    "CalibrationReport",
    "ComparisonReport",
    "Diagnostics",
    "Estimate",
    "EvaluationResult",
    "GateResult",
    "Headline",
    "Interval",
    "PairedComparison",
    "QueryResult",
    "RankAgreement",
    "RealismFeature",
    "RealismScore",
    "SetDiagnostics",
    "SliceGap",
    "Stratum",
    "Summary",
    "SystemScore",
    "answer_grid",
    "calibrate",
    "compare",
    "load_answers",
    "load_results",
    "parse_gate",
    "rank_agreement",
    "realism_score",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The calibrate stage: the synthetic-vs-real gap, the figure to quote, and paired comparisons."""

from __future__ import annotations

from realrecall.calibrate.agreement import RankAgreement, SystemScore, rank_agreement
from realrecall.calibrate.answers import AnswerGrid, answer_grid, load_answers
from realrecall.calibrate.calibrated_estimate import CalibratedEstimate, Stratum
from realrecall.calibrate.calibration import CalibrationReport, GateResult, calibrate, parse_gate
from realrecall.calibrate.comparison import ComparisonReport, PairedComparison, compare
from realrecall.calibrate.diagnostics import Diagnostics, SetDiagnostics, Summary
from realrecall.calibrate.gap import Headline, SliceGap
from realrecall.calibrate.statistics import Estimate, Interval
from realrecall.evaluate.results import EvaluationResult, QueryResult, load_results

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
]

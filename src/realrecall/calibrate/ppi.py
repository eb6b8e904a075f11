"""Prediction-powered inference: a judge's figure on every query, corrected by people on a few.

For each system, with judge-label scores ``J_i`` on all N queries and human-label scores ``H_i`` on a
random subset of m of them (the labelled queries), the estimate of the mean human-label score is

    theta = mean_N(J) + mean_m(H - J)

the judge's mean, plus the mean correction (the rectifier) measured where people labelled
(Angelopoulos et al., "Prediction-powered inference", Science 2023). Its bias is zero whatever the
judge's: a judge that grades every passage one grade too high moves ``mean(J)`` and the rectifier by
the same amount.

Two intervals, both normal (z at the confidence level):

- ``ci`` targets the figure human labels on all N queries would give (what labelling the rest would
  tell). Only the m-of-N draw varies, so its variance is ``(1 - m/N) * var_m(H - J) / m`` (the finite
  population correction).
- ``ci_population`` targets the mean over the traffic the N queries were drawn from:
  ``var_m(H) / N + (1 - m/N) * var_m(H - J) / m``.

The labelled queries must be a random sample of the N; any other choice (the easy ones, the first
ones) makes the rectifier, and so the estimate, biased.

Reference (TREC DL 2023, 35 runs, nDCG@10 on the 51 human queries, GPT-4 labels on all, NIST labels on
m): the judge alone is +0.208 too high; the interval covers the all-human figure for about 0.92 / 0.95
/ 0.93 of systems at m = 10 / 20 / 40.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from realrecall.calibrate.query_scores import QueryScores
from realrecall.calibrate.settings import PPISettings
from realrecall.calibrate.statistics import Interval, z_value
from realrecall.errors import InputError
from realrecall.settings import settings_with

__all__ = ["PPIEstimate", "PPIReport", "prediction_powered"]


@dataclass(frozen=True)
class PPIEstimate:
    """One system's prediction-powered figure (see the module doc)."""

    system: str
    estimate: float
    ci: Interval
    ci_population: Interval
    judge_mean: float
    human_mean: float
    bias: float
    """The judge's mean minus people's on the labelled queries: what the rectifier removes."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "estimate": _rounded(self.estimate),
            "ci": _interval(self.ci),
            "ci_population": _interval(self.ci_population),
            "judge_only": _rounded(self.judge_mean),
            "human_only": _rounded(self.human_mean),
            "judge_bias": _rounded(self.bias),
        }


@dataclass(frozen=True)
class PPIReport:
    """Prediction-powered figures of every system scored by both labellings."""

    measure: str
    n_all: int
    n_labelled: int
    confidence: float
    systems: tuple[PPIEstimate, ...]

    @property
    def mean_bias(self) -> float:
        return float(np.mean([s.bias for s in self.systems]))

    @property
    def verdict(self) -> str:
        return (
            f"{self.measure} from judge labels on {self.n_all} queries, corrected by human labels on "
            f"{self.n_labelled} ({self.n_labelled / self.n_all:.0%}): the judge alone is off by "
            f"{self.mean_bias:+.3f} on average over {len(self.systems)} systems, which the estimates "
            "remove. Quote the estimate with its interval, never the judge's figure alone."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "method": "prediction-powered inference (judge mean over all + mean human-minus-judge "
            "over the labelled queries)",
            "n_queries": {"all": self.n_all, "labelled": self.n_labelled},
            "confidence": self.confidence,
            "mean_judge_bias": _rounded(self.mean_bias),
            "verdict": self.verdict,
            "systems": [s.to_dict() for s in self.systems],
        }


def prediction_powered(
    judge: QueryScores,
    human: QueryScores,
    *,
    settings: PPISettings | None = None,
    **options: Any,
) -> PPIReport:
    """PPI estimates of each system's mean human-label score (see the module doc).

    ``judge``: every query scored with the judge's labels; ``human``: the labelled queries scored with
    people's labels (a subset of the judge's queries). Systems pair by name. ``settings``
    (``PPISettings``, or its fields as keywords over it): the intervals' ``confidence``.
    """
    confidence = settings_with(PPISettings, settings, options, what="prediction_powered").confidence
    z = z_value(confidence)
    systems = [name for name in judge.systems if name in human.systems]
    if not systems:
        raise InputError(
            "no system is scored under both labellings", hint="give the same runs' scores (same run names)"
        )
    known = set(judge.query_ids)
    missing = [q for q in human.query_ids if q not in known]
    if missing:
        raise InputError(
            f"{len(missing)} labelled queries have no judge scores (first: {missing[0]!r})",
            hint="score every query with the judge's labels, the labelled ones included",
        )
    n_all, n_labelled = len(judge.query_ids), len(human.query_ids)
    if n_labelled < 2:
        raise InputError(
            f"{n_labelled} labelled query: the correction's spread needs at least 2",
            hint="label at least 2 queries (10 or more for a useful interval)",
        )
    judge_rows = judge.select_systems(systems)
    judge_all = judge_rows.values
    judge_labelled = judge_rows.select_queries(human.query_ids).values
    human_labelled = human.select_systems(systems).values
    difference = human_labelled - judge_labelled
    judge_means, corrections = judge_all.mean(axis=1), difference.mean(axis=1)
    spreads = difference.var(axis=1, ddof=1) / n_labelled * (1.0 - n_labelled / n_all)
    populations = spreads + human_labelled.var(axis=1, ddof=1) / n_all
    centres = judge_means + corrections
    estimates = [
        PPIEstimate(
            system=name,
            estimate=float(centres[i]),
            ci=_normal(float(centres[i]), float(spreads[i]), z, confidence),
            ci_population=_normal(float(centres[i]), float(populations[i]), z, confidence),
            judge_mean=float(judge_means[i]),
            human_mean=float(human_labelled[i].mean()),
            bias=float(-corrections[i]),
        )
        for i, name in enumerate(systems)
    ]
    return PPIReport(judge.measure, n_all, n_labelled, confidence, tuple(estimates))


def _normal(estimate: float, variance: float, z: float, confidence: float) -> Interval:
    half = z * math.sqrt(max(variance, 0.0))
    return Interval(estimate - half, estimate + half, confidence, "prediction-powered (normal)")


def _interval(interval: Interval) -> list[float | None]:
    return [None if math.isnan(v) else round(v, 4) for v in (interval.low, interval.high)]


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)

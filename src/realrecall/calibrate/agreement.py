"""Rank agreement: do the synthetic and real sets put several retrievers in the same order?

Kendall's tau-b (``scipy.stats.kendalltau``) between the retrievers' means on the synthetic set and on
the real set. Published studies find synthetic sets order systems much as real ones do (tau about 0.85
on TREC DL 2023, Rahmani et al., SIGIR 2024) while overstating the absolute figures; hence the advice:
use the synthetic set to compare systems, the real set to quote a figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

from realrecall.calibrate.gap import metric_values
from realrecall.evaluate.results import EvaluationResult, distinct_labels

__all__ = ["RankAgreement", "SystemScore", "rank_agreement"]

# Below this tau the synthetic set is not trusted even for comparing systems.
_GOOD_TAU = 0.7


@dataclass(frozen=True)
class SystemScore:
    """One retriever's mean on each set."""

    name: str
    synthetic: float
    real: float
    n_synthetic: int
    n_real: int


@dataclass(frozen=True)
class RankAgreement:
    """Kendall's tau between the retrievers' order on the synthetic and the real set, with advice."""

    metric: str
    systems: tuple[SystemScore, ...]
    tau: float
    p_value: float
    advice: str


def rank_agreement(results: Sequence[EvaluationResult], metric: str) -> RankAgreement | None:
    """Agreement over the retrievers evaluated on both sets; None when fewer than two are."""
    systems: list[SystemScore] = []
    errors: dict[str, list[float]] = {"synthetic": [], "real": []}
    both = [item for item in results if item.of_origin("synthetic") and item.of_origin("real")]
    for item, name in zip(both, distinct_labels(both), strict=True):
        s = metric_values(item.of_origin("synthetic"), metric)
        r = metric_values(item.of_origin("real"), metric)
        if s.size and r.size:
            systems.append(SystemScore(name, float(s.mean()), float(r.mean()), int(s.size), int(r.size)))
            errors["synthetic"].append(_standard_error(s))
            errors["real"].append(_standard_error(r))
    if len(systems) < 2:
        return None
    outcome = kendalltau([x.synthetic for x in systems], [x.real for x in systems])
    tau, p_value = float(outcome.statistic), float(outcome.pvalue)
    advice = _advice(tau, len(systems)) + _noise_note(systems, errors)
    return RankAgreement(metric, tuple(systems), tau, p_value, advice)


def _standard_error(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.inf


def _noise_note(systems: Sequence[SystemScore], errors: dict[str, list[float]]) -> str:
    # Figures closer together than about two standard errors are ordered by chance; tau then says little.
    notes = []
    for origin in ("synthetic", "real"):
        figures = [getattr(x, origin) for x in systems]
        spread, error = max(figures) - min(figures), float(np.median(errors[origin]))
        if spread < 2.0 * error:
            notes.append(
                f" On the {origin} set the systems lie within {spread:.3f} of each other, less than two "
                f"standard errors ({2.0 * error:.3f}): that order is mostly chance."
            )
    return "".join(notes)


def _advice(tau: float, count: int) -> str:
    if math.isnan(tau):
        return "tau undefined (tied figures on one set): the sets cannot order these systems"
    small = (
        f" With only {count} systems tau is coarse; add configurations to firm it up." if count < 5 else ""
    )
    if tau >= _GOOD_TAU:
        return (
            f"tau {tau:.2f}: the synthetic set orders systems like the real set. Use the synthetic set to "
            f"compare systems and the real set to quote a figure.{small}"
        )
    return (
        f"tau {tau:.2f}: the synthetic set orders systems differently from the real set. Do not choose "
        f"between systems on synthetic figures; compare them on real questions.{small}"
    )

"""A labelling plan: how many more real questions, and in which strata, to reach an interval width.

The figure planned for is the traffic-weighted real mean ``sum_h W_h * mean_h`` over strata h (a
field of the questions such as ``type``; one stratum when none is given), with traffic weights ``W_h``
(the pilot's own shares when none are given). Its interval is about ``2 z sqrt(sum_h W_h^2 S_h^2 /
n_h)`` wide; with one stratum and a binary metric (``recall@k``), the Wilson interval that calibrate
quotes.

From the real questions in hand (the pilot):

- **Spread per stratum, smoothed.** A pilot of 30 estimates a stratum's spread ``S_h`` poorly, and a
  plan from the raw estimate under-asks whenever the pilot happens to look easy (26/30 hits gives
  ``p(1-p)`` far below the truth). For a binary metric ``S_h^2 = p~(1-p~)`` with the pooled
  ``p~ = (x + 2) / (n + 4)`` (Agresti and Coull's adjustment) and each stratum's ``p~_h = (x_h + 4 p~)
  / (n_h + 4)``: four questions' worth of the pooled rate. For any other metric the sample variance is
  shrunk the same way, ``S_h^2 = ((n_h - 1) s_h^2 + 4 S^2) / (n_h - 1 + 4)``, toward the pooled
  ``S^2``, itself shrunk toward the largest variance a [0, 1] metric with that mean can have. A
  stratum with no pilot question takes the pooled spread.
- **Neyman allocation under what is in hand.** Each stratum ends with ``n_h = max(now_h, c W_h
  S_h)`` questions, ``c`` the least that reaches the width: for a given total, no allocation gives a
  narrower interval (Neyman 1934), so the plan is never wider than proportional allocation (``n_h``
  following ``W_h`` alone); the report carries both widths. ``at_least`` raises ``now_h`` to a floor
  (calibrate's "where to label" asks for a few in every stratum it would otherwise predict).
- **The predicted width.** With one stratum, not the width at the smoothed spread but the width most
  probably reached: the pilot's posterior predicts the widths the labelled set may give, and the width
  whose +-20% window holds the most of them is quoted (``realrecall.calibrate.plan_prediction``); the
  plan asks for the least total whose predicted width is within the target. With several strata,
  ``2 z sqrt(sum_h W_h^2 E[s_h^2] / n_h)`` with the sample variance each stratum is expected to end
  with: the pilot's own squares, which stay in the labelled set, plus the smoothed spread for the
  questions still to label (and their expected gap from the pilot's mean); a short plan is then
  mostly the pilot's known spread. There the posterior's choice held less often (``docs/real-data.md``
  has both). Either way ``prediction_probability`` is the
  posterior probability that the width reached is within 20% of the prediction. With strata that
  posterior borrows four questions' worth of the pooled pilot, not the beta-binomial strength the
  spreads take (up to 200 when three strata's rates look alike): that strength is itself read off a
  few strata, and at face value it makes a stratum of 10 pilot questions as known as the whole pool.
- **Rounds when the prediction is rough.** Below a probability of 0.9 (the share within 20% a plan
  is held to) the plan says so and asks for half of each stratum's questions first (``n_first``),
  then a plan from the larger pilot, which may itself say it is rough and ask for another half: the
  spreads a pilot of 30 pins poorly (a stratum of 5 pilot questions, a rate near 1) are then known from
  the labelled questions, and the plan followed last predicts about as well as it says. A rough plan
  with strata asks for no fewer questions than the smoothed spreads alone need: the expected width
  counts the pilot's own squares as known, and a stratum with no miss in its 10 pilot questions would
  otherwise "need" one more question, leaving nothing to label before planning again. The first
  plan's ``n_more`` is its best count, not a promise; the one followed last gives the count to finish
  with.

Checked by simulation (``tests/calibrate/test_plan.py``, ``benchmarks/study_plan.py``, figures in
``docs/real-data.md``): from a 30-question pilot, label what the plan asks and compare the width
reached with the predicted one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.calibrate.plan_prediction import WITHIN, pilot_posterior, predict_width, probability_within
from realrecall.calibrate.settings import PlanSettings
from realrecall.calibrate.statistics import wilson_interval, z_value
from realrecall.errors import InputError, SettingError
from realrecall.evaluate.metrics import is_binary
from realrecall.evaluate.results import EvaluationResult, QueryResult, load_results
from realrecall.files import TOO_DEEP, read_text_lines
from realrecall.settings import settings_with

__all__ = [
    "LabellingPlan",
    "PlanStratum",
    "load_weights",
    "plan",
    "plan_strata",
    "predicted_width",
    "smoothed_spreads",
]

# Pseudo-questions of the pooled figure each stratum's spread is shrunk toward (and the pooled one
# toward the [0, 1] maximum): enough to steady a 30-question pilot, few enough to yield to 100 real ones.
_PRIOR = 4.0
# Strata of a binary metric whose rates differ no more than chance would make are shrunk this hard:
# all but fully to the pooled rate.
_MAX_STRENGTH = 200.0
# A plan past this many questions is a target no labelling budget meets: say so rather than count.
MAX_QUESTIONS = 10_000_000
# Below this posterior probability of landing within 20%, the plan says its prediction is rough and
# asks to be followed in rounds: the 0.9 a plan is held to (within 20% in 90% of trials), so a plan
# labelled in one go is one whose own posterior expects it to meet that.
_TRUSTED = 0.9
_ALL = "all"


@dataclass(frozen=True)
class PlanStratum:
    """One stratum of the plan: what is in hand, its smoothed spread, and how many more to label."""

    value: Any
    weight: float
    n_now: int
    n_more: int
    mean: float
    spread: float
    n_first: int = -1
    """Of ``n_more``, how many to label before planning again: half (rounded up) when the plan is rough
    (``prediction_probability`` under 0.9), else all of them (-1: not given, read as ``n_more``)."""

    @property
    def n_total(self) -> int:
        return self.n_now + self.n_more

    @property
    def first_round(self) -> int:
        """How many of ``n_more`` to label before planning again."""
        return self.n_more if self.n_first < 0 else self.n_first

    def to_dict(self) -> dict[str, Any]:
        return {
            "stratum": self.value,
            "weight": round(self.weight, 4),
            "n_now": self.n_now,
            "n_more": self.n_more,
            "n_total": self.n_total,
            "n_first": self.first_round,
            "mean": None if math.isnan(self.mean) else round(self.mean, 4),
            "spread": round(self.spread, 4),
        }


@dataclass(frozen=True)
class LabellingPlan:
    """How many more real questions to label, and where, for an interval ``target_width`` wide."""

    metric: str
    by: str | None
    confidence: float
    target_width: float
    current_width: float
    predicted_width: float
    proportional_width: float
    prediction_probability: float
    """The posterior probability that the width reached is within 20% of ``predicted_width``."""
    strata: tuple[PlanStratum, ...]
    curve: tuple[tuple[int, float], ...]
    """(more questions, predicted width) along the plan's allocation, for the picture."""
    warnings: tuple[str, ...] = ()

    @property
    def n_more(self) -> int:
        return sum(s.n_more for s in self.strata)

    @property
    def n_now(self) -> int:
        return sum(s.n_now for s in self.strata)

    @property
    def n_first(self) -> int:
        """How many to label before planning again (all of ``n_more`` when the plan is not rough)."""
        return sum(s.first_round for s in self.strata)

    @property
    def text(self) -> str:
        """One sentence: how many, where, and the width expected."""
        level = f"{self.confidence * 100:g}%"
        if self.n_more == 0:
            return (
                f"The {self.n_now} real questions in hand already give a {level} interval of "
                f"{self.metric} about {self.current_width:.3f} wide (target {self.target_width:.3f}): "
                "no more are needed."
            )
        where = ""
        asked = [s for s in self.strata if s.n_more > 0]
        if self.by is not None:
            shown = ", ".join(f"{s.n_more} in {self.by}={s.value}" for s in asked[:6])
            more = f" and {len(asked) - 6} more strata" if len(asked) > 6 else ""
            where = f" ({shown}{more})"
        proportional = (
            f"; proportional allocation would give {self.proportional_width:.3f}"
            if len(self.strata) > 1
            else ""
        )
        return (
            f"Label {self.n_more} more real questions{where} to bring the {level} interval of "
            f"{self.metric} from {self.current_width:.3f} to about {self.predicted_width:.3f} wide "
            f"(target {self.target_width:.3f}{proportional})."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "by": self.by,
            "confidence": self.confidence,
            "target_width": self.target_width,
            "n_now": self.n_now,
            "n_more": self.n_more,
            "n_first": self.n_first,
            "current_width": _rounded(self.current_width),
            "predicted_width": _rounded(self.predicted_width),
            "proportional_width": _rounded(self.proportional_width),
            "prediction_probability": round(self.prediction_probability, 3),
            "by_stratum": [s.to_dict() for s in self.strata],
            "curve": [{"n_more": n, "width": _rounded(w)} for n, w in self.curve],
            "text": self.text,
            "warnings": list(self.warnings),
        }


def plan(
    results: EvaluationResult | str | Path,
    target_width: float,
    *,
    weights: Mapping[str, float] | str | Path | None = None,
    settings: PlanSettings | None = None,
    **options: Any,
) -> LabellingPlan:
    """The labelling plan from the real questions of ``results`` (the pilot); see the module doc.

    ``settings`` (``PlanSettings``, or its fields as keywords over it: ``metric="ndcg@10"``) says how:
    the metric, the stratum field (``calibrate_by``: ``type``, ``topic``...; None: one stratum, or
    ``type`` when traffic shares are given) and the confidence. The traffic share of each stratum value
    (normalised here; default: the pilot's own shares) is ``weights``, a mapping of value to share or
    a file (``load_weights``), given here or as the settings' ``weights``, not both.
    """
    settings = settings_with(PlanSettings, settings, options, what="plan")
    if weights is not None and settings.weights is not None:
        raise SettingError(
            "weights", "is given twice: as an argument and in the settings", hint="give it once"
        )
    weights = settings.weights if weights is None else weights
    if isinstance(weights, str | Path):
        weights = load_weights(weights)
    metric, confidence = settings.metric, settings.confidence
    by = settings.stratum_field(weighted=weights is not None)
    result = results if isinstance(results, EvaluationResult) else load_results(results)
    pilot = _pilot(result)
    missing = [q for q in pilot if metric not in q.metrics]
    if len(missing) == len(pilot):
        known = sorted({name for q in pilot for name in q.metrics})
        raise InputError(
            f"no real question has {metric!r}",
            path=result.source,
            hint=f"choose from {', '.join(known)}" if known else "evaluate the real set first",
        )
    unset = [q for q in pilot if by is not None and q.field(by) is None]
    if by is not None and len(unset) == len(pilot):
        fields = [name for name in result.present_fields() if name != "origin"]
        # Named as the settings field: the CLI relabels it with its flag (--by), as it does every
        # setting's error, so a Python caller is not told about an option it never typed.
        raise SettingError(
            "calibrate_by",
            f"{by!r}: no real question has a value for this field",
            path=result.source,
            hint=f"choose from {', '.join(fields)}" if fields else "plan with one stratum (no stratum field)",
        )
    groups: dict[str, list[float]] = {}
    for query in pilot:
        if metric in query.metrics:
            value = _ALL if by is None else query.field(by)
            groups.setdefault(str(value), []).append(query.metrics[metric])
    warnings = []
    if missing:
        warnings.append(f"{len(missing)} real questions have no {metric} and are left out")
    if unset:
        warnings.append(f"{len(unset)} real questions have no {by}: planned as the stratum {by}=None")
    made = plan_strata(
        groups, metric=metric, binary=is_binary(metric), target_width=target_width,
        weights=weights, confidence=confidence, by=by,
    )  # fmt: skip
    return replace(made, warnings=(*warnings, *made.warnings))


def plan_strata(
    pilot: Mapping[str, Sequence[float] | np.ndarray],
    *,
    metric: str,
    binary: bool,
    target_width: float,
    weights: Mapping[str, float] | None = None,
    confidence: float = 0.95,
    by: str | None = None,
    at_least: Mapping[str, int] | None = None,
) -> LabellingPlan:
    """The plan from each stratum's pilot values (see the module doc); strata of ``weights`` with no
    pilot value are planned from the pooled spread. ``at_least``: questions a stratum must end with
    whatever the width (calibrate asks for a few in every stratum it would otherwise predict)."""
    if not (isinstance(target_width, int | float) and 0.0 < target_width < 2.0):
        raise InputError(f"target width must be between 0 and 2, got {target_width}", hint="e.g. 0.1")
    z = z_value(confidence)
    shares, warnings = _shares(pilot, weights, by)
    names = list(shares)
    values = [np.asarray(pilot.get(name, ()), dtype=np.float64) for name in names]
    now = np.array([v.size for v in values], dtype=np.float64)
    floor = np.maximum(now, [float((at_least or {}).get(name, 0)) for name in names])
    weight = np.array([shares[name] for name in names])
    spread = smoothed_spreads(values, binary=binary)
    single_binary = binary and len(names) == 1
    pooled = np.concatenate(values)
    current = _width(now, weight, spread, z, pooled if single_binary else None, confidence)
    # The posterior borrows the smoothing's four questions of the pool, not the beta-binomial strength
    # (up to 200) the spreads take: that strength is read off three or so strata's rates, and at face
    # value it lends a stratum of 10 pilot questions the certainty of the whole pool. The probability
    # stated must allow that the stratum carrying the traffic differs from the rest as far as its own
    # few questions permit.
    posterior = pilot_posterior(values, weight, binary=binary, strength=_PRIOR, z=z)

    centre = _smoothed_means(values, binary=binary)

    def predict(counts: np.ndarray) -> float:
        if len(names) == 1:
            return predict_width(posterior, counts).width
        return _expected_width(counts, weight, spread, centre, values, z)

    score = weight * spread
    planned = current > target_width or bool(np.any(floor > now))
    # Past the target, at least one question more: with strata and nothing labelled, the width
    # "reached" is the pilot's own, which may look narrow (no miss in a stratum) where the smoothed
    # spread says not. (One stratum's posterior already predicts the pilot's own, too wide, width.)
    start = floor.copy()
    if len(names) > 1 and current > target_width and floor.sum() == now.sum():
        start[int(np.argmax(score))] += 1.0
    counts = _least_counts(predict, start, score, target_width) if planned else now.copy()
    counts, width, proportional_width = _settled(predict, counts, floor, weight, current)
    probability = probability_within(posterior, counts, width)
    if planned and len(names) > 1 and probability < _TRUSTED:
        # A rough plan with strata asks for no fewer than the smoothed spreads alone need: its expected
        # width counts the pilot's own squares as known, and a stratum with no miss in 10 pilot
        # questions (squares 0) then "needs" one question more, a count its posterior gives no chance
        # of holding; the first round, half of the plan, must be enough to pin that stratum's spread.
        smooth = _least_counts(
            lambda c: _width(c, weight, spread, z, None, confidence), start, score, target_width
        )
        if smooth.sum() > counts.sum():
            counts, width, proportional_width = _settled(predict, smooth, floor, weight, current)
            probability = probability_within(posterior, counts, width)
    if counts.sum() > MAX_QUESTIONS:
        raise InputError(
            f"a {target_width:g} wide interval needs more than {MAX_QUESTIONS:,} questions",
            hint="ask for a wider target",
        )
    n_more = int(counts.sum() - now.sum())
    rough = bool(n_more) and probability < _TRUSTED
    more = [int(counts[i] - now[i]) for i in range(len(names))]
    # A rough plan is followed in two rounds: half of each stratum's questions, then a plan from the
    # larger pilot, whose spreads are then known well enough to predict the rest.
    first = [math.ceil(m / 2) if rough else m for m in more]
    strata = tuple(
        PlanStratum(
            name, float(weight[i]), int(now[i]), more[i],
            float(values[i].mean()) if values[i].size else math.nan, float(spread[i]), first[i],
        )
        for i, name in enumerate(names)
    )  # fmt: skip
    if rough:
        where = ""
        if by is not None:
            where = (
                " ("
                + ", ".join(f"{f} in {by}={name}" for name, f in zip(names, first, strict=True) if f)
                + ")"
            )
        warnings.append(
            f"a pilot of {int(now.sum())} predicts the width only roughly (within "
            f"{WITHIN:.0%} with probability {probability:.2f}): label the first "
            f"{sum(first)}{where} and plan again"
        )
    return LabellingPlan(
        metric=metric, by=by, confidence=confidence, target_width=float(target_width),
        current_width=current, predicted_width=width, proportional_width=proportional_width,
        prediction_probability=probability, strata=strata,
        curve=_curve(predict, now, floor, score, n_more), warnings=tuple(warnings),
    )  # fmt: skip


def _settled(
    predict: Callable[[np.ndarray], float], counts: np.ndarray, floor: np.ndarray, weight: np.ndarray,
    current: float,
) -> tuple[np.ndarray, float, float]:  # fmt: skip
    """``counts`` and their predicted width, or the proportional allocation of the same total when that
    is predicted narrower (never hand out the wider plan); and the proportional width."""
    width = predict(counts)
    if width <= 0:  # every stratum's pilot all alike and nothing more to label: quote the smoothed width
        width = current
    proportional = np.ceil(_same_total_proportional(floor, weight, float(counts.sum())) - 1e-9)
    proportional_width = predict(proportional)
    if proportional_width < width:
        return proportional, proportional_width, proportional_width
    return counts, width, proportional_width


def smoothed_spreads(values: Sequence[np.ndarray], *, binary: bool) -> np.ndarray:
    """Each stratum's standard deviation, shrunk toward the pooled one (see the module doc)."""
    pooled = np.concatenate(values) if values else np.array([], dtype=np.float64)
    if binary:
        rate = _smoothed_rate(pooled)
        strength = _binary_strength(values, rate)
        rates = [(v.sum() + strength * rate) / (v.size + strength) for v in values]
        return np.sqrt(np.array([p * (1.0 - p) for p in rates], dtype=np.float64))
    mean = (pooled.sum() + 1.0) / (pooled.size + 2.0)
    ceiling = min(max(mean * (1.0 - mean), 1e-6), 0.25)  # the largest variance in [0, 1] at that mean
    freedom = max(pooled.size - 1, 0)
    raw = float(pooled.var(ddof=1)) if pooled.size > 1 else ceiling
    pooled_variance = (freedom * raw + _PRIOR * ceiling) / (freedom + _PRIOR)
    out = []
    for v in values:
        own = max(v.size - 1, 0)
        variance = float(v.var(ddof=1)) if v.size > 1 else pooled_variance
        out.append((own * variance + _PRIOR * pooled_variance) / (own + _PRIOR))
    return np.sqrt(np.array(out, dtype=np.float64))


def _binary_strength(values: Sequence[np.ndarray], rate: float) -> float:
    """How many questions' worth of the pooled rate each stratum's rate is shrunk toward: the
    beta-binomial ``p(1-p) / tau^2 - 1`` from the between-stratum variance ``tau^2`` of the rates
    (method of moments), between :data:`_PRIOR` and :data:`_MAX_STRENGTH`. Strata whose rates differ no
    more than chance would make share the pooled spread."""
    sizes = np.array([v.size for v in values], dtype=np.float64)
    total = sizes.sum()
    if total == 0 or np.count_nonzero(sizes) < 2:
        return _MAX_STRENGTH
    seen = sizes > 0
    rates = np.array([v.mean() for v, size in zip(values, sizes, strict=True) if size > 0])
    pooled = float(sum(v.sum() for v in values) / total)
    between = float(np.sum(sizes[seen] * (rates - pooled) ** 2))
    spread = (between - (np.count_nonzero(seen) - 1) * pooled * (1.0 - pooled)) / (
        total - float(np.sum(sizes**2)) / total
    )
    if spread <= 0:
        return _MAX_STRENGTH
    return float(min(_MAX_STRENGTH, max(_PRIOR, rate * (1.0 - rate) / spread - 1.0)))


def predicted_width(
    counts: Sequence[float], weights: Sequence[float], spreads: Sequence[float], confidence: float = 0.95
) -> float:
    """``2 z sqrt(sum_h W_h^2 S_h^2 / n_h)``: the normal interval's width of a stratified mean."""
    return _width(
        np.asarray(counts, dtype=np.float64), np.asarray(weights, dtype=np.float64),
        np.asarray(spreads, dtype=np.float64), z_value(confidence), None, confidence,
    )  # fmt: skip


def load_weights(path: str | Path) -> dict[str, float]:
    """Traffic weights per stratum value: a JSON object ``{"value": share}``, or lines ``value,share``
    (also tab- or ``=``-separated). Shares need not add up to 1."""
    p = Path(path)
    lines = list(read_text_lines(p))
    text = "\n".join(line for _, line in lines).strip()
    if text.startswith("{"):
        import json

        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", path=p, line=exc.lineno) from exc
        except RecursionError:
            raise InputError(f"malformed JSON ({TOO_DEEP})", path=p) from None
        items: list[tuple[str, Any, int | None]] = [(str(k), v, None) for k, v in data.items()]
    else:
        items = []
        for number, line in lines:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            for separator in ("\t", ",", "="):
                if separator in line:
                    name, _, share = line.rpartition(separator)
                    break
            else:
                raise InputError("expected 'value,share'", path=p, line=number, hint="e.g. lookup,0.4")
            items.append((name.strip(), share.strip(), number))
    weights: dict[str, float] = {}
    for name, share, line_number in items:
        try:
            number_value = float(share)
        except (TypeError, ValueError):
            number_value = -1.0
        if not (number_value >= 0.0 and math.isfinite(number_value)) or isinstance(share, bool):
            raise InputError(
                f"share of {name!r} is not a number >= 0", path=p, line=line_number, hint="e.g. lookup,0.4"
            )
        weights[name] = number_value
    if not weights or sum(weights.values()) <= 0:
        raise InputError(
            "no positive traffic weight", path=p, hint="give each stratum's share, e.g. lookup,0.4"
        )
    return weights


def _pilot(result: EvaluationResult) -> tuple[QueryResult, ...]:
    real = result.of_origin("real")
    if real:
        return real
    unlabelled = tuple(q for q in result.queries if q.origin is None)
    if unlabelled:
        return unlabelled
    raise InputError(
        "no real questions in the results",
        path=result.source,
        hint="evaluate the real set (origin real) and plan from its results",
    )


def _shares(
    pilot: Mapping[str, Sequence[float] | np.ndarray], weights: Mapping[str, float] | None, by: str | None
) -> tuple[dict[str, float], list[str]]:
    warnings: list[str] = []
    if weights is None:
        counts = {name: len(values) for name, values in pilot.items() if len(values)}
        if not counts:
            raise InputError("no pilot questions to plan from", hint="label a few real questions first")
        count_total = sum(counts.values())
        return {name: count / count_total for name, count in counts.items()}, warnings
    total = float(sum(weights.values()))
    shares = {str(name): share / total for name, share in weights.items()}
    unweighted = [name for name, values in pilot.items() if len(values) and name not in shares]
    if unweighted:
        field = f"{by}=" if by else ""
        warnings.append(
            f"no traffic weight for {', '.join(field + name for name in unweighted[:5])}: "
            "planned with weight 0 (its questions count for nothing in the figure)"
        )
        shares.update({name: 0.0 for name in unweighted})
    if not any(len(pilot.get(name, ())) for name in shares):
        raise InputError(
            "no pilot question falls in a weighted stratum",
            hint="check --by and the stratum values of the weights file",
        )
    return shares, warnings


def _smoothed_rate(values: np.ndarray) -> float:
    return float((values.sum() + 2.0) / (values.size + 4.0))


def _width(
    counts: np.ndarray, weight: np.ndarray, spread: np.ndarray, z: float, pooled: np.ndarray | None,
    confidence: float,
) -> float:  # fmt: skip
    if pooled is not None:  # one binary stratum: the Wilson interval of the pilot as it is
        return wilson_interval(float(pooled.sum()), float(pooled.size), confidence).width
    with np.errstate(divide="ignore", invalid="ignore"):
        # counts > 0 rather than a division by the count: a rounded count may be -0.0 (-inf, not inf)
        terms = np.where(weight > 0, np.where(counts > 0, weight**2 * spread**2 / counts, np.inf), 0.0)
    return float(2.0 * z * math.sqrt(float(terms.sum())))


def _least_counts(
    predict: Callable[[np.ndarray], float], floor: np.ndarray, score: np.ndarray, target: float
) -> np.ndarray:
    """The Neyman allocation (``max(floor_h, c score_h)``) of the least total whose predicted width is
    at most ``target``; past :data:`MAX_QUESTIONS`, the first total tried beyond it."""

    def counts_at(total: int) -> np.ndarray:
        return np.asarray(np.maximum(floor, np.ceil(_neyman_for_total(floor, score, float(total)) - 1e-9)))

    if predict(floor) <= target:
        return floor.copy()
    low = int(floor.sum())
    total = low + 1
    while (width := predict(counts_at(total))) > target:
        if total > MAX_QUESTIONS:
            return counts_at(total)
        low = total
        # the width falls about as 1/sqrt(n): jump toward the target, at most fourfold
        total = max(total + 1, math.ceil(total * min((width / target) ** 2, 4.0)))
    high = total
    while low + 1 < high:
        middle = (low + high) // 2
        if predict(counts_at(middle)) > target:
            low = middle
        else:
            high = middle
    return counts_at(high)


def _same_total_proportional(now: np.ndarray, weight: np.ndarray, total: float) -> np.ndarray:
    """``n_h = max(now_h, c * W_h)`` summing to ``total``: proportional allocation of the same budget."""
    low, high = 0.0, total + 1.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if np.maximum(now, middle * weight).sum() > total:
            high = middle
        else:
            low = middle
    return np.asarray(np.maximum(now, low * weight), dtype=np.float64)


def _neyman_for_total(now: np.ndarray, score: np.ndarray, total: float) -> np.ndarray:
    low, high = 0.0, 1.0
    while np.maximum(now, high * score).sum() < total and high < 1e12:
        high *= 2.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if np.maximum(now, middle * score).sum() > total:
            high = middle
        else:
            low = middle
    return np.asarray(np.maximum(now, low * score), dtype=np.float64)


def _curve(
    predict: Callable[[np.ndarray], float], now: np.ndarray, floor: np.ndarray, score: np.ndarray, n_more: int
) -> tuple[tuple[int, float], ...]:
    """Predicted width after labelling the questions ``floor`` asks for .. about 1.5x the plan's, 10
    steps, Neyman-allocated."""
    start = int(floor.sum() - now.sum())
    reach = max(start + 10, math.ceil(n_more * 1.5))
    points = []
    for extra in sorted({start + round((reach - start) * i / 10) for i in range(11)}):
        counts = np.maximum(floor, np.ceil(_neyman_for_total(floor, score, now.sum() + extra) - 1e-9))
        points.append((int(counts.sum() - now.sum()), predict(counts)))
    return tuple(points)


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else round(value, 4)


def _smoothed_means(values: Sequence[np.ndarray], *, binary: bool) -> np.ndarray:
    pooled = np.concatenate(values) if values else np.array([], dtype=np.float64)
    if binary:
        rate = _smoothed_rate(pooled)
        strength = _binary_strength(values, rate)
        return np.array([(v.sum() + strength * rate) / (v.size + strength) for v in values])
    mean = (pooled.sum() + 1.0) / (pooled.size + 2.0)
    return np.array([(v.sum() + _PRIOR * mean) / (v.size + _PRIOR) for v in values])


def _expected_width(
    counts: np.ndarray, weight: np.ndarray, spread: np.ndarray, centre: np.ndarray,
    values: Sequence[np.ndarray], z: float,
) -> float:  # fmt: skip
    """The stratified width at each stratum's expected final sample variance: of ``N = counts_h``
    questions, the ``n`` of the pilot are known and the ``m = N - n`` to label come from a population
    with mean ``centre_h`` and spread ``spread_h``, so the expected sum of squares about the final mean
    is ``SS_pilot + (m - 1 + n / N) S^2 + n m / N (mean_pilot - centre)^2``."""
    total = 0.0
    for h, v in enumerate(values):
        if weight[h] <= 0:
            continue
        big_n = float(counts[h])
        if big_n < 1:
            return math.inf
        n = v.size
        m = big_n - n
        if big_n < 2:
            variance = spread[h] ** 2
        else:
            own = float(((v - v.mean()) ** 2).sum()) if n else 0.0
            gap = (float(v.mean()) - centre[h]) ** 2 if n else 0.0
            squares = own + (m - 1.0 + n / big_n) * spread[h] ** 2 + n * m / big_n * gap
            variance = squares / (big_n - 1.0)
        total += weight[h] ** 2 * variance / big_n
    return float(2.0 * z * math.sqrt(total))

"""The calibration report as JSON: the headline on the first line, then everything else.

Names at least ``headline.metric``, ``headline.real``, ``headline.real_ci``, ``headline.synthetic``,
``headline.gap``, ``headline.n_real``, ``headline.n_synthetic``, and ``slices``: one record per metric and
slice with the same names plus ``field`` and ``value``. Undefined figures (an empty slice) are ``null``.
Control characters in strings are written as JSON escapes (``\\u001b``), never raw.
"""

from __future__ import annotations

import json
import math
from typing import Any

from realrecall.calibrate.calibration import CalibrationReport
from realrecall.calibrate.comparison import ComparisonReport
from realrecall.calibrate.diagnostics import SetDiagnostics, Summary
from realrecall.calibrate.gap import SliceGap
from realrecall.calibrate.statistics import Interval
from realrecall.printable import printable

__all__ = ["comparison_to_dict", "render_comparison_json", "render_json", "report_to_dict"]


def report_to_dict(report: CalibrationReport) -> dict[str, Any]:
    """The report as plain JSON-ready data (NaN becomes None)."""
    head = report.headline
    data: dict[str, Any] = {
        "headline": {
            "text": head.text,
            "metric": head.metric,
            "real": _num(head.real.value),
            "real_ci": _ci(head.real.interval),
            "synthetic": _num(head.synthetic.value),
            "synthetic_ci": _ci(head.synthetic.interval),
            "gap": _num(head.gap),
            "gap_ci": _ci(head.gap_interval),
            "n_real": head.real.n,
            "n_synthetic": head.synthetic.n,
            "confidence": report.confidence,
            "calibrated": None if report.calibrated is None else _num(report.calibrated.value),
            "calibrated_ci": None if report.calibrated is None else _ci(report.calibrated.interval),
        },
        "retriever": report.retriever,
        "retriever_name": report.retriever_name,
        "metrics": list(report.metrics),
        "slice_fields": list(report.slice_fields),
        "overall": [_gap_record(g) for g in report.gaps if g.field is None],
        "slices": [_gap_record(g) for g in report.gaps if g.field is not None],
        "calibrated": None,
        "diagnostics": {
            "real": _set_diagnostics(report.diagnostics.real),
            "synthetic": _set_diagnostics(report.diagnostics.synthetic),
            "overlap_skipped": report.diagnostics.overlap_skipped,
            "overlap_source": report.diagnostics.overlap_source,
            "realism": None if report.diagnostics.realism is None else report.diagnostics.realism.to_dict(),
            "realism_skipped": report.diagnostics.realism_skipped,
        },
        "rank_agreement": None,
        "answers": None,
        "judge": None if report.judge is None else report.judge.to_dict(),
        "judge_labels": None if report.judge_labels is None else report.judge_labels.to_dict(),
        "gates": [{"gate": g.gate, "passed": g.passed, "message": g.message} for g in report.gates],
        "warnings": list(report.warnings),
        "seed": report.seed,
        "n_resamples": report.n_resamples,
        "sources": list(report.sources),
    }
    if report.calibrated is not None:
        c = report.calibrated
        data["calibrated"] = {
            "metric": c.metric,
            "value": _num(c.value),
            "ci": _ci(c.interval),
            "by": c.by,
            "text": c.text,
            "measured_share": c.measured_share,
            "model": None
            if c.model is None
            else {
                "name": c.model.model,
                "validation_error": {name: _num(error) for name, error in c.model.errors.items()},
                "validation_standard_error": {
                    name: _num(error) for name, error in c.model.standard_errors.items()
                },
                "validated_on": c.model.validated_on,
                "strata": c.model.strata,
                "spread": c.model.spread,
                "spread_estimated": _num(c.model.spread_estimated),
                "spread_basis": c.model.spread_basis,
            },
            "predicted": None
            if c.predicted is None
            else {"value": _num(c.predicted.value), "ci": _ci(c.predicted.interval)},
            "label": None
            if c.advice is None
            else {
                "strata": list(c.advice.strata),
                "by_stratum": [
                    {"stratum": v, "n_more": n} for v, n in zip(c.advice.strata, c.advice.counts, strict=True)
                ],
                "total": c.advice.total,
                "predicted_width": _num(c.advice.predicted_width),
                "target_width": c.advice.target_width,
            },
            "calibrated_on": c.calibrated_on,
            "age_days": c.age_days,
            "stale": c.stale,
            "strata": [
                {
                    "value": s.value,
                    "source": s.source,
                    "figure": s.figure,
                    "weight": s.weight,
                    "synthetic": _num(s.synthetic),
                    "gap": _num(s.gap),
                    "corrected": _num(s.corrected),
                    "ci": None if s.interval is None else _ci(s.interval),
                    "n_synthetic": s.n_synthetic,
                    "n_real": s.n_real,
                }
                for s in c.strata
            ],
            "notes": list(c.notes),
        }
    if report.rank_agreement is not None:
        a = report.rank_agreement
        data["rank_agreement"] = {
            "metric": a.metric,
            "tau": _num(a.tau),
            "p_value": _num(a.p_value),
            "tau_ci": None if a.tau_interval is None else _ci(a.tau_interval),
            "advice": a.advice,
            "systems": [
                {"name": s.name, "synthetic": s.synthetic, "real": s.real, "n_synthetic": s.n_synthetic,
                 "n_real": s.n_real,
                 "synthetic_ci": None if s.synthetic_interval is None else _ci(s.synthetic_interval),
                 "real_ci": None if s.real_interval is None else _ci(s.real_interval)}
                for s in a.systems
            ],
            "synthetic_ties": [list(pair) for pair in a.synthetic_ties],
            "real_ties": [list(pair) for pair in a.real_ties],
        }  # fmt: skip
    if report.answers is not None:
        grid = report.answers
        data["answers"] = {
            "k": grid.k,
            "counts": dict(grid.counts),
            "verdict": grid.verdict,
            "unmatched": list(grid.unmatched),
            "per_query": dict(grid.cells),
        }
    return data


def render_json(report: CalibrationReport) -> str:
    """JSON text whose first line holds the whole headline object."""
    return _headline_first(report_to_dict(report))


def comparison_to_dict(report: ComparisonReport) -> dict[str, Any]:
    """The comparison as plain JSON-ready data: headline, test, and one row per slice."""
    return {
        "headline": {
            "text": report.headline,
            "metric": report.metric,
            "a": report.name_a,
            "b": report.name_b,
        },
        "test": report.test,
        "alpha": report.alpha,
        "judge_labels": None if report.judge_labels is None else report.judge_labels.to_dict(),
        "unpaired": report.unpaired,
        "unpaired_by_origin": [
            {"origin": u.origin, "only_a": u.only_a, "only_b": u.only_b, "text_differs": u.text_differs}
            for u in report.unpaired_by_origin
        ],
        "rows": [
            {
                "origin": r.origin,
                "field": r.field,
                "value": r.value,
                "n": r.n,
                "mean_a": _num(r.mean_a),
                "mean_b": _num(r.mean_b),
                "difference": _num(r.difference),
                "difference_ci": _ci(r.interval),
                "p_value": _num(r.p_value),
                "significant": r.significant,
                "note": r.note,
            }
            for r in report.rows
        ],
    }


def render_comparison_json(report: ComparisonReport) -> str:
    """JSON text of the comparison whose first line holds the headline object."""
    return _headline_first(comparison_to_dict(report))


def _headline_first(data: dict[str, Any]) -> str:
    head = json.dumps(data["headline"], ensure_ascii=False, allow_nan=False)
    rest = {k: v for k, v in data.items() if k != "headline"}
    body = json.dumps(rest, ensure_ascii=False, indent=2, allow_nan=False)
    return printable('{"headline": ' + head + ",\n" + body[1:].lstrip("\n") + "\n")


def _gap_record(gap: SliceGap) -> dict[str, Any]:
    return {
        "metric": gap.metric,
        "field": gap.field,
        "value": gap.value,
        "real": _num(gap.real.value),
        "real_ci": _ci(gap.real.interval),
        "real_method": gap.real.interval.method,
        "synthetic": _num(gap.synthetic.value),
        "synthetic_ci": _ci(gap.synthetic.interval),
        "gap": _num(gap.gap),
        "gap_ci": _ci(gap.gap_interval),
        "n_real": gap.n_real,
        "n_synthetic": gap.n_synthetic,
        "more_real_needed": gap.more_real_needed,
        "notes": list(gap.notes),
    }


def _set_diagnostics(d: SetDiagnostics) -> dict[str, Any]:
    return {
        "n": d.n,
        "question_words": _summary(d.question_words),
        "types": d.types,
        "languages": d.languages,
        "overlap": None if d.overlap is None else _summary(d.overlap),
        "exact_match_share": d.exact_match_share,
    }


def _summary(s: Summary) -> dict[str, Any]:
    return {"n": s.n, "mean": _num(s.mean), "median": _num(s.median), "p10": _num(s.p10), "p90": _num(s.p90)}


def _num(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _ci(interval: Interval) -> list[float] | None:
    return [interval.low, interval.high] if interval.defined else None

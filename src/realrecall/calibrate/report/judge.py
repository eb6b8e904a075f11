"""A judge's agreement with people, and prediction-powered figures, as text, JSON and HTML."""

from __future__ import annotations

import json
import math
from html import escape

from realrecall.calibrate.judge_agreement import LabelAgreement
from realrecall.calibrate.ppi import PPIReport
from realrecall.calibrate.report.page import page, table
from realrecall.calibrate.report.svg import confusion_matrix
from realrecall.printable import printable

__all__ = [
    "LABEL_AGREEMENT_FORMATS",
    "PPI_FORMATS",
    "label_agreement_figures",
    "render_label_agreement",
    "render_ppi",
]

LABEL_AGREEMENT_FORMATS = ("table", "json", "html")
PPI_FORMATS = ("table", "json")


def label_agreement_headline(agreement: LabelAgreement) -> str:
    a = agreement
    return (
        f"Judge vs people on {a.n_pairs} pairs: exact {a.exact:.3f}, kappa {a.kappa:.3f}, kappa at "
        f"grade >= {a.threshold} {a.kappa_binary:.3f}"
    )


def render_label_agreement(agreement: LabelAgreement, format: str) -> str:
    """``agreement`` as ``table`` (plain text), ``json`` or ``html`` (with the confusion matrix); control
    characters from data written as escapes (``realrecall.printable``)."""
    if format == "json":
        return printable(json.dumps(agreement.to_dict(), indent=2, ensure_ascii=False) + "\n")
    labels = [str(g) for g in agreement.grades]
    if format == "html":
        chart = confusion_matrix(
            labels, agreement.confusion, title="grades: people (rows) vs judge (columns)",
            row_label="human grade", column_label="judge grade",
        )  # fmt: skip
        body = [
            f'<p class="headline">{escape(label_agreement_headline(agreement))}</p>',
            f"<p>{escape(agreement.verdict)}</p>",
            f'<div class="charts"><figure>{chart}</figure></div>',
            table(["figure", "value"], label_agreement_figures(agreement)),
        ]
        return page(label_agreement_headline(agreement), body)
    width = max(6, *(len(label) for label in labels))
    lines = [label_agreement_headline(agreement), "", agreement.verdict, ""]
    lines += [f"{name:<22} {value}" for name, value in label_agreement_figures(agreement)]
    lines += ["", "human \\ judge " + " ".join(label.rjust(width) for label in labels)]
    for label, row in zip(labels, agreement.confusion, strict=True):
        lines.append(f"{label:>13} " + " ".join(str(count).rjust(width) for count in row))
    return printable("\n".join(lines) + "\n")


def ppi_headline(report: PPIReport) -> str:
    return (
        f"Prediction-powered {report.measure} of {len(report.systems)} systems: judge labels on "
        f"{report.n_all} queries, human labels on {report.n_labelled}"
    )


def render_ppi(report: PPIReport, format: str) -> str:
    """``report`` as ``table`` (plain text) or ``json``; control characters from data (system names)
    written as escapes."""
    if format == "json":
        return printable(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    width = max(6, *(len(s.system) for s in report.systems))
    level = f"{report.confidence * 100:g}% CI"
    lines = [ppi_headline(report), "", report.verdict, ""]
    lines.append(f"{'system':<{width}}  estimate  {level:<17}  judge only  human only  judge bias")
    for s in sorted(report.systems, key=lambda s: -s.estimate):
        ci = f"{s.ci.low:.4f} to {s.ci.high:.4f}"
        lines.append(
            f"{s.system:<{width}}  {s.estimate:8.4f}  {ci:<17}  {s.judge_mean:10.4f}  {s.human_mean:10.4f}  "
            f"{s.bias:+10.4f}"
        )
    return printable("\n".join(lines) + "\n")


def label_agreement_figures(agreement: LabelAgreement) -> list[list[str]]:
    """(figure, value) rows: pairs, exact, both kappas, precision, recall and the grade bias."""

    def shown(value: float) -> str:
        return "undefined" if math.isnan(value) else f"{value:.4f}"

    a = agreement
    return [
        ["pairs", str(a.n_pairs)],
        ["exact agreement", shown(a.exact)],
        ["kappa (all grades)", shown(a.kappa)],
        [f"kappa (grade >= {a.threshold})", shown(a.kappa_binary)],
        ["precision", shown(a.precision)],
        ["recall", shown(a.recall)],
        ["mean grade difference", f"{a.mean_grade_difference:+.4f}"],
    ]

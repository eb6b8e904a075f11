"""How far a judge's grades agree with people's on the same query-passage pairs.

Over the pairs both label files grade (TREC qrels or gold sets, ``realrecall.gold.load_gold``):

- ``exact``: the share of pairs given the same grade;
- ``kappa``: Cohen's kappa on every grade, ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the exact share and
  ``p_e = sum_g p_human(g) * p_judge(g)`` (unweighted; equals ``sklearn.metrics.cohen_kappa_score``);
- ``kappa_binary``: the same on "grade >= threshold" (relevant or not);
- ``precision``: of the pairs the judge calls relevant, the share people call relevant; ``recall``: of
  the pairs people call relevant, the share the judge calls relevant (both at the threshold);
- ``confusion``: counts of (human grade, judge grade);
- ``mean_grade_difference``: the judge's mean grade minus people's (> 0: the judge is lenient).

The threshold defaults to 2 when either file grades above 1 (graded relevance: "highly relevant"), else 1.

Reference (TREC DL 2023, GPT-4 against NIST on 22,327 pairs): exact 0.513, kappa 0.255, kappa_binary
0.429 at grade >= 2, precision 0.488, recall 0.620.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realrecall.calibrate.settings import LabelAgreementSettings
from realrecall.errors import InputError
from realrecall.files import refuse_same_file
from realrecall.gold import GoldQuery, GoldSet, load_gold
from realrecall.settings import settings_with

__all__ = [
    "LabelAgreement",
    "judge_part",
    "label_agreement",
    "load_label_agreement",
    "marked_label_agreement",
]


@dataclass(frozen=True)
class LabelAgreement:
    """Agreement of judge grades with human grades on shared pairs (see the module doc)."""

    n_pairs: int
    threshold: int
    exact: float
    kappa: float
    kappa_binary: float
    precision: float
    recall: float
    grades: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]
    mean_grade_difference: float
    only_human: int = 0
    only_judge: int = 0

    @property
    def verdict(self) -> str:
        """One sentence: how far the judge can stand in for people on these grades."""
        strength = _strength(self.kappa_binary)
        lean = (
            "more lenient than"
            if self.precision < self.recall
            else "stricter than"
            if self.precision > self.recall
            else "as strict as"
        )
        return (
            f"The judge agrees with people on {self.exact:.1%} of {self.n_pairs} pairs (kappa "
            f"{self.kappa:.3f}); on relevant-or-not at grade >= {self.threshold}, kappa "
            f"{self.kappa_binary:.3f} ({strength}). It is {lean} people here (precision "
            f"{self.precision:.3f}, recall {self.recall:.3f}): never quote a figure from its labels alone."
        )

    @property
    def relevant_ratio(self) -> float:
        """How many pairs the judge calls relevant for each one people do (``recall / precision``; 1:
        unbiased, above 1: lenient)."""
        if math.isnan(self.precision) or math.isnan(self.recall) or self.precision == 0:
            return math.nan
        return self.recall / self.precision

    @property
    def summary(self) -> str:
        """One line for reports that use the judge's labels: its agreement with people and its bias."""
        ratio = "" if math.isnan(self.relevant_ratio) else f", {self.relevant_ratio:.2f}x as many relevant"
        strength = _strength(self.kappa_binary)
        return (
            f"Judge labels, checked against people on {self.n_pairs} pairs: exact {self.exact:.3f}, "
            f"kappa {self.kappa:.3f}, at grade >= {self.threshold} kappa {self.kappa_binary:.3f} "
            f"({strength}), precision {self.precision:.3f}, recall {self.recall:.3f}; bias: mean grade "
            f"{self.mean_grade_difference:+.3f} against people's{ratio}. Figures from its labels alone "
            "are not to be quoted: correct them with human labels on some queries (realrecall judge ppi)."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_pairs": self.n_pairs,
            "threshold": self.threshold,
            "exact": _rounded(self.exact),
            "kappa": _rounded(self.kappa),
            "kappa_binary": _rounded(self.kappa_binary),
            "precision": _rounded(self.precision),
            "recall": _rounded(self.recall),
            "mean_grade_difference": _rounded(self.mean_grade_difference),
            "relevant_ratio": _rounded(self.relevant_ratio),
            "confusion": {
                "grades": list(self.grades),
                "rows": "human grade",
                "columns": "judge grade",
                "counts": [list(row) for row in self.confusion],
            },
            "only_human": self.only_human,
            "only_judge": self.only_judge,
            "verdict": self.verdict,
        }


def load_label_agreement(
    human: str | Path,
    judge: str | Path,
    *,
    settings: LabelAgreementSettings | None = None,
    **options: Any,
) -> LabelAgreement:
    """:func:`label_agreement` of two label files (TREC qrels or gold sets), which must be two files."""
    settings = settings_with(LabelAgreementSettings, settings, options, what="load_label_agreement")
    hint = "give the judge's labels as the second file"
    refuse_same_file(("people's labels", human), ("the judge's labels", judge), hint=hint)
    return label_agreement(load_gold(human), load_gold(judge), settings=settings)


def marked_label_agreement(
    human: str | Path, gold_sets: Sequence[str | Path], *, settings: LabelAgreementSettings | None = None
) -> LabelAgreement:
    """:func:`label_agreement` of people's labels and the pairs ``gold_sets`` mark as a judge's
    (``realrecall.formats.judge_marks``): what calibrate checks when only people's labels are given."""
    parts = [judge_part(load_gold(path)) for path in gold_sets]
    queries = {q.query_id: dict(q.gold) for part in parts for q in part.queries}
    for part in parts[1:]:  # one query in two gold sets: its judged pairs together
        for q in part.queries:
            queries[q.query_id].update(q.gold)
    judge = GoldSet(tuple(GoldQuery(qid, "", gold) for qid, gold in queries.items()), name="judge labels")
    if not judge.queries:
        raise InputError(
            "the results' gold sets hold no label marked as a judge's",
            path=gold_sets[0] if gold_sets else None,
            hint="give the judge's labels with --judge-labels",
        )
    return label_agreement(load_gold(human), judge, settings=settings)


def judge_part(gold: GoldSet) -> GoldSet:
    """The pairs of ``gold`` a judge graded (by their marks), with their grades; people's left out."""
    marks = gold.judged_by_judge()
    queries = []
    for query in gold.queries:
        marked = marks.get(query.query_id)
        graded = {pid: grade for pid, grade in query.gold.items() if marked and pid in marked}
        if graded:
            queries.append(GoldQuery(query.query_id, query.query, graded, origin=query.origin))
    return GoldSet(tuple(queries), name=f"{gold.name}[judge]", path=gold.path)


def label_agreement(
    human: GoldSet,
    judge: GoldSet,
    *,
    settings: LabelAgreementSettings | None = None,
    **options: Any,
) -> LabelAgreement:
    """Agreement of ``judge``'s grades with ``human``'s on the pairs both grade.

    ``settings`` (``LabelAgreementSettings``, or its fields as keywords over it): the ``threshold``
    grade a pair is relevant from (None: 2 when either labelling grades above 1, else 1).
    """
    threshold = settings_with(LabelAgreementSettings, settings, options, what="label_agreement").threshold
    human_grades: list[int] = []
    judge_grades: list[int] = []
    only_human = only_judge = 0
    for query in human.queries:
        other = judge.get(query.query_id)
        graded = {} if other is None else other.gold
        for passage_id, grade in query.gold.items():
            if passage_id in graded:
                human_grades.append(grade)
                judge_grades.append(graded[passage_id])
            else:
                only_human += 1
    shared = len(human_grades)
    only_judge = sum(len(q.gold) for q in judge.queries) - shared
    if shared == 0:
        raise InputError(
            "the two label files share no query-passage pair",
            path=judge.path,
            hint="give the judge's and people's grades of the same pairs (same query and passage ids)",
        )
    h = np.array(human_grades, dtype=np.int64)
    j = np.array(judge_grades, dtype=np.int64)
    if threshold is None:
        threshold = 2 if max(int(h.max()), int(j.max())) > 1 else 1
    grades = tuple(int(g) for g in np.union1d(h, j))
    index = {grade: i for i, grade in enumerate(grades)}
    confusion = np.zeros((len(grades), len(grades)), dtype=np.int64)
    np.add.at(confusion, ([index[int(g)] for g in h], [index[int(g)] for g in j]), 1)
    relevant_h, relevant_j = h >= threshold, j >= threshold
    both = int(np.count_nonzero(relevant_h & relevant_j))
    return LabelAgreement(
        n_pairs=shared,
        threshold=threshold,
        exact=float(np.mean(h == j)),
        kappa=cohen_kappa(confusion),
        kappa_binary=cohen_kappa(_binary_confusion(relevant_h, relevant_j)),
        precision=both / int(relevant_j.sum()) if relevant_j.any() else math.nan,
        recall=both / int(relevant_h.sum()) if relevant_h.any() else math.nan,
        grades=grades,
        confusion=tuple(tuple(int(c) for c in row) for row in confusion),
        mean_grade_difference=float(j.mean() - h.mean()),
        only_human=only_human,
        only_judge=only_judge,
    )


def cohen_kappa(confusion: np.ndarray) -> float:
    """Cohen's kappa of a square confusion matrix of counts; NaN when chance agreement is certain."""
    total = confusion.sum()
    observed = np.trace(confusion) / total
    expected = float(np.sum(confusion.sum(axis=1) * confusion.sum(axis=0))) / float(total) ** 2
    return math.nan if expected >= 1.0 else float((observed - expected) / (1.0 - expected))


def _binary_confusion(human: np.ndarray, judge: np.ndarray) -> np.ndarray:
    return np.array(
        [[np.count_nonzero(~human & ~judge), np.count_nonzero(~human & judge)],
         [np.count_nonzero(human & ~judge), np.count_nonzero(human & judge)]]
    )  # fmt: skip


def _strength(kappa: float) -> str:
    # Landis and Koch's (1977) bands, the words the literature reports kappa in.
    if math.isnan(kappa):
        return "undefined"
    for bound, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= bound:
            return f"{word} agreement"
    return "almost perfect agreement"


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)

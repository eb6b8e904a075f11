"""What a report says when the figure it quotes rests on a judge's labels: the rules, in one place.

evaluate finds the pairs a judge graded by their marks (``realrecall.formats.judge_marks``: the qrels
iteration column ``judge:<model>``, a JSON Lines query's ``"judged_by"``), whether or not anyone
declares the files, and counts them per gold set in results.json (``judge_labels``: pairs, queries,
models). calibrate, compare and the report apply these rules to the queries behind the figure they
quote (calibrate: the real queries, or every query when there is no real one; compare: each
system's queries):

1. No query behind the figure has a pair a judge graded: nothing is said.
2. Some have, and the judge was checked against people (calibrate's ``judge_labels`` and
   ``human_labels``: its agreement and bias on pairs both graded): the first line says the figure
   rests on judge labels, gives the judge's kappa at the relevance threshold and its mean grade
   against people's, and names ``realrecall judge ppi`` for the figure to quote; the judge's full
   agreement follows in the report.
3. Some have, and nothing checks the judge: the first line says the figure rests on judge labels not
   checked against people, and names the command that checks them (``realrecall judge agreement
   HUMAN JUDGE``, then calibrate with ``--judge-labels`` and ``--human-labels``) and ``realrecall judge
   ppi``.

In 2 and 3, when some queries behind the figure carry people's labels alone (the human part of a file
merged from people's and a judge's labels), the figure on those queries, with its interval, is given
beside: it rests on people alone. In every case the JSON report holds the counts (``judge_labels``),
and evaluate's table of such a gold set says under it how many pairs a judge graded
(:func:`judge_label_use_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from realrecall.calibrate.judge_agreement import LabelAgreement
from realrecall.calibrate.statistics import Estimate
from realrecall.evaluate.results import EvaluationResult, JudgeLabelUse, QueryResult

__all__ = [
    "CHECK_COMMAND",
    "PPI_COMMAND",
    "JudgeLabelNote",
    "judge_label_note",
    "judge_label_use_text",
    "judged_queries",
]

CHECK_COMMAND = "realrecall judge agreement HUMAN JUDGE"
"""The command that checks a judge's labels against people's on the pairs both graded."""
PPI_COMMAND = "realrecall judge ppi JUDGE HUMAN --measure M"
"""The command that corrects a judge-labelled figure with people's labels on some queries."""


@dataclass(frozen=True)
class JudgeLabelNote:
    """How far the figure a report quotes rests on a judge's labels, and what checks it (module doc).

    ``pairs`` of the ``judged_pairs`` behind the figure were graded by a judge (``models``), on
    ``queries`` of its ``n_queries`` queries; ``checked``: the judge's agreement with people, when
    measured; ``people_only``: the figure on the queries people alone labelled (None: there are none).
    """

    metric: str
    pairs: int
    judged_pairs: int
    queries: int
    n_queries: int
    models: tuple[str, ...]
    checked: LabelAgreement | None = None
    people_only: Estimate | None = None

    @property
    def text(self) -> str:
        """The sentence the first line of a report carries (rules 2 and 3)."""
        models = ", ".join(self.models) or "a judge"
        rests = (
            f"This figure rests on judge labels: {models} graded {self.pairs} of the {self.judged_pairs} "
            f"judged pairs of its gold sets, on {self.queries} of its {_queries(self.n_queries)}"
        )
        if self.checked is None:
            text = (
                f"{rests}, not checked against people. Check them with `{CHECK_COMMAND}` on pairs people "
                "graded (then calibrate --judge-labels JUDGE --human-labels HUMAN), and quote the figure "
                f"`{PPI_COMMAND}` corrects with people's labels on some queries."
            )
        else:
            a = self.checked
            text = (
                f"{rests}; checked against people on {a.n_pairs} pairs: kappa {_fmt(a.kappa_binary, 3)} at "
                f"grade >= {a.threshold}, mean grade {a.mean_grade_difference:+.3f} against people's. "
                f"Quote the figure `{PPI_COMMAND}` corrects with people's labels on some queries."
            )
        p = self.people_only
        if p is not None and p.n:
            level = f"{p.interval.confidence * 100:g}% CI"
            text += (
                f" On the {_queries(p.n)} people alone labelled, {self.metric} = {_fmt(p.value, 2)} "
                f"({level} {_fmt(p.interval.low, 2)}-{_fmt(p.interval.high, 2)})."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        p = self.people_only
        return {
            "metric": self.metric,
            "pairs": self.pairs,
            "judged_pairs": self.judged_pairs,
            "queries": self.queries,
            "n_queries": self.n_queries,
            "models": list(self.models),
            "checked": self.checked is not None,
            "people_only": None
            if p is None
            else {
                "value": _number(p.value),
                "ci": [_number(p.interval.low), _number(p.interval.high)],
                "n": p.n,
            },
            "check_command": CHECK_COMMAND,
            "ppi_command": PPI_COMMAND,
            "text": self.text,
        }


def judge_label_use_text(use: JudgeLabelUse) -> str:
    """What evaluate's table says under a gold set some of whose pairs a judge graded."""
    return (
        f"judge labels: {', '.join(use.models)} graded {use.pairs} of {use.judged_pairs} judged pairs, on "
        f"{len(use.query_ids)} of {_queries(use.n_queries)}; not to be quoted alone: realrecall calibrate "
        "says how far its figures rest on them and what checks them"
    )


def judged_queries(results: Iterable[EvaluationResult]) -> frozenset[tuple[str | None, str]]:
    """``(gold set, query id)`` of every query with a pair a judge graded (results.json ``judge_labels``)."""
    return frozenset(
        (gold_set.name, query_id)
        for result in results
        for gold_set in result.gold_sets
        if gold_set.judge_labels is not None
        for query_id in gold_set.judge_labels.query_ids
    )


def judge_label_note(
    results: Sequence[EvaluationResult],
    queries: Sequence[QueryResult],
    metric: str,
    *,
    checked: LabelAgreement | None = None,
    estimate: Callable[[Sequence[QueryResult]], Estimate] | None = None,
) -> JudgeLabelNote | None:
    """The note for a figure over ``queries`` (of ``results``), or None when no judge graded a pair of
    theirs (rule 1). ``checked``: the judge's measured agreement with people; ``estimate``: how the
    report estimates ``metric`` over some queries, for the figure on those people alone labelled."""
    judged = judged_queries(results)
    if not judged:
        return None
    mine = {(q.gold_set, q.query_id) for q in queries}
    touched = [q for q in queries if (q.gold_set, q.query_id) in judged]
    if not touched:
        return None
    pairs = judged_pairs = 0
    models: dict[str, None] = {}
    for result in results:
        for gold_set in result.gold_sets:
            use = gold_set.judge_labels
            if use is None or not any((gold_set.name, qid) in mine for qid in use.query_ids):
                continue
            # Counts are per gold set: a gold set's pairs count when its queries are behind the figure.
            pairs += use.pairs
            judged_pairs += use.judged_pairs
            models.update(dict.fromkeys(use.models))
    people = [q for q in queries if (q.gold_set, q.query_id) not in judged]
    return JudgeLabelNote(
        metric=metric,
        pairs=pairs,
        judged_pairs=judged_pairs,
        queries=len(touched),
        n_queries=len(queries),
        models=tuple(models),
        checked=checked,
        people_only=estimate(people) if people and estimate is not None else None,
    )


def _queries(n: int) -> str:
    return "1 query" if n == 1 else f"{n} queries"


def _fmt(value: float, digits: int) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def _number(value: float) -> float | None:
    return None if value != value else value

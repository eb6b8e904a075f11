"""Why the synthetic and real sets differ, side by side.

- question length in words;
- lexical overlap of the question with its gold passage (the vocabulary-reuse bias: generated questions
  copy the passage's words, real users do not), the highest over the query's gold passages, by the
  generate stage's definition (``realrecall.text_features.lexical_overlap``: share of the
  question's content-word stems found in the passage), so both stages measure the same thing;
- the mix of question types and languages;
- the share answerable by exact string match: the lower-cased question found verbatim in a lower-cased
  gold passage;
- the realism score (``realrecall.calibrate.realism``): how well a classifier tells the synthetic
  questions from the real ones by their text alone (AUC near 0.5: they read alike), when asked for
  (it trains a classifier), each set has at least ``MIN_QUERIES`` questions and scikit-learn is
  installed; otherwise ``realism_skipped`` says which is missing.

Overlap and exact match need the passage text, so they need the corpus; without it they are skipped and
the reason is stated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from realrecall.calibrate.realism import RealismScore, realism_missing, realism_score
from realrecall.evaluate.results import QueryResult
from realrecall.text_features import lexical_overlap, words

__all__ = ["Diagnostics", "SetDiagnostics", "Summary", "diagnose"]


@dataclass(frozen=True)
class Summary:
    """A distribution in brief, with its values kept for plotting."""

    n: int
    mean: float
    median: float
    p10: float
    p90: float
    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        array = np.asarray(values, dtype=np.float64)
        if array.size == 0:
            nan = float("nan")
            return cls(0, nan, nan, nan, nan, ())
        p10, median, p90 = np.quantile(array, [0.1, 0.5, 0.9])
        return cls(int(array.size), float(array.mean()), float(median), float(p10), float(p90), tuple(values))


@dataclass(frozen=True)
class SetDiagnostics:
    """The diagnostics of one set of queries (real or synthetic)."""

    origin: str
    n: int
    question_words: Summary
    types: dict[str, int]
    languages: dict[str, int]
    overlap: Summary | None
    exact_match_share: float | None


@dataclass(frozen=True)
class Diagnostics:
    """Real and synthetic diagnostics side by side; ``overlap_skipped`` says why overlap is absent."""

    real: SetDiagnostics
    synthetic: SetDiagnostics
    overlap_skipped: str | None = None
    overlap_source: str = ""
    realism: RealismScore | None = None
    realism_skipped: str | None = None


_NOT_ASKED = "not asked for (--realism trains a classifier that tells synthetic from real questions)"
"""Why the realism score is absent when it was not asked for."""


def diagnose(
    real: Sequence[QueryResult],
    synthetic: Sequence[QueryResult],
    passage_text: Callable[[str], str | None] | None,
    *,
    skipped_reason: str | None = None,
    realism: bool = False,
) -> Diagnostics:
    """Diagnostics of both sets; ``passage_text(id)`` gives a gold passage's text (None: no corpus).

    ``realism=True`` adds the realism score. It trains a classifier (most of a calibrate call's time),
    so it is computed only when asked for (``calibrate --realism``, ``realism = true`` in pipeline.toml).
    """
    overlap_fn, source = _overlap_function()
    reason = None if passage_text is not None else (skipped_reason or "no corpus text available")
    score, realism_skipped = _realism(real, synthetic) if realism else (None, _NOT_ASKED)
    return Diagnostics(
        real=_diagnose_set("real", real, passage_text, overlap_fn),
        synthetic=_diagnose_set("synthetic", synthetic, passage_text, overlap_fn),
        overlap_skipped=reason,
        overlap_source=source if passage_text is not None else "",
        realism=score,
        realism_skipped=realism_skipped,
    )


def _realism(
    real: Sequence[QueryResult], synthetic: Sequence[QueryResult]
) -> tuple[RealismScore | None, str | None]:
    # Queries without text (a TREC qrels gold set) say nothing about how questions read.
    real_texts = [q.query for q in real if q.query.strip()]
    synthetic_texts = [q.query for q in synthetic if q.query.strip()]
    missing = realism_missing(len(real_texts), len(synthetic_texts))
    if missing is not None:
        return None, missing
    return realism_score(real_texts, synthetic_texts), None


def _overlap_function() -> tuple[Callable[[str, str, str | None], float], str]:
    # The report names the function by where it lives, so a reader can look the definition up.
    return lexical_overlap, f"{lexical_overlap.__module__}.{lexical_overlap.__qualname__}"


def _diagnose_set(
    origin: str,
    records: Sequence[QueryResult],
    passage_text: Callable[[str], str | None] | None,
    overlap_fn: Callable[[str, str, str | None], float],
) -> SetDiagnostics:
    lengths = [len(words(q.query)) for q in records]
    overlap: Summary | None = None
    exact_share: float | None = None
    if passage_text is not None:
        overlaps: list[float] = []
        exact = 0
        judged = 0
        for query in records:
            passages = [text for text in map(passage_text, query.gold) if text]
            if not passages:
                continue
            judged += 1
            language = query.field("language")
            overlaps.append(max(float(overlap_fn(query.query, text, language)) for text in passages))
            needle = query.query.strip().lower()
            exact += bool(needle) and any(needle in text.lower() for text in passages)
        overlap = Summary.of(overlaps)
        exact_share = exact / judged if judged else None
    return SetDiagnostics(
        origin=origin,
        n=len(records),
        question_words=Summary.of(lengths),
        types=_mix(q.field("type") for q in records),
        languages=_mix(q.field("language") for q in records),
        overlap=overlap,
        exact_match_share=exact_share,
    )


def _mix(values: Any) -> dict[str, int]:
    counts = Counter("(missing)" if v is None else str(v) for v in values)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

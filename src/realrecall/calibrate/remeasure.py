"""Re-measure instead of carrying: the real set of earlier results, scored again on today's corpus with
today's retriever.

A real figure belongs to the corpus it was measured on: cut every other abstract to 200 characters
and bm25's real recall@10 on SciFact falls from 0.82 to 0.70, while a calibration that carried the old
real figure quoted 0.80. Evaluating the real set costs no model call, so when the corpus of the
calibration differs from today's, ``calibrate`` re-scores it (gold passages resolved on today's corpus
as ``gold migrate`` does: chunk ids the corpus holds, evidence text for the rest) and quotes that.
Where it cannot (the real set's file or today's corpus is not found, the retriever cannot be rebuilt
from the results, or real questions have neither chunk ids in today's corpus nor evidence), it refuses
in one line naming the command that does it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.evaluate.results import EvaluationResult
from realrecall.gold import GoldSet, load_gold

__all__ = ["corpus_changed", "refuse_uncarried", "remeasure_real"]

# Keys a custom function's fingerprint adds to its options; the function is rebuilt from its name.
_CODE_KEYS = ("function", "source_sha256", "class")


def corpus_changed(calibration: EvaluationResult, current: EvaluationResult) -> bool:
    """Whether the two results were measured on different corpora (by SHA-256, where both record it)."""
    then, now = calibration.corpus_sha256, current.corpus_sha256
    return bool(then and now and then != now)


def remeasure_real(
    calibration: EvaluationResult,
    current: EvaluationResult,
    *,
    corpus: Corpus | str | Path | None = None,
) -> EvaluationResult:
    """The real gold sets of ``calibration`` scored on ``current``'s corpus with ``current``'s retriever.

    ``corpus``: today's corpus (default: the one ``current`` names). The result has the metrics of
    ``current`` and merges with it (same retriever name and description).
    """
    from realrecall.evaluate.evaluation import evaluate

    real_sets = [g for g in calibration.gold_sets if g.origins.get("real")]
    source = calibration.source or "the calibration results"
    fix = _fix(current, real_sets[0].path if real_sets and real_sets[0].path else "REAL.jsonl")
    if not real_sets:
        raise InputError(f"{source} holds no real queries to re-measure", hint=fix)
    chunks = _today_corpus(corpus, current, fix)
    retriever = _today_retriever(current, chunks, fix)
    gold_sets = []
    for gold_set in real_sets:
        path = _found(gold_set.path, calibration.source)
        if path is None:
            raise InputError(
                f"the corpus changed since {source}, and its real set {gold_set.path!r} is not found to be "
                "re-scored on today's corpus",
                hint=fix,
            )
        gold = load_gold(path, origin="real")
        refuse_uncarried(gold, chunks, since=f"the corpus changed since {source}, and ", then=fix)
        gold_sets.append(gold)
    k = tuple(sorted({int(m.partition("@")[2]) for m in current.metrics if m.partition("@")[2].isdigit()}))
    return evaluate(
        gold_sets, corpus=chunks, retriever=retriever, metrics=list(current.metrics), k=k or (10,)
    )


def refuse_uncarried(gold: GoldSet, corpus: Corpus, *, since: str = "", then: str = "") -> None:
    """Refuse a real set today's corpus cannot score: questions with neither a chunk id the corpus holds
    nor evidence text to find one by would count as misses, and the real figure would not be today's.

    ``calibrate --calibrate-on`` (re-measuring an earlier real set), one-call ``calibrate`` and the
    scheduled job all check this before scoring. ``since``: what happened, as the message's start;
    ``then``: a further way out, after the free ones.
    """
    real = [query for query in gold if query.origin in (None, "real")]
    lost = [
        query.query_id
        for query in real
        if not query.evidence and all(corpus.get(passage) is None for passage in query.gold)
    ]
    if not lost:
        return
    where = gold.path or gold.name
    raise InputError(
        f"{since}{len(lost)} real questions of {where} (first: {lost[0]!r}) have neither chunk ids in "
        "today's corpus nor evidence text to find them by, so the real set cannot be measured on it "
        "(they would count as misses)",
        hint="re-measure for free: give those questions their evidence text and realrecall gold migrate "
        f"{where} --corpus TODAY.jsonl -o REAL_NOW.jsonl carries them to today's corpus (no model call), "
        "or label them again on today's corpus" + (f"; or {then}" if then else ""),
    )


def _fix(current: EvaluationResult, real: str) -> str:
    corpus = current.corpus_path or "TODAY.jsonl"
    return (
        f"score the real set on today's corpus (no model call): realrecall evaluate --gold {real} "
        f"--corpus {corpus} --retriever {current.name} -o real_now.json, then calibrate both results"
    )


def _found(path: str | None, results_source: str | None) -> Path | None:
    if not path:
        return None
    candidate = Path(path)
    if candidate.exists():
        return candidate
    if not candidate.is_absolute() and results_source:
        beside = Path(results_source).parent / candidate
        if beside.exists():
            return beside
    return None


def _today_corpus(corpus: Corpus | str | Path | None, current: EvaluationResult, fix: str) -> Corpus:
    if isinstance(corpus, Corpus):
        return corpus
    if corpus is not None:
        return load_corpus(corpus)
    path = _found(current.corpus_path, current.source)
    if path is None:
        raise InputError(
            "the corpus changed since the calibration, and today's corpus "
            f"({current.corpus_path or 'not named in the results'}) is not found to re-score the real set on",
            hint=f"give it with --corpus, or {fix}",
        )
    return load_corpus(path)


def _today_retriever(current: EvaluationResult, corpus: Corpus, fix: str) -> Any:
    """Today's retriever, rebuilt from the results and checked against their fingerprint."""
    from realrecall.evaluate.retrievers import build_retriever
    from realrecall.evaluate.retrievers.registry import CUSTOM

    fingerprint: Mapping[str, Any] = current.retriever_fingerprint or {}
    name = fingerprint.get("name")
    options = dict(fingerprint.get("options") or {})
    if not name:
        raise InputError(
            "the corpus changed since the calibration, and these results record no retriever to re-score "
            "the real set with (a run file, or an older realrecall)",
            hint=fix,
        )
    target = current.name if name == CUSTOM.name else str(name)
    if name == CUSTOM.name:
        options = {key: value for key, value in options.items() if key not in _CODE_KEYS}
    try:
        retriever = build_retriever(target, corpus, options=options)
    except InputError as exc:
        raise InputError(
            f"the corpus changed since the calibration, and the retriever of these results cannot be "
            f"rebuilt to re-score the real set ({exc})",
            hint=fix,
        ) from exc
    if dict(getattr(retriever, "fingerprint", {})) != dict(fingerprint):
        raise InputError(
            f"the corpus changed since the calibration, and {target} rebuilt here is not the retriever of "
            "these results (its fingerprint differs)",
            hint=fix,
        )
    return retriever

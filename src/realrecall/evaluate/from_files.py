"""Evaluate from paths: load the gold sets, the corpus and a run, or build a retriever by name, then score.

The one place where "what the user named" becomes "what ``evaluate`` scores": ``realrecall evaluate``,
one-call ``realrecall calibrate --synthetic --real`` and the scheduled job all come here, so they
check the same things in the same order and share one set of defaults (``evaluate.defaults``).

Loading is split from scoring (``load_inputs`` then ``EvaluationInputs.evaluate``) because the
scheduled job must read every input and build the retriever *before* it generates, which may take
long and cost requests, and only then score the synthetic set generation has just written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from realrecall._gc import gc_paused
from realrecall.errors import InputError
from realrecall.evaluate import defaults
from realrecall.resolution import check_gold_from

if TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.evaluate.results import EvaluationResult
    from realrecall.evaluate.retrievers import Retriever, RunSettings
    from realrecall.gold import GoldSet
    from realrecall.runs import Run

__all__ = ["EvaluationInputs", "evaluate_files", "load_inputs"]

GoldSource = str | Path


@dataclass(frozen=True)
class EvaluationInputs:
    """Everything a score needs, loaded and checked: gold sets, corpus, and a retriever or a run."""

    gold_sets: tuple[GoldSet, ...]
    corpus: Corpus | None
    retriever: Retriever | None
    run: Run | None

    def evaluate(
        self,
        *,
        more_gold: Sequence[GoldSet] = (),
        metrics: Sequence[str] | None = None,
        k: Sequence[int] = defaults.K,
        by: Sequence[str] = (),
        relevance_threshold: int = defaults.RELEVANCE_THRESHOLD,
        progress: Callable[[int, int], None] | None = None,
        gold_from: str = defaults.GOLD_FROM,
        evidence_coverage: float = defaults.EVIDENCE_COVERAGE,
    ) -> EvaluationResult:
        """Score the gold sets (then ``more_gold``, e.g. a set generated after loading) with ``evaluate``."""
        from realrecall.evaluate.evaluation import evaluate

        return evaluate(
            [*self.gold_sets, *more_gold],
            corpus=self.corpus,
            retriever=self.retriever,
            run=self.run,
            metrics=metrics,
            k=k,
            by=by,
            relevance_threshold=relevance_threshold,
            progress=progress,
            gold_from=gold_from,
            evidence_coverage=evidence_coverage,
        )


@gc_paused
def load_inputs(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]],
    *,
    corpus: str | Path | None = None,
    retriever: str | None = None,
    retriever_options: Mapping[str, object] | None = None,
    run: str | Path | None = None,
    origin: str | None = None,
    settings: RunSettings | None = None,
    retriever_defaults: Mapping[str, object] | None = None,
) -> EvaluationInputs:
    """Load what ``evaluate`` needs from paths, checking the combination first.

    ``gold``: paths, or ``(path, origin)`` pairs for sets whose origin the caller knows (one-call
    calibrate, the pipeline); ``origin`` applies to the bare paths. Give ``run`` (a TREC or JSONL run)
    or a ``retriever`` name with its options (default ``bm25``), which needs ``corpus``.
    """
    from realrecall.corpus import load_corpus
    from realrecall.gold import load_gold

    if run is not None and (retriever is not None or retriever_options):
        raise InputError(f"give --run or {'--retriever' if retriever else '--retriever-option'}, not both")
    gold_sets = tuple(
        load_gold(item[0], origin=item[1]) if isinstance(item, tuple) else load_gold(item, origin=origin)
        for item in gold
    )
    if run is not None:
        from realrecall.runs import load_run

        loaded = load_corpus(corpus) if corpus is not None else None
        return EvaluationInputs(gold_sets, loaded, None, load_run(run))
    if corpus is None:
        raise InputError(
            "--corpus is needed to retrieve", hint="give --corpus FILE, or score a finished --run FILE"
        )
    from realrecall.evaluate.retrievers import build_retriever

    loaded_corpus = load_corpus(corpus)
    built = build_retriever(
        retriever or defaults.RETRIEVER,
        loaded_corpus,
        options=dict(retriever_options or {}),
        settings=settings,
        defaults=retriever_defaults,
    )
    return EvaluationInputs(gold_sets, loaded_corpus, built, None)


def evaluate_files(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]],
    *,
    corpus: str | Path | None = None,
    retriever: str | None = None,
    retriever_options: Mapping[str, object] | None = None,
    run: str | Path | None = None,
    origin: str | None = None,
    metrics: Sequence[str] | None = None,
    k: Sequence[int] = defaults.K,
    by: Sequence[str] = (),
    relevance_threshold: int = defaults.RELEVANCE_THRESHOLD,
    settings: RunSettings | None = None,
    retriever_defaults: Mapping[str, object] | None = None,
    progress: Callable[[int, int], None] | None = None,
    gold_from: str = defaults.GOLD_FROM,
    evidence_coverage: float = defaults.EVIDENCE_COVERAGE,
) -> EvaluationResult:
    """``load_inputs`` then score: ``realrecall evaluate`` as one function call."""
    check_gold_from(gold_from, evidence_coverage)  # before loading: a typo costs no corpus read
    inputs = load_inputs(
        gold,
        corpus=corpus,
        retriever=retriever,
        retriever_options=retriever_options,
        run=run,
        origin=origin,
        settings=settings,
        retriever_defaults=retriever_defaults,
    )
    return inputs.evaluate(
        metrics=metrics,
        k=k,
        by=by,
        relevance_threshold=relevance_threshold,
        progress=progress,
        gold_from=gold_from,
        evidence_coverage=evidence_coverage,
    )

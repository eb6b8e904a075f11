"""Evaluate from paths: load the gold sets, the corpus and a run, or build a retriever by name, then score.

The one place where "what the user named" becomes "what ``evaluate`` scores": ``realrecall evaluate``,
one-call ``realrecall calibrate --synthetic --real`` and the scheduled job all come here, so they
check the same things in the same order and share one settings object (``EvaluateSettings``).

Loading is split from scoring (``load_inputs`` then ``EvaluationInputs.evaluate``) because the
scheduled job must read every input and build the retriever *before* it generates, which may take
long and cost requests, and only then score the synthetic set generation has just written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.bulk import bulk_step
from realrecall.errors import InputError
from realrecall.evaluate.settings import DEFAULT_RETRIEVER, EvaluateSettings
from realrecall.settings import settings_with

if TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.evaluate.results import EvaluationResult
    from realrecall.evaluate.retrievers import Retriever
    from realrecall.gold import GoldSet
    from realrecall.runs import Run

__all__ = ["EvaluationInputs", "evaluate_files", "load_inputs"]

GoldSource = str | Path


@dataclass(frozen=True)
class EvaluationInputs:
    """Everything a score needs, loaded and checked: gold sets, corpus, and a retriever or a run, with
    the settings they are scored by."""

    gold_sets: tuple[GoldSet, ...]
    corpus: Corpus | None
    retriever: Retriever | None
    run: Run | None
    settings: EvaluateSettings = field(default_factory=EvaluateSettings)

    def evaluate(
        self, *, more_gold: Sequence[GoldSet] = (), progress: Callable[[int, int], None] | None = None
    ) -> EvaluationResult:
        """Score the gold sets (then ``more_gold``, e.g. a set generated after loading) with ``evaluate``.

        Scoring a finished run here is one bulk step (``realrecall.bulk``): no code of the user's runs
        in it, and no collection walks the gold sets again between its parts. A retriever's searches
        (and the Ray engine's client) run with the collector as the caller left it.
        """
        from realrecall.evaluate.evaluation import evaluate

        scored = self.run is not None and not self.settings.engine_settings.on_ray
        return (bulk_step(evaluate) if scored else evaluate)(
            [*self.gold_sets, *more_gold],
            corpus=self.corpus,
            retriever=self.retriever,
            run=self.run,
            settings=self.settings,
            progress=progress,
        )


def load_inputs(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]],
    *,
    corpus: str | Path | None = None,
    run: str | Path | None = None,
    origin: str | None = None,
    settings: EvaluateSettings | None = None,
    **options: Any,
) -> EvaluationInputs:
    """Load what ``evaluate`` needs from paths, checking the combination first.

    ``gold``: paths, or ``(path, origin)`` pairs for sets whose origin the caller knows (one-call
    calibrate, the pipeline); ``origin`` applies to the bare paths. Give ``run`` (a TREC or JSONL run)
    or the retriever to build (``settings.retriever`` and its options; default ``bm25``), which needs
    ``corpus``. ``settings`` (or its fields as keywords) as in ``evaluate``.

    Not a bulk step (``realrecall.bulk``) when it builds a retriever: a retriever's code runs here (a
    ``module:function`` imported and built, a corpus embedded), with the collector as the caller left
    it. Reading a run is one (files only). On the Ray engine (``settings.engine_settings``) the
    retriever is only checked here, and built in each of the engine's retrieval actors.
    """
    settings = settings_with(EvaluateSettings, settings, options, what="load_inputs")
    if run is not None and (settings.retriever is not None or settings.retriever_options):
        named = "--retriever" if settings.retriever is not None else "--retriever-option"
        raise InputError(f"give --run or {named}, not both")
    if run is not None:
        return _with_run(gold, corpus, run, origin, settings)
    gold_sets = _gold_sets(gold, origin)
    if corpus is None:
        raise InputError(
            "--corpus is needed to retrieve", hint="give --corpus FILE, or score a finished --run FILE"
        )
    from realrecall.corpus import load_corpus
    from realrecall.evaluate.retrievers.registry import DeferredRetriever, RetrieverRecipe

    loaded_corpus = load_corpus(corpus)
    recipe = RetrieverRecipe(
        settings.retriever or DEFAULT_RETRIEVER,
        loaded_corpus,
        options=dict(settings.retriever_options),
        settings=settings.run_settings,
        defaults=settings.retriever_defaults(),
    )
    if settings.engine_settings.on_ray:
        # Built where it searches, once in each retrieval actor: not here too.
        return EvaluationInputs(gold_sets, loaded_corpus, DeferredRetriever(recipe), None, settings)
    return EvaluationInputs(gold_sets, loaded_corpus, recipe(), None, settings)


@bulk_step  # files only, no code of the user's: the gold sets are not walked again as the run is read
def _with_run(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]],
    corpus: str | Path | None,
    run: str | Path,
    origin: str | None,
    settings: EvaluateSettings,
) -> EvaluationInputs:
    from realrecall.runs import load_run

    gold_sets = _gold_sets(gold, origin)
    loaded = None
    if corpus is not None:  # the corpus module only when there is one (a run's files alone need none)
        from realrecall.corpus import load_corpus

        loaded = load_corpus(corpus)
    return EvaluationInputs(gold_sets, loaded, None, load_run(run), settings)


def _gold_sets(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]], origin: str | None
) -> tuple[GoldSet, ...]:
    from realrecall.gold import load_gold

    return tuple(
        load_gold(item[0], origin=item[1]) if isinstance(item, tuple) else load_gold(item, origin=origin)
        for item in gold
    )


def evaluate_files(
    gold: Sequence[GoldSource | tuple[GoldSource, str | None]],
    *,
    corpus: str | Path | None = None,
    run: str | Path | None = None,
    origin: str | None = None,
    settings: EvaluateSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> EvaluationResult:
    """``load_inputs`` then score: ``realrecall evaluate`` as one function call.

    The settings are checked before anything is read: a typo in them costs no corpus read.
    """
    settings = settings_with(EvaluateSettings, settings, options, what="evaluate_files")
    inputs = load_inputs(gold, corpus=corpus, run=run, origin=origin, settings=settings)
    return inputs.evaluate(progress=progress)

"""``--synthetic G1 --real G2``: evaluate both gold sets with one retriever, then calibrate, in one call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from realrecall.calibrate.calibration import CalibrationReport, calibrate
from realrecall.gold import GoldSet

if TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.evaluate.retrievers import Retriever
    from realrecall.runs import Run

__all__ = ["evaluate_and_calibrate"]


def evaluate_and_calibrate(
    synthetic: GoldSet,
    real: GoldSet,
    *,
    corpus: Corpus | None = None,
    retriever: Retriever | None = None,
    run: Run | None = None,
    k: Sequence[int] = (1, 5, 10, 50),
    by: Sequence[str] = (),
    relevance_threshold: int = 1,
    **options: Any,
) -> CalibrationReport:
    """Score ``retriever`` (or ``run``) on both gold sets with ``realrecall.evaluate.evaluate``, then
    :func:`calibrate` the result; ``options`` are calibrate's keyword options."""
    # Imported here: the evaluate stage (and its scoring kernel) is only needed in this mode.
    from realrecall.evaluate import evaluate

    result = evaluate(
        [synthetic, real],
        corpus=corpus,
        retriever=retriever,
        run=run,
        k=k,
        by=by,
        relevance_threshold=relevance_threshold,
    )
    return calibrate([result], corpus=corpus, by=by or None, **options)

"""``--synthetic G1 --real G2``: evaluate both gold sets with one retriever, then calibrate, in one call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.calibrate.calibration import CalibrationReport, calibrate
from realrecall.evaluate import defaults as evaluate_defaults
from realrecall.resolution import check_gold_from

if TYPE_CHECKING:
    from realrecall.evaluate.retrievers import RunSettings

__all__ = ["evaluate_and_calibrate"]


def evaluate_and_calibrate(
    synthetic: str | Path,
    real: str | Path,
    *,
    corpus: str | Path | None = None,
    retriever: str | None = None,
    retriever_options: Mapping[str, object] | None = None,
    run: str | Path | None = None,
    k: Sequence[int] = evaluate_defaults.K,
    by: Sequence[str] = (),
    relevance_threshold: int = evaluate_defaults.RELEVANCE_THRESHOLD,
    settings: RunSettings | None = None,
    gold_from: str = evaluate_defaults.GOLD_FROM,
    evidence_coverage: float = evaluate_defaults.EVIDENCE_COVERAGE,
    **options: Any,
) -> CalibrationReport:
    """Score ``retriever`` (or ``run``) on both gold sets with ``evaluate_files``, then
    :func:`calibrate` the result; ``options`` are calibrate's keyword options. ``gold_from`` and
    ``evidence_coverage``: where gold passages come from, as in ``evaluate`` (``realrecall.resolution``)."""
    # Imported here: the evaluate stage (and its scoring kernel) is only needed in this mode.
    from realrecall.evaluate.from_files import load_inputs

    check_gold_from(gold_from, evidence_coverage)  # before loading: a typo costs no corpus read

    inputs = load_inputs(
        [(synthetic, "synthetic"), (real, "real")],
        corpus=corpus,
        retriever=retriever,
        retriever_options=retriever_options,
        run=run,
        settings=settings,
    )
    result = inputs.evaluate(
        k=k,
        by=by,
        relevance_threshold=relevance_threshold,
        gold_from=gold_from,
        evidence_coverage=evidence_coverage,
    )
    return calibrate([result], corpus=inputs.corpus, by=by or None, **options)

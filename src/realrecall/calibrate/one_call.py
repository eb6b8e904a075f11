"""``--synthetic G1 --real G2``: evaluate both gold sets with one retriever, then calibrate, in one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from realrecall.calibrate.calibration import CalibrationReport, calibrate
from realrecall.calibrate.remeasure import refuse_uncarried
from realrecall.calibrate.settings import CalibrateSettings
from realrecall.evaluate.from_files import load_inputs
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.settings import setting_fields, settings_with

__all__ = ["evaluate_and_calibrate"]


def evaluate_and_calibrate(
    synthetic: str | Path,
    real: str | Path,
    *,
    corpus: str | Path | None = None,
    run: str | Path | None = None,
    evaluation: EvaluateSettings | None = None,
    settings: CalibrateSettings | None = None,
    **options: Any,
) -> CalibrationReport:
    """Score the retriever ``evaluation`` names (or ``run``) on both gold sets, then :func:`calibrate`
    the result with ``settings``. ``options``: fields of either settings, as keywords over them (``by``
    slices both).

    A real set today's corpus cannot score (questions with neither chunk ids in it nor evidence text)
    is refused before anything is retrieved (``remeasure.refuse_uncarried``)."""
    evaluate_names = {item.name for item in setting_fields(EvaluateSettings)}
    calibrate_names = {item.name for item in setting_fields(CalibrateSettings)}
    unknown = {name: value for name, value in options.items() if name not in evaluate_names | calibrate_names}
    evaluation = settings_with(
        EvaluateSettings,
        evaluation,
        {name: value for name, value in options.items() if name in evaluate_names},
        what="evaluate_and_calibrate",
    )
    settings = settings_with(
        CalibrateSettings,
        settings,
        {**unknown, **{name: value for name, value in options.items() if name in calibrate_names}},
        what="evaluate_and_calibrate",
    )
    inputs = load_inputs(
        [(synthetic, "synthetic"), (real, "real")], corpus=corpus, run=run, settings=evaluation
    )
    if inputs.corpus is not None:
        refuse_uncarried(inputs.gold_sets[1], inputs.corpus)
    return calibrate([inputs.evaluate()], corpus=inputs.corpus, settings=settings)

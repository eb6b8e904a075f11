"""``--synthetic G1 --real G2``: evaluate both gold sets with one retriever, then calibrate, in one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from realrecall.calibrate.calibration import CalibrationReport, calibrate
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
    **options: Any,
) -> CalibrationReport:
    """Score the retriever ``evaluation`` names (or ``run``) on both gold sets, then :func:`calibrate`
    the result. ``options``: fields of ``EvaluateSettings`` (over ``evaluation``) and calibrate's
    keyword options; ``by`` slices both (calibrate's default: every field present)."""
    # Imported here: the evaluate stage (and its scoring kernel) is only needed in this mode.
    from realrecall.evaluate.from_files import load_inputs

    evaluate_names = {item.name for item in setting_fields(EvaluateSettings)}
    given = {name: value for name, value in options.items() if name in evaluate_names}
    evaluation = settings_with(EvaluateSettings, evaluation, given, what="evaluate_and_calibrate")
    calibrate_options = {name: value for name, value in options.items() if name not in given or name == "by"}
    calibrate_options.setdefault("by", evaluation.by or None)
    inputs = load_inputs(
        [(synthetic, "synthetic"), (real, "real")], corpus=corpus, run=run, settings=evaluation
    )
    return calibrate([inputs.evaluate()], corpus=inputs.corpus, **calibrate_options)

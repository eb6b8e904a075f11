"""The calibrate stage's defaults, in one place: the CLI, the pipeline config and the library import them.

Kept free of heavy imports (the package's ``__init__`` is lazy), so the CLI can show them in ``--help``
without loading numpy or scipy.
"""

from __future__ import annotations

from realrecall.evaluate.settings import HEADLINE_METRIC, headline_metric

__all__ = [
    "BOOTSTRAP",
    "CALIBRATE_BY",
    "CONFIDENCE",
    "MAX_AGE_DAYS",
    "MAX_WIDTH",
    "METRIC",
    "MIN_QUERIES",
    "N_RESAMPLES",
    "SEED",
    "headline_metric",
]

# Defined beside evaluate's settings: gold review (curate) lists the misses at its cut-off too.
METRIC = HEADLINE_METRIC
"""The headline metric when none is named (and the results hold it)."""


CONFIDENCE = 0.95
"""Confidence level of every interval."""

CALIBRATE_BY = "type"
"""The stratum field of the calibrated estimate."""

MAX_AGE_DAYS = 90.0
"""A calibration whose real set is older than this many days is flagged stale, in calibrate and run."""

N_RESAMPLES = 2000
"""Bootstrap resamples."""

SEED = 0
"""Seed of every resampling, so a report is reproducible."""

BOOTSTRAP = "percentile"
"""Bootstrap interval method for non-proportions: ``percentile`` or ``bca``."""

MIN_QUERIES = 30
"""Slices with fewer queries are marked as too small to read."""

MAX_WIDTH = 0.2
"""Slices whose interval is wider than this are marked as too uncertain to read."""

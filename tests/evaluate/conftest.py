"""Fixtures of the evaluate tests: where the trec_eval parity files live and how to read their output."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="session")
def trec_eval_data(reference_data: Path) -> Path:
    """The trec_eval parity data (upstream inputs, derived and edge-case outputs)."""
    folder = reference_data / "trec_eval"
    if not folder.is_dir():
        pytest.skip(f"trec_eval parity data not found at {folder}")
    return folder


@pytest.fixture(scope="session")
def read_trec_eval_output() -> Callable[[Path], dict[tuple[str, str], str]]:
    """A reader of ``trec_eval -q`` output: ``{(measure, query_id or "all"): printed value}``."""
    return _read_trec_eval_output


def _read_trec_eval_output(path: Path) -> dict[tuple[str, str], str]:
    values: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            measure, query_id, value = line.split()
            values[(measure, query_id)] = value
    return values


@pytest.fixture
def random_case() -> Callable[[int], tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]]:
    """Random graded qrels and a scored run whose scores are distinct even as float32.

    pytrec_eval (trec_eval 9) sorts on float32 scores, trec_eval 10 on float64: with no two scores
    within float32 precision of each other the two orders agree, so pytrec_eval is a fair oracle.
    """

    def make(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
        rng = np.random.default_rng(seed)
        qrels: dict[str, dict[str, int]] = {}
        run: dict[str, dict[str, float]] = {}
        for q in range(int(rng.integers(5, 40))):
            docs = [f"d{i}" for i in rng.choice(200, size=60, replace=False).tolist()]
            depth = int(rng.integers(1, 50))
            # Distinct multiples of 1/8 in [-50, 50): exact in float32 and float64 alike.
            scores = (rng.choice(800, size=depth, replace=False) - 400) / 8
            if rng.random() < 0.9:
                run[f"q{q}"] = dict(zip(docs[:depth], scores.tolist(), strict=True))
            n_judged = int(rng.integers(1, 12))
            judged = rng.choice(len(docs), size=n_judged, replace=False).tolist()
            grades = rng.integers(-1, 4, size=n_judged).tolist()
            qrels[f"q{q}"] = {docs[i]: g for i, g in zip(judged, grades, strict=True)}
        run["not-in-gold"] = {"d1": 1.0}
        return qrels, run

    return make


@pytest.fixture
def registry_names() -> list[str]:
    """Every metric name of the registry (``METRICS``) at several cut-offs, and without one where it may
    go: the oracle tests compare them all, so a metric added to the registry is checked with no edit."""
    from realrecall.evaluate.metrics import METRICS

    names = []
    for name, kind in METRICS.items():
        names += [f"{name}@{k}" for k in (1, 2, 3, 5, 10, 20)]
        names += [name] if kind.cutoff == "optional" else []
    return names

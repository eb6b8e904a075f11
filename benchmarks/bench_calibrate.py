"""Calibrate speed: one shared resampling per slice against one resampling per metric, and scipy.

    .venv/bin/python benchmarks/bench_calibrate.py                  # 5,000 real + 5,000 synthetic
    .venv/bin/python benchmarks/bench_calibrate.py --queries 20000

The results hold evaluate's default metrics for k = 1, 5, 10, 50 (13 metrics, 9 of them graded) and
two slice fields (8 types, 3 languages). "per metric" times the gap intervals computed one metric at a
time (``gap_interval``), "scipy" the same with ``scipy.stats.bootstrap``, both on the all-queries slice
only, so the calibrate column does strictly more work.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from realrecall.calibrate import calibrate
from realrecall.calibrate.statistics import gap_interval

KS = (1, 5, 10, 50)
METRICS = (
    [f"recall@{k}" for k in KS] + ["mrr@50"] + [f"ndcg@{k}" for k in KS] + [f"passage_recall@{k}" for k in KS]
)


def document(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    sets = []
    for origin in ("synthetic", "real"):
        ranks = rng.choice([1, 2, 3, 5, 8, 20, 0], size=n)
        records = []
        for i, rank in enumerate(ranks):
            values = {f"recall@{k}": float(0 < rank <= k) for k in KS}
            values["mrr@50"] = 1.0 / rank if rank else 0.0
            values |= {f"ndcg@{k}": float(rng.random()) for k in KS}
            values |= {f"passage_recall@{k}": float(rng.choice([0.0, 0.5, 1.0])) for k in KS}
            records.append(
                {"query_id": f"{origin}{i}", "query": "q", "gold": ["p"], "origin": origin,
                 "type": f"t{i % 8}", "language": ("en", "de", "fr")[i % 3],
                 "first_relevant_rank": int(rank) or None, "metrics": values}
            )  # fmt: skip
        sets.append({"name": origin, "origins": {origin: n}, "per_query": records})
    return {"retriever": {"name": "bench"}, "metrics": METRICS, "gold_sets": sets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000, help="queries in each set")
    args = parser.parse_args()
    data = document(args.queries, 0)
    start = time.perf_counter()
    calibrate(data)
    shared = time.perf_counter() - start

    columns = {
        origin: np.array([[q["metrics"][m] for m in METRICS] for q in gold["per_query"]])
        for origin, gold in zip(("synthetic", "real"), data["gold_sets"], strict=True)
    }
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for j in range(len(METRICS)):
        gap_interval(columns["synthetic"][:, j], columns["real"][:, j], rng=rng)
    per_metric = time.perf_counter() - start

    start = time.perf_counter()
    for j in range(len(METRICS)):
        stats.bootstrap(
            (columns["synthetic"][:, j], columns["real"][:, j]),
            lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis),
            method="percentile", n_resamples=2000, batch=200, rng=rng,
        )  # fmt: skip
    scipy_time = time.perf_counter() - start

    print(f"{args.queries} real + {args.queries} synthetic queries, {len(METRICS)} metrics, 2000 resamples")
    print(f"{'calibrate (all metrics, 12 slices, shared draws)':<52} {shared:8.2f} s")
    print(f"{'gap_interval per metric (all-queries slice only)':<52} {per_metric:8.2f} s")
    print(f"{'scipy.stats.bootstrap per metric (all-queries only)':<52} {scipy_time:8.2f} s")


if __name__ == "__main__":
    main()

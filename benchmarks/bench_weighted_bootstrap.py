"""Peak memory of the weighted bootstrap (a synthetic set generated from a sample of chunks, each
question weighted by 1/p): resampled in batches against all resamples held at once, side by side.

    .venv/bin/python benchmarks/bench_weighted_bootstrap.py                        # 100,000 x 2,000
    .venv/bin/python benchmarks/bench_weighted_bootstrap.py --queries 20000 --skip-whole

Each way runs in its own process (``ru_maxrss`` of the child: its peak resident memory), on one metric
column of ``--queries`` weighted questions and ``--resamples`` resamples. "batched" is
``statistics.bootstrap_weighted_mean_matrix``, which calibrate uses; "whole" is the expression it
replaced (every resample's indices, weights and values as ``resamples x queries`` arrays at once).
The target (issue 30): under 0.5 GB at 100,000 questions x 2,000 resamples.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))


def data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    values = rng.random((n, 1))
    weights = 1.0 / rng.choice([0.01, 0.05, 0.2, 1.0], size=n)
    return values, weights


def run_batched(n: int, resamples: int) -> float:
    from realrecall.calibrate.statistics import bootstrap_weighted_mean_matrix

    values, weights = data(n)
    draws = bootstrap_weighted_mean_matrix(values, weights, resamples, np.random.default_rng(1))
    return float(draws.mean())


def run_whole(n: int, resamples: int) -> float:
    values, weights = data(n)
    index = np.random.default_rng(1).integers(0, n, (resamples, n))
    w = weights[index]
    draws = np.sum(w * values[index, 0], axis=1) / w.sum(axis=1)
    return float(draws.mean())


def measure(way: str, n: int, resamples: int) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one way, in a child process."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", way, "--queries", str(n),
                              "--resamples", str(resamples)])  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{way} failed (exit {os.waitstatus_to_exitcode(status)})")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--skip-whole", action="store_true", help="leave out the all-at-once way")
    parser.add_argument("--child", choices=("batched", "whole", "baseline"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child == "batched":
            run_batched(args.queries, args.resamples)
        elif args.child == "whole":
            run_whole(args.queries, args.resamples)
        else:  # the interpreter, numpy and the data: what either way costs before resampling
            data(args.queries)
            import realrecall.calibrate.statistics  # noqa: F401
        return
    print(f"weighted bootstrap: {args.queries:,} questions x {args.resamples:,} resamples, one metric")
    ways = ["baseline", "batched", *([] if args.skip_whole else ["whole"])]
    peaks = {}
    for way in ways:
        wall, cpu, peak = measure(way, args.queries, args.resamples)
        peaks[way] = peak
        print(f"{way:<9} peak RSS {peak:8.0f} MB   wall {wall:6.1f} s   cpu {cpu:6.1f} s", flush=True)
    if "whole" in peaks:
        print(f"batched / whole peak RSS: {peaks['batched'] / peaks['whole']:.3f}")


if __name__ == "__main__":
    main()

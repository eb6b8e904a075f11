"""Scoring speed, side by side with ranx, pytrec_eval and (when installed) the trec_eval binary.

    /work/venv/bin/python benchmarks/bench_scoring.py            # 100,000 queries x 100 ids
    /work/venv/bin/python benchmarks/bench_scoring.py --queries 10000

Every contender starts from the same in-memory Python dicts (qrels ``{qid: {pid: grade}}`` and run
``{qid: {pid: score}}``), so conversion into each library's own structures is part of its time.
Metrics: recall@10, recall@100 (trec_eval success_10/100, ranx hit_rate@10/100), mrr@10 and
ndcg@10. pytrec_eval has no per-measure depth, so it computes recip_rank over the full run (the same
work or more). ranx's numba functions are compiled on a small warm-up run first, so its time excludes
JIT compilation. The second table starts from a TREC run file on disk.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

METRICS = ["recall@10", "recall@100", "mrr@10", "ndcg@10"]
RANX_METRICS = ["hit_rate@10", "hit_rate@100", "mrr@10", "ndcg@10"]
PYTREC_MEASURES = {"success.10,100", "recip_rank", "ndcg_cut.10"}


def make_data(
    n_queries: int, depth: int, seed: int
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels (1-5 gold passages, grades 1-3) and a run of ``depth`` distinct scored ids per query."""
    rng = np.random.default_rng(seed)
    corpus = 1_000_000
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        ids = rng.choice(corpus, size=depth + 5, replace=False)
        scores = rng.random(depth)
        run[qid] = {f"d{i}": float(s) for i, s in zip(ids[:depth].tolist(), scores.tolist(), strict=True)}
        n_gold = int(rng.integers(1, 6))
        # About half the gold passages are retrieved, the rest come from outside the run.
        pool = np.where(
            rng.random(n_gold) < 0.5, ids[rng.integers(0, depth, n_gold)], ids[depth : depth + n_gold]
        )
        qrels[qid] = {
            f"d{i}": int(g) for i, g in zip(pool.tolist(), rng.integers(1, 4, n_gold).tolist(), strict=True)
        }
    return qrels, run


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def ours_from_dicts(qrels: dict, run: dict) -> dict[str, float]:
    from realrecall import score

    return score(qrels, run, METRICS)


def ours_via_run(qrels: dict, run: dict) -> dict[str, float]:
    from realrecall import Run, score

    # Run.from_scores copies every entry (a Run outlives the call); score(dict) reads them in place.
    return score(qrels, Run.from_scores(run), METRICS)


def ranx_from_dicts(qrels: dict, run: dict) -> dict[str, float]:
    import ranx

    return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX_METRICS, make_comparable=True)


def pytrec_from_dicts(qrels: dict, run: dict) -> dict[str, float]:
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    names = ["success_10", "success_100", "recip_rank", "ndcg_cut_10"]
    return {name: sum(v[name] for v in per_query.values()) / len(qrels) for name in names}


def ours_from_file(qrels: dict, run_path: Path) -> dict[str, float]:
    from realrecall import load_run, score

    return score(qrels, load_run(run_path), METRICS)


def pytrec_from_file(qrels: dict, run_path: Path) -> dict[str, float]:
    import pytrec_eval

    with run_path.open() as handle:
        run = pytrec_eval.parse_run(handle)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    return {"recip_rank": sum(v["recip_rank"] for v in per_query.values()) / len(qrels)}


def trec_eval_binary(binary: str, qrels_path: Path, run_path: Path) -> str:
    args = [
        binary,
        "-c",
        "-m",
        "success.10,100",
        "-m",
        "recip_rank",
        "-m",
        "ndcg_cut.10",
        str(qrels_path),
        str(run_path),
    ]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def write_trec(qrels: dict, run: dict, folder: Path) -> tuple[Path, Path]:
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    with qrels_path.open("w") as handle:
        for qid, judged in qrels.items():
            handle.writelines(f"{qid} 0 {pid} {grade}\n" for pid, grade in judged.items())
    with run_path.open("w") as handle:
        for qid, scored in run.items():
            ranked = sorted(scored.items(), key=lambda item: -item[1])
            handle.writelines(
                f"{qid} Q0 {pid} {rank} {score!r} bench\n"
                for rank, (pid, score) in enumerate(ranked, start=1)
            )
    return qrels_path, run_path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=100_000, help="number of queries (default 100,000)")
    parser.add_argument("--depth", type=int, default=100, help="retrieved ids per query (default 100)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs per contender")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-ranx", action="store_true", help="leave ranx out (its conversion is slow)")
    args = parser.parse_args()

    print(
        f"data: {args.queries:,} queries x {args.depth} retrieved ids, 1-5 gold passages; metrics {METRICS}"
    )
    qrels, run = make_data(args.queries, args.depth, args.seed)
    import pytrec_eval  # noqa: F401  (every contender's import is paid before timing)
    import ranx  # noqa: F401

    import realrecall.evaluate.scoring  # noqa: F401

    rows: list[tuple[str, float]] = []
    ours_time, ours = timed(lambda: ours_from_dicts(qrels, run), args.repeat)
    rows.append(("realrecall  score(qrels, run)", ours_time))
    via_run_time, _ = timed(lambda: ours_via_run(qrels, run), args.repeat)
    rows.append(("realrecall  score(qrels, Run.from_scores(run))", via_run_time))
    if not args.skip_ranx:
        small_q, small_r = make_data(50, 20, 1)
        ranx_from_dicts(small_q, small_r)  # compile the numba functions before timing
        ranx_time, ranx_result = timed(lambda: ranx_from_dicts(qrels, run), args.repeat)
        rows.append(("ranx        evaluate(Qrels(dict), Run(dict))", ranx_time))
    pytrec_time, pytrec_result = timed(lambda: pytrec_from_dicts(qrels, run), args.repeat)
    rows.append(("pytrec_eval RelevanceEvaluator(...).evaluate(run)", pytrec_time))

    print("\nfrom in-memory dicts (conversion included)")
    _table(rows, ours_time)
    print(f"  ours:        {_fmt(ours)}")
    if not args.skip_ranx:
        print(f"  ranx:        {_fmt(ranx_result)}")
    print(f"  pytrec_eval: {_fmt(pytrec_result)}")
    if not args.skip_ranx:
        print(f"  target ours/ranx <= 0.25: {ours_time / ranx_time:.3f}")
    print(f"  target ours/pytrec_eval <= 0.8: {ours_time / pytrec_time:.3f}")
    print(f"  via Run.from_scores: ours/pytrec_eval {via_run_time / pytrec_time:.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_trec(qrels, run, Path(tmp))
        size = run_path.stat().st_size / 1e6
        file_rows: list[tuple[str, float]] = []
        ours_file_time, _ = timed(lambda: ours_from_file(qrels, run_path), args.repeat)
        file_rows.append(("realrecall  load_run + score", ours_file_time))
        pytrec_file_time, _ = timed(lambda: pytrec_from_file(qrels, run_path), args.repeat)
        file_rows.append(("pytrec_eval parse_run + evaluate", pytrec_file_time))
        binary = shutil.which("trec_eval")
        if binary:
            binary_time, _ = timed(lambda: trec_eval_binary(binary, qrels_path, run_path), args.repeat)
            file_rows.append(("trec_eval binary (-c)", binary_time))
        print(
            f"\nfrom a TREC run file on disk ({size:.0f} MB; qrels already in memory, except for the binary)"
        )
        _table(file_rows, ours_file_time)
        if not binary:
            print("  (no trec_eval binary on PATH)")


def _table(rows: list[tuple[str, float]], ours_time: float) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"  {'contender'.ljust(width)}  {'seconds':>9}  {'ours / it':>9}")
    for name, seconds in rows:
        print(f"  {name.ljust(width)}  {seconds:9.3f}  {ours_time / seconds:9.3f}")


def _fmt(result: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.6f}" for k, v in result.items())


if __name__ == "__main__":
    main()

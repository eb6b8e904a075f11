"""Scoring speed, side by side with ranx, pytrec_eval and (when installed) the trec_eval binary.

    .venv/bin/python benchmarks/bench_scoring.py            # 100,000 queries x 100 ids
    .venv/bin/python benchmarks/bench_scoring.py --queries 10000

Every contender starts from the same in-memory Python dicts (qrels ``{qid: {pid: grade}}`` and run
``{qid: {pid: score}}``), so conversion into each library's own structures is part of its time.
Metrics: recall@10, recall@100 (trec_eval success_10/100, ranx hit_rate@10/100), mrr@10 and
ndcg@10. pytrec_eval has no per-measure depth, so it computes recip_rank over the full run (the same
work or more). ranx's numba functions are compiled on a small warm-up run first, so its time excludes
JIT compilation. The second table starts from a TREC run file on disk; the third (``--part read``)
times reading that file alone against its floor, pandas' C parser with its own default types.
``--part kernel`` times scoring from dicts against a plain numpy kernel computing the same four metrics
on arrays built beforehand (ranked ids and gold ids as int matrices), with and without ranking each
query by score first, and against reading the dicts once (every score into one array, every judged
passage looked up): what any scorer starting from dicts pays before computing a metric.
``--part shapes`` times that read on runs of other shapes (tab-separated, integer ids and scores,
scores in exponent notation, a field after the tag, ids holding ``#`` with a comment line per query;
``--queries`` queries x ``--depth`` ids each).
``--part qrels`` times reading the qrels of ``--queries`` queries (1-5 judgments each) from a TREC file:
realrecall's reader alone and ``load_gold`` (reader and gold queries), against pytrec_eval's
``parse_qrel`` and pandas' C parser (the floor).
``--part memory`` writes a JSON Lines gold set of ``--memory-queries`` queries (default 1,000,000) and a
TREC run ``--memory-depth`` deep (default 10, so that the gold set, not the run, is the point) and
measures the peak RSS of ``realrecall evaluate --gold GOLD --run RUN -o results.json`` (os.wait4);
``--memory-fields`` gives each record five more fields (type, language, form, source, a ticket id).
``--part labels`` evaluates that gold set (no type or form of its own) in fresh processes taking turns,
without ``--by`` and with ``--by type,form``, and measures the CPU each spends labelling (the rules'
``Labeller`` columns, timed inside the process) beside its whole CPU: what labelling costs a run that
slices by neither, and one that slices by both.
``--part cli`` states its target by size: 0.8 up to a million results (100,000 x 10), where the
fixed start-up cost (Python, numpy, typer) weighs, else 0.6.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
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


def round_robin(contenders: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, Any]]:
    """Best time and result of each contender, running them in turn ``repeat`` times.

    Taking turns spreads any load from other processes over every contender alike.
    """
    best: dict[str, tuple[float, Any]] = {}
    for _ in range(repeat):
        for name, fn in contenders.items():
            gc.collect()
            start = time.perf_counter()
            result = fn()
            seconds = time.perf_counter() - start
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, result)
    return best


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


def ours_read(run_path: Path) -> int:
    from realrecall import load_run

    return len(load_run(run_path))


def pandas_read(run_path: Path, *, six_fields: bool = False) -> int:
    import pandas as pd

    # The floor: the C parser with pandas' default types (Arrow strings), nothing checked.
    # ``six_fields``: read every line as six columns, so that a shorter (comment) line reads at all.
    names = range(6) if six_fields else None
    return len(pd.read_csv(run_path, sep=r"\s+", header=None, names=names))


def pyarrow_read(run_path: Path) -> int:
    import pyarrow.csv as pa_csv

    options = pa_csv.ParseOptions(delimiter=" ")
    names = pa_csv.ReadOptions(column_names=["query", "q0", "passage", "rank", "score", "tag"])
    return len(pa_csv.read_csv(run_path, read_options=names, parse_options=options))


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
    parser.add_argument("--repeat", type=int, default=1, help="best of this many turns per contender")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--part",
        choices=["all", "dicts", "kernel", "file", "read", "shapes", "qrels", "cli", "memory", "labels"],
        default="all",
        help="which table to time (memory, labels, shapes and qrels are left out of all)",
    )
    parser.add_argument("--memory-queries", type=int, default=1_000_000, help="gold queries of --part memory")
    parser.add_argument("--memory-depth", type=int, default=10, help="run depth of --part memory")
    parser.add_argument(
        "--memory-fields", action="store_true", help="--part memory: records give five more fields each"
    )
    parser.add_argument("--skip-ranx", action="store_true", help="leave ranx out (its conversion is slow)")
    args = parser.parse_args()

    if args.part == "memory":
        _time_memory(args)
        return
    if args.part == "labels":
        _time_labels(args)
        return
    if args.part == "shapes":
        _time_shapes(args)
        return
    if args.part == "qrels":
        # The judgments alone (a run 1 deep, dropped): a big run's dicts held by this process would
        # make every contender's garbage collections walk them.
        _time_qrels(make_data(args.queries, 1, args.seed)[0], args)
        return
    print(f"data: {args.queries:,} queries x {args.depth} retrieved ids, 1-5 gold passages")
    print(f"metrics: {', '.join(METRICS)}")
    qrels, run = make_data(args.queries, args.depth, args.seed)
    import pytrec_eval  # noqa: F401  (every contender's import is paid before timing)

    import realrecall.evaluate.scoring  # noqa: F401

    if args.part in ("all", "dicts"):
        _time_dicts(qrels, run, args)
    if args.part in ("all", "kernel"):
        _time_kernel(qrels, run, args)
    if args.part in ("all", "file"):
        _time_file(qrels, run, args)
    if args.part in ("all", "read"):
        _time_read(qrels, run, args)
    if args.part in ("all", "cli"):
        _time_cli(qrels, run, args)


def _time_dicts(qrels: dict, run: dict, args: argparse.Namespace) -> None:
    contenders: dict[str, Callable[[], Any]] = {
        "realrecall  score(qrels, run)": lambda: ours_from_dicts(qrels, run),
        "realrecall  score(qrels, Run.from_scores(run))": lambda: ours_via_run(qrels, run),
        "pytrec_eval RelevanceEvaluator(...).evaluate(run)": lambda: pytrec_from_dicts(qrels, run),
    }
    if not args.skip_ranx:
        small_q, small_r = make_data(50, 20, 1)
        ranx_from_dicts(small_q, small_r)  # compile the numba functions before timing
        contenders["ranx        evaluate(Qrels(dict), Run(dict))"] = lambda: ranx_from_dicts(qrels, run)
    timings = round_robin(contenders, args.repeat)
    ours_time = timings["realrecall  score(qrels, run)"][0]
    print("\nfrom in-memory dicts (conversion included)")
    _table({name: seconds for name, (seconds, _) in timings.items()}, ours_time)
    for name, (_, result) in timings.items():
        print(f"  {name.split()[0]:<12} {_fmt(result)}")
    pytrec_time = timings["pytrec_eval RelevanceEvaluator(...).evaluate(run)"][0]
    if not args.skip_ranx:
        ranx_time = timings["ranx        evaluate(Qrels(dict), Run(dict))"][0]
        print(f"  ours / ranx        = {ours_time / ranx_time:.3f}  (target <= 0.25)")
    print(f"  ours / pytrec_eval = {ours_time / pytrec_time:.3f}  (target <= 0.8)")
    via_run = timings["realrecall  score(qrels, Run.from_scores(run))"][0]
    print(f"  with Run.from_scores: ours / pytrec_eval = {via_run / pytrec_time:.3f}")


def kernel_arrays(qrels: dict, run: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays the plain numpy kernel starts from (built before timing): per query, the retrieved ids
    in rank order (score descending; ids as ints), and the gold ids with their grades (padded with -1
    and 0). The benchmark's scores have no ties, so the ranking is trec_eval's."""
    n, depth, width = len(run), max(map(len, run.values())), max(map(len, qrels.values()))
    ranked = np.full((n, depth), -1, dtype=np.int64)
    gold = np.full((n, width), -2, dtype=np.int64)
    grades = np.zeros((n, width), dtype=np.int64)
    for i, qid in enumerate(sorted(qrels)):
        order = sorted(run[qid].items(), key=lambda item: -item[1])
        ranked[i, : len(order)] = [int(pid[1:]) for pid, _ in order]
        judged = qrels[qid]
        gold[i, : len(judged)] = [int(pid[1:]) for pid in judged]
        grades[i, : len(judged)] = list(judged.values())
    return ranked, gold, grades


def kernel_score_arrays(qrels: dict, run: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """As ``kernel_arrays``, but the run as it is given: ids and scores in the run's own order, unranked."""
    n, depth = len(run), max(map(len, run.values()))
    ids = np.full((n, depth), -1, dtype=np.int64)
    scores = np.full((n, depth), -np.inf)
    _, gold, grades = kernel_arrays(qrels, run)
    for i, qid in enumerate(sorted(qrels)):
        ids[i, : len(run[qid])] = [int(pid[1:]) for pid in run[qid]]
        scores[i, : len(run[qid])] = list(run[qid].values())
    return ids, scores, gold, grades


def numpy_ranking_kernel(
    ids: np.ndarray, scores: np.ndarray, gold: np.ndarray, grades: np.ndarray
) -> dict[str, float]:
    """``numpy_kernel`` after ranking each query's ids by score, as scoring a run must (trec_eval ranks
    by score; the benchmark's scores have no ties)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    return numpy_kernel(np.take_along_axis(ids, order, axis=1), gold, grades)


def numpy_kernel(ranked: np.ndarray, gold: np.ndarray, grades: np.ndarray) -> dict[str, float]:
    """recall@10, recall@100, mrr@10 and ndcg@10 with numpy on the arrays, nothing converted."""
    match = ranked[:, :, None] == gold[:, None, :]  # (query, rank, gold slot)
    gain = (match * grades[:, None, :]).sum(axis=2)  # the grade of the passage at each rank
    relevant = gain > 0
    ranks = np.arange(1, ranked.shape[1] + 1)
    first = np.where(relevant.any(axis=1), ranks[relevant.argmax(axis=1)], 0)
    found = first > 0
    discount = np.log2(ranks[:10] + 1.0)
    dcg = (gain[:, :10] / discount).sum(axis=1)
    ideal = (-np.sort(-grades, axis=1))[:, :10]
    idcg = (ideal / discount[: ideal.shape[1]]).sum(axis=1)
    return {
        "recall@10": float((found & (first <= 10)).mean()),
        "recall@100": float((found & (first <= 100)).mean()),
        "mrr@10": float(np.where(found & (first <= 10), 1.0 / np.maximum(first, 1), 0.0).mean()),
        "ndcg@10": float(np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0).mean()),
    }


def read_dicts_once(qrels: dict, run: dict) -> int:
    """What any scorer starting from the dicts pays before computing anything: every score read into
    one float64 array and every judged passage looked up in its query's run (C-level passes)."""
    from itertools import chain, repeat

    total = sum(map(len, run.values()))
    scores = np.fromiter(chain.from_iterable(map(dict.values, run.values())), dtype=np.float64, count=total)
    judged = list(qrels.values())
    runs = chain.from_iterable(map(repeat, map(run.get, qrels), map(len, judged)))
    found = np.fromiter(
        map(dict.get, runs, chain.from_iterable(judged), repeat(np.nan)),
        dtype=np.float64,
        count=sum(map(len, judged)),
    )
    return len(scores) + len(found)


def _time_kernel(qrels: dict, run: dict, args: argparse.Namespace) -> None:
    arrays = kernel_arrays(qrels, run)
    unranked = kernel_score_arrays(qrels, run)
    ranking = "numpy       kernel ranking by score"
    ranked = "numpy       kernel on pre-ranked arrays"
    floor = "python      reading the dicts once (no metric)"
    contenders: dict[str, Callable[[], Any]] = {
        "realrecall  score(qrels, run) from dicts": lambda: ours_from_dicts(qrels, run),
        ranking: lambda: numpy_ranking_kernel(*unranked),
        ranked: lambda: numpy_kernel(*arrays),
        floor: lambda: read_dicts_once(qrels, run),
    }
    timings = round_robin(contenders, args.repeat)
    print("\nfrom dicts against a plain numpy kernel on arrays built beforehand (ids as ints)")
    ours_time = timings["realrecall  score(qrels, run) from dicts"][0]
    _table({name: seconds for name, (seconds, _) in timings.items()}, ours_time)
    for name, (_, result) in timings.items():
        if isinstance(result, dict):
            print(f"  {name.split()[0]:<12} {_fmt(result)}")
    print(
        f"  ours / numpy kernel ranking by score = {ours_time / timings[ranking][0]:.2f}  (target <= 2); "
        f"ours / kernel on pre-ranked arrays = {ours_time / timings[ranked][0]:.2f}; "
        f"reading the dicts once / kernel on pre-ranked arrays = {timings[floor][0] / timings[ranked][0]:.2f}"
    )


def _time_file(qrels: dict, run: dict, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_trec(qrels, run, Path(tmp))
        size = run_path.stat().st_size / 1e6
        contenders: dict[str, Callable[[], Any]] = {
            "realrecall  load_run + score": lambda: ours_from_file(qrels, run_path),
            "pytrec_eval parse_run + evaluate": lambda: pytrec_from_file(qrels, run_path),
        }
        binary = shutil.which("trec_eval")
        if binary:
            contenders["trec_eval binary (-c)"] = lambda: trec_eval_binary(binary, qrels_path, run_path)
        timings = round_robin(contenders, args.repeat)
        print(f"\nfrom a TREC run file on disk ({size:.0f} MB; qrels in memory, except for the binary)")
        ours_time = timings["realrecall  load_run + score"][0]
        _table({name: seconds for name, (seconds, _) in timings.items()}, ours_time)
        if not binary:
            print("  (no trec_eval binary on PATH)")


def _time_read(qrels: dict, run: dict, args: argparse.Namespace) -> None:
    import pandas  # noqa: F401  (imports paid before timing, as for every contender)
    import pyarrow.csv  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        _, run_path = write_trec(qrels, run, Path(tmp))
        size = run_path.stat().st_size / 1e6
        contenders: dict[str, Callable[[], Any]] = {
            "realrecall  load_run (C parser, checked)": lambda: ours_read(run_path),
            "pandas      read_csv (C parser, floor)": lambda: pandas_read(run_path),
            "pyarrow     csv.read_csv (threads)": lambda: pyarrow_read(run_path),
        }
        timings = round_robin(contenders, args.repeat)
        print(f"\nreading a TREC run file ({size:.0f} MB)")
        ours_time = timings["realrecall  load_run (C parser, checked)"][0]
        _table({name: seconds for name, (seconds, _) in timings.items()}, ours_time)
        floor = timings["pandas      read_csv (C parser, floor)"][0]
        print(f"  ours / pandas = {ours_time / floor:.2f}  (target <= 2)")


def _time_qrels(qrels: dict, args: argparse.Namespace) -> None:
    """Reading a TREC qrels file: realrecall's reader and load_gold against pytrec_eval and pandas."""
    import pandas as pd
    import pytrec_eval

    from realrecall.formats.trec_qrels import read_judgments
    from realrecall.gold import load_gold

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qrels.txt"
        with path.open("w") as handle:
            for qid, judged in qrels.items():
                handle.writelines(f"{qid} 0 {pid} {grade}\n" for pid, grade in judged.items())

        def pytrec() -> int:
            with path.open() as handle:
                return len(pytrec_eval.parse_qrel(handle))

        contenders: dict[str, Callable[[], Any]] = {
            "realrecall  read_judgments (checked)": lambda: len(read_judgments(path)),
            "realrecall  load_gold (and a GoldQuery each)": lambda: len(load_gold(path)),
            "pytrec_eval parse_qrel": pytrec,
            "pandas      read_csv (C parser, floor)": lambda: len(pd.read_csv(path, sep=r"\s+", header=None)),
        }
        timings = round_robin(contenders, args.repeat)
        lines, size = sum(map(len, qrels.values())), path.stat().st_size / 1e6
        print(f"\nreading TREC qrels: {len(qrels):,} queries, {lines:,} lines ({size:.0f} MB)")
        ours_time = timings["realrecall  read_judgments (checked)"][0]
        _table({name: seconds for name, (seconds, _) in timings.items()}, ours_time)
        floor = timings["pandas      read_csv (C parser, floor)"][0]
        # pandas keeps Arrow columns; the judgments are Python dicts ({qid: {pid: grade}}), as
        # pytrec_eval's are: that dict per query, not the split, is most of their time.
        pytrec_time = timings["pytrec_eval parse_qrel"][0]
        pandas_ratio, pytrec_ratio = ours_time / floor, ours_time / pytrec_time
        print(f"  read_judgments / pandas = {pandas_ratio:.2f}; / pytrec_eval = {pytrec_ratio:.2f}")


# Other shapes of TREC run line: (name, format of one line from query, rank, passage number, score).
RUN_SHAPES: dict[str, Callable[[int, int, int, float], str]] = {
    "tab-separated, fixed-point scores": lambda q, r, d, s: f"{q}\tQ0\tdoc{d}\t{r}\t{s:.4f}\tbm25\n",
    "integer ids and scores": lambda q, r, d, s: f"{q} 0 {d} {r} {int(s * 1000)} t\n",
    "scores in exponent notation": lambda q, r, d, s: f"q{q} Q0 d{d} {r - 1} {-s * 1e-3:e} t\n",
    # A field after the tag on every line (trec_eval ignores it).
    "a field after the tag on every line": lambda q, r, d, s: f"q{q} Q0 d{d} {r} {s:.6f} run extra\n",
    # Segment ids as TREC RAG 2024 writes them ("#" inside an id), a comment line before each query.
    "ids with '#', a comment per query": lambda q, r, d, s: (
        (f"# query {q}\n" if r == 1 else "")
        + f"{q} Q0 msmarco_v2.1_doc_{d % 60:02d}_{d}#{r}_{d * 7} {r} {s:.6f} rag\n"
    ),
}


def _time_shapes(args: argparse.Namespace) -> None:
    """Reading runs of other shapes than the default benchmark's, each against pandas' C parser."""
    import pandas  # noqa: F401  (imports paid before timing, as for every contender)

    rng = np.random.default_rng(args.seed)
    print(f"reading TREC runs of other shapes, {args.queries:,} queries x {args.depth} ids")
    with tempfile.TemporaryDirectory() as tmp:
        for shape, line in RUN_SHAPES.items():
            path = Path(tmp) / "run.txt"
            with path.open("w") as handle:
                for query in range(args.queries):
                    docs = rng.choice(1_000_000, args.depth, replace=False).tolist()
                    scores = np.sort(rng.random(args.depth))[::-1].tolist()
                    handle.writelines(
                        line(query, rank, doc, score)
                        for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), start=1)
                    )
            contenders: dict[str, Callable[[], Any]] = {
                "realrecall  load_run": lambda path=path: ours_read(path),
                "pandas      read_csv": lambda path=path, six="#" in shape: pandas_read(path, six_fields=six),
            }
            timings = round_robin(contenders, args.repeat)
            ours, floor = timings["realrecall  load_run"][0], timings["pandas      read_csv"][0]
            size = path.stat().st_size / 1e6
            seconds = f"ours {ours:6.3f} s  pandas {floor:6.3f} s"
            print(f"  {shape:<36} {size:5.0f} MB  {seconds}  ratio {ours / floor:.2f}  (target <= 2)")


PYTREC_CLI = """
import sys, pytrec_eval
with open(sys.argv[1]) as handle:
    qrels = pytrec_eval.parse_qrel(handle)
with open(sys.argv[2]) as handle:
    run = pytrec_eval.parse_run(handle)
measures = {"success.10,100", "recip_rank", "ndcg_cut.10"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
print(sum(v["recip_rank"] for v in per_query.values()) / len(qrels))
"""


def _child(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _compile_sources() -> None:
    """realrecall's bytecode written beforehand, as pytrec_eval's and numpy's is installed: with
    PYTHONDONTWRITEBYTECODE set (or a source newer than its bytecode) every fresh process of the
    command would compile the modules changed since, and count it."""
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parents[1] / "src", quiet=1)


def _time_cli(qrels: dict, run: dict, args: argparse.Namespace) -> None:
    """End to end from files, each a fresh process: ``realrecall evaluate`` against pytrec_eval."""
    _compile_sources()
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_trec(qrels, run, Path(tmp))
        contenders = {
            "realrecall evaluate --gold QRELS --run RUN -o results.json": [
                sys.executable, "-m", "realrecall", "evaluate", "--gold", str(qrels_path),
                "--run", str(run_path), "-o", str(Path(tmp) / "results.json"),
            ],
            "pytrec_eval parse_qrel + parse_run + evaluate": [
                sys.executable, "-c", PYTREC_CLI, str(qrels_path), str(run_path),
            ],
        }  # fmt: skip
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for name, argv in contenders.items():
                wall, cpu = _child(argv)
                if name not in best or cpu < best[name][1]:
                    best[name] = (wall, cpu)
        size = (Path(tmp) / "results.json").stat().st_size / 1e6
    print(f"\nCLI end to end from TREC files, fresh processes (best CPU of {args.repeat})")
    ours_wall, ours_cpu = best["realrecall evaluate --gold QRELS --run RUN -o results.json"]
    peer_wall, peer_cpu = best["pytrec_eval parse_qrel + parse_run + evaluate"]
    for name, (wall, cpu) in best.items():
        print(f"  {name:<60} {wall:8.2f} s wall {cpu:8.2f} s CPU")
    print(f"  results.json {size:.1f} MB")
    ratios = f"CPU {ours_cpu / peer_cpu:.2f}, wall {ours_wall / peer_wall:.2f}"
    target = 0.8 if args.queries * args.depth <= 1_000_000 else 0.6
    print(f"  ours / pytrec_eval: {ratios}  (target <= {target})")


def write_memory_data(
    n_queries: int, depth: int, folder: Path, seed: int = 0, *, fields: bool = False
) -> tuple[Path, Path]:
    """A JSON Lines gold set (query text, 1-5 gold ids, origin) and a TREC run ``depth`` deep.

    ``fields``: each record also gives its type, language, form, source and a ticket id (an exported
    ticket queue), as a team's real set may."""
    rng = np.random.default_rng(seed)
    words = ["what", "is", "the", "how", "does", "retrieval", "index", "chunk", "vector", "store"]
    gold_path, run_path = folder / "gold.jsonl", folder / "run.txt"
    block = 100_000
    with gold_path.open("w") as gold_file, run_path.open("w") as run_file:
        for begin in range(0, n_queries, block):
            size = min(block, n_queries - begin)
            # Distinct ids per query: a query's ids are consecutive from a random start.
            first = rng.integers(0, 1_000_000, size)
            ids = first[:, None] + np.arange(depth + 5)[None, :]
            scores = -np.sort(-rng.random((size, depth)), axis=1)
            n_gold = rng.integers(1, 6, size)
            text = rng.integers(0, len(words), (size, 8))
            gold_lines, run_lines = [], []
            for row in range(size):
                qid = f"q{begin + row}"
                picks = rng.integers(0, depth + 5, int(n_gold[row]))
                judged = {f"d{pid}": 1 for pid in ids[row, picks].tolist()}
                question = " ".join(words[w] for w in text[row].tolist()) + "?"
                record = {"query_id": qid, "query": question, "gold": judged, "origin": "real"}
                if fields:
                    record.update(
                        type=("conceptual", "lookup", "comparison")[row % 3], language="en",
                        form=("question", "keywords")[row % 2], source="tickets", ticket=f"T-{begin + row}",
                    )  # fmt: skip
                gold_lines.append(json.dumps(record) + "\n")
                run_lines.extend(
                    f"{qid} Q0 d{pid} {rank} {score!r} bench\n"
                    for rank, (pid, score) in enumerate(
                        zip(ids[row, :depth].tolist(), scores[row].tolist(), strict=True), start=1
                    )
                )
            gold_file.writelines(gold_lines)
            run_file.writelines(run_lines)
    return gold_path, run_path


def _peak_child(args: list[str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak RSS (MB) of one child process (os.wait4: this child's own)."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{args[2:4]} failed with exit code {process.returncode}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _time_memory(args: argparse.Namespace) -> None:
    n, depth = args.memory_queries, args.memory_depth
    shape = " (type, language, form, source, ticket id)" if args.memory_fields else ""
    print(f"memory: a JSON Lines gold set of {n:,} queries{shape}, a TREC run {depth} deep")
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, run_path = write_memory_data(n, depth, Path(tmp), fields=args.memory_fields)
        results = Path(tmp) / "results.json"
        argv = [sys.executable, "-m", "realrecall", "evaluate", "--gold", str(gold_path), "--run",
                str(run_path), "-o", str(results)]  # fmt: skip
        wall, cpu, peak = _peak_child(argv)
        sizes = [p.stat().st_size / 1e6 for p in (gold_path, run_path, results)]
    print(f"  gold.jsonl {sizes[0]:.0f} MB, run {sizes[1]:.0f} MB, results.json {sizes[2]:.0f} MB")
    print(
        f"  realrecall evaluate: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak:,.0f} MB"
        "  (target < 1,500 MB)"
    )


# Runs ``realrecall evaluate`` (argv after the code) as the command does, timing the Labeller's
# columns, every label the rules give a gold set's queries; prints "labelling CPU" on stderr at exit.
LABELLED_CLI = """
import atexit, sys, time
from realrecall.labels.labelling import Labeller
spent = [0.0]
real = Labeller._column
def timed(self, kind, texts, label):
    start = time.process_time()
    try:
        return real(self, kind, texts, label)
    finally:
        spent[0] += time.process_time() - start
Labeller._column = timed
atexit.register(lambda: print(f"labelling {spent[0]:.3f}", file=sys.stderr))
sys.argv = ["realrecall", *sys.argv[1:]]
from realrecall.cli import main
main()
"""


def _time_labels(args: argparse.Namespace) -> None:
    n, depth = args.memory_queries, args.memory_depth
    _compile_sources()
    print(
        f"labels: a JSON Lines gold set of {n:,} queries (no type or form of their own), a run {depth} deep"
    )
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, run_path = write_memory_data(n, depth, Path(tmp))
        base = ["evaluate", "--gold", str(gold_path), "--run", str(run_path), "-o", str(Path(tmp) / "r.json")]
        contenders = {"no --by": base, "--by type,form": [*base, "--by", "type,form"]}
        seen: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
        for _ in range(args.repeat):
            for name, argv in contenders.items():
                seen[name].append(_labelled_child([sys.executable, "-c", LABELLED_CLI, *argv]))
    print(f"  realrecall evaluate, fresh processes taking turns ({args.repeat} each; medians)")
    for name, runs in seen.items():
        cpu = float(np.median([total for total, _ in runs]))
        labelling = float(np.median([part for _, part in runs]))
        print(f"  {name:<16} {cpu:7.2f} s CPU, of which labelling {labelling:6.3f} s ({labelling / cpu:.1%})")


def _labelled_child(argv: list[str]) -> tuple[float, float]:
    """CPU seconds of one ``LABELLED_CLI`` child and the labelling seconds it reports."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = [row for row in done.stderr.splitlines() if row.startswith("labelling ")][-1]
    return cpu, float(line.split()[1])


def _table(rows: dict[str, float], ours_time: float) -> None:
    width = max(len(name) for name in rows)
    print(f"  {'contender'.ljust(width)}  {'seconds':>9}  {'ours / it':>9}")
    for name, seconds in rows.items():
        print(f"  {name.ljust(width)}  {seconds:9.3f}  {ours_time / seconds:9.3f}")


def _fmt(result: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.6f}" for k, v in result.items())


if __name__ == "__main__":
    main()

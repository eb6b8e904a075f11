"""The Ray engine beside the local engine: ``evaluate_files`` on SciFact with BM25, in one run.

    .venv/bin/python benchmarks/bench_engine.py [--rounds 3] [--cpus 2] [--queries 300]
        [--retriever bm25|local-dense] [--docs N]

Needs the extra (``pip install 'realrecall[ray]'``) and ``shared/reference-data/scifact``. Contenders
take turns, several rounds, medians of wall time:

- local: ``evaluate_files(scifact, corpus=..., k=(1, 10, 100))`` in this process;
- ray, cluster up: the same with ``engine="ray"`` on a cluster already started in this process
  (``ray.init(num_cpus=--cpus)``): the Ray Data job alone (actors started, BM25 built in each, the
  queries searched and scored, the results back);
- ray, cold (the first round only): the cluster's start and shutdown included, what one
  ``realrecall evaluate --engine ray`` pays.

``--queries N`` repeats SciFact's 300 queries (new ids, same texts and judgments) up to N, so the
share of the job spent on searching grows. ``--retriever local-dense`` embeds with the bundled MiniLM
(``realrecall[local]``), the embedding cache off, so every run loads the model and embeds the corpus
and the queries; ``--docs N`` cuts the corpus to the queries' judged chunks and the first others up to
N (MiniLM embeds 10 to 20 SciFact abstracts a second on 2 CPUs). Every round checks that the
per-query values are the local engine's (exactly). Wall time only: the work of the Ray engine is in
other processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from realrecall.evaluate import evaluate_files  # noqa: E402
from realrecall.gold import load_gold  # noqa: E402
from support.reference import find_reference_data  # noqa: E402


def gold_file(scifact: Path, queries: int, folder: Path) -> Path:
    """SciFact's queries as a JSON Lines gold set, repeated (new ids) up to ``queries``."""
    import json

    gold = list(load_gold(scifact))
    path = folder / "gold.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for index in range(queries):
            query = gold[index % len(gold)]
            record = {"query_id": f"{query.query_id}-{index}", "query": query.query, "gold": dict(query.gold)}
            out.write(json.dumps(record) + "\n")
    return path


def corpus_file(scifact: Path, docs: int, gold: Path, folder: Path) -> Path:
    """SciFact's corpus cut to the judged chunks of ``gold`` and the first others, ``docs`` in all."""
    import json

    judged = {doc for line in gold.open(encoding="utf-8") for doc in json.loads(line)["gold"]}
    room = max(0, docs - len(judged))
    kept = []
    for line in (scifact / "corpus.jsonl").read_text("utf-8").splitlines():
        if json.loads(line)["_id"] in judged:
            kept.append(line)
        elif room > 0:
            kept.append(line)
            room -= 1
    path = folder / "corpus.jsonl"
    path.write_text("".join(line + "\n" for line in kept), "utf-8")
    return path


def per_query(result: object) -> dict[tuple[str, str], dict[str, float]]:
    return {(q.gold_set, q.query_id): dict(q.metrics) for q in result.queries}  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--retriever", choices=("bm25", "local-dense"), default="bm25")
    parser.add_argument("--docs", type=int, default=None, help="cut the corpus to N chunks")
    args = parser.parse_args()
    reference = find_reference_data()
    if reference is None:
        raise SystemExit("shared/reference-data is not found: the benchmark reads SciFact from it")
    import ray

    scifact = reference / "scifact"
    with tempfile.TemporaryDirectory() as folder:
        gold = gold_file(scifact, args.queries, Path(folder))
        corpus = scifact / "corpus.jsonl"
        if args.docs is not None:
            corpus = corpus_file(scifact, args.docs, gold, Path(folder))
        options: dict[str, object] = {"corpus": corpus, "k": (1, 10, 100), "retriever": args.retriever}
        if args.retriever == "local-dense":
            options["use_cache"] = False  # every run embeds everything: no run reads another's vectors

        start = time.perf_counter()
        cold = evaluate_files([gold], **options, engine="ray", num_cpus=args.cpus)  # type: ignore[arg-type]
        cold_seconds = time.perf_counter() - start

        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        times: dict[str, list[float]] = {"local": [], "ray": []}
        try:
            for _ in range(args.rounds):
                start = time.perf_counter()
                local = evaluate_files([gold], **options)  # type: ignore[arg-type]
                times["local"].append(time.perf_counter() - start)
                start = time.perf_counter()
                on_ray = evaluate_files([gold], **options, engine="ray")  # type: ignore[arg-type]
                times["ray"].append(time.perf_counter() - start)
                if per_query(on_ray) != per_query(local) or per_query(cold) != per_query(local):
                    raise SystemExit("the Ray engine's per-query values differ from the local engine's")
        finally:
            ray.shutdown()
    load = os.getloadavg()[0]
    local_median, ray_median = statistics.median(times["local"]), statistics.median(times["ray"])
    docs = f", {args.docs} chunks" if args.docs is not None else ""
    print(
        f"SciFact {args.retriever}, {args.queries} queries{docs}, {args.cpus} CPUs, {args.rounds} rounds "
        f"(load {load:.1f})"
    )
    print("| engine | wall (median) | ratio to local |")
    print("|---|---:|---:|")
    print(f"| local | {local_median:.2f} s | 1.00 |")
    print(f"| ray, cluster up | {ray_median:.2f} s | {ray_median / local_median:.2f} |")
    print(
        f"| ray, cold (cluster start included) | {cold_seconds:.2f} s | {cold_seconds / local_median:.2f} |"
    )
    print("per-query values: identical to the local engine's in every round")


if __name__ == "__main__":
    main()

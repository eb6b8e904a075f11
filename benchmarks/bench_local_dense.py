"""local-dense throughput beside sentence-transformers' own ``encode`` on the same texts and model.

    .venv/bin/python benchmarks/bench_local_dense.py [--docs 512] [--rounds 3] [--batch-size 64] [--cache]

The texts are a SciFact subset (every n-th abstract of ``shared/reference-data/scifact``, title and
text as realrecall embeds them), so short and long abstracts are both in it. One model is loaded and
shared, so both sides run the same weights with the same torch threads. Contenders take turns, several
rounds, medians:

- st: ``SentenceTransformer.encode(texts, batch_size, normalize_embeddings=True)``, one call;
- realrecall: ``DenseRetriever`` building its matrix through ``SentenceTransformerEmbedder`` exactly
  as ``local-dense`` does (slices, progress callback, normalised rows), without the cache;
- realrecall+cache (with ``--cache``): the same behind a fresh embedding cache folder each round (what
  a first run pays).

512 texts are two of local-dense's slices, so the slicing is measured too.

Each row prints texts/s from wall time, and CPU seconds (all threads) per text: on a shared machine
wall time includes waiting for a core, so the CPU ratio is the steadier one. Target (issue 13):
realrecall's rate at least 0.9x st's. The largest difference between the two sides' vectors is
printed too (they must be the same vectors).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from realrecall.corpus import Corpus, load_corpus  # noqa: E402
from realrecall.evaluate.retrievers import RunSettings  # noqa: E402
from realrecall.evaluate.retrievers.dense import DenseRetriever, with_cache  # noqa: E402
from realrecall.evaluate.retrievers.local_dense import (  # noqa: E402
    LOCAL_SLICE,
    SentenceTransformerEmbedder,
    default_model_path,
)

SCIFACT = ROOT.parent / "shared" / "reference-data" / "scifact"


def subset(n_docs: int) -> Corpus:
    """Every n-th SciFact abstract, ``n_docs`` of them."""
    corpus = load_corpus(SCIFACT / "corpus.jsonl")
    step = max(1, len(corpus) // n_docs)
    return Corpus(tuple(list(corpus)[::step][:n_docs]))


def measured(action: Callable[[], np.ndarray]) -> tuple[float, float, np.ndarray]:
    """(wall seconds, CPU seconds of the whole process, the vectors)."""
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = action()
    return time.perf_counter() - wall, time.process_time() - cpu, vectors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=512, help="SciFact abstracts to embed (default 512)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cache", action="store_true", help="also time realrecall behind a fresh cache")
    args = parser.parse_args()
    if not (SCIFACT / "corpus.jsonl").is_file():
        print(f"skipped: no SciFact corpus at {SCIFACT} (the shared reference data is absent)")
        return

    corpus = subset(args.docs)
    texts = [chunk.searchable_text() for chunk in corpus]
    # Loaded first, as local-dense loads it: realrecall then sets torch's threads, and st shares them.
    embedder = SentenceTransformerEmbedder(default_model_path(), batch_size=args.batch_size)
    import torch

    model = embedder.model
    print(
        f"{len(texts)} SciFact abstracts, batch size {args.batch_size}, torch {torch.__version__} "
        f"with {torch.get_num_threads()} threads, {embedder.description}"
    )
    model.encode(texts[: args.batch_size], batch_size=args.batch_size)  # warm-up: first-call allocations

    def st() -> np.ndarray:
        return np.asarray(
            model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True)
        )

    def ours() -> np.ndarray:
        retriever = DenseRetriever(
            corpus, embedder, slice_size=LOCAL_SLICE, progress=lambda done, total: None, length_sorted=True
        )
        return retriever._matrix

    def ours_cached() -> np.ndarray:
        with tempfile.TemporaryDirectory() as folder:
            cached = with_cache(embedder, RunSettings(cache_dir=Path(folder)))
            return DenseRetriever(corpus, cached, slice_size=LOCAL_SLICE, length_sorted=True)._matrix

    contenders = {"st": st, "realrecall": ours}
    if args.cache:
        contenders["realrecall+cache"] = ours_cached
    walls: dict[str, list[float]] = {name: [] for name in contenders}
    cpus: dict[str, list[float]] = {name: [] for name in contenders}
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(args.rounds):
        order = list(contenders) if round_ % 2 == 0 else list(reversed(contenders))
        for name in order:
            wall, cpu, vectors[name] = measured(contenders[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
            print(f"  round {round_ + 1} {name:<17} {len(texts) / wall:7.1f} texts/s  {cpu:6.1f} s CPU")

    print(f"medians of {args.rounds} rounds (the ratio: median of each round's own ratio, as load drifts):")
    for name in contenders:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        rate = statistics.median(st / ours for st, ours in zip(walls["st"], walls[name], strict=True))
        cpu_rate = statistics.median(st / ours for st, ours in zip(cpus["st"], cpus[name], strict=True))
        print(
            f"  {name:<17} {len(texts) / wall:7.1f} texts/s  {1000 * cpu / len(texts):6.1f} ms CPU/text  "
            f"rate vs st {rate:.2f}x (CPU {cpu_rate:.2f}x)"
        )
    difference = float(np.abs(vectors["realrecall"] - vectors["st"]).max())
    print(f"largest difference between realrecall's and st's vectors: {difference:.2e}")
    print("target: realrecall's rate >= 0.9x st's")


if __name__ == "__main__":
    main()

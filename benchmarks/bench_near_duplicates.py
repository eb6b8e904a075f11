"""Near-duplicate search speed: realrecall's LSH + exact confirmation against all-pairs exact Jaccard.

    .venv/bin/python benchmarks/bench_near_duplicates.py                 # 2,000 and 10,000 chunks
    .venv/bin/python benchmarks/bench_near_duplicates.py --sizes 50000

Chunks are 70 random words from a 5,000-word vocabulary; one chunk in 50 gets a copy with one extra
word (Jaccard about 0.97). Both methods must find exactly the planted pairs. All-pairs is skipped
above 5,000 chunks (it grows with the square of the corpus).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from realrecall.corpus import Chunk, Corpus
from realrecall.curate import find_near_duplicates
from realrecall.text_features import shingles


def make_corpus(size: int, seed: int) -> tuple[Corpus, set[tuple[str, str]]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    chunks, planted = [], set()
    for i in range(size):
        text = " ".join(rng.choice(words) for _ in range(70))
        chunks.append(Chunk(f"c{i}", text))
        if i % 50 == 0:
            chunks.append(Chunk(f"d{i}", text + " extra"))
            planted.add((f"c{i}", f"d{i}"))
    return Corpus(tuple(chunks)), planted


def all_pairs(corpus: Corpus, threshold: float) -> set[tuple[str, str]]:
    sets = {chunk.id: shingles(chunk.text, 3) for chunk in corpus}
    return {
        (a, b)
        for a, b in combinations(corpus.ids, 2)
        if len(sets[a] & sets[b]) / len(sets[a] | sets[b]) >= threshold
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000")
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()
    print(f"{'chunks':>8} {'lsh (s)':>9} {'all pairs (s)':>14}  found")
    for size in (int(s) for s in args.sizes.split(",")):
        corpus, planted = make_corpus(size, seed=0)
        start = time.perf_counter()
        found = {(p.a, p.b) for p in find_near_duplicates(corpus, threshold=args.threshold).pairs}
        lsh = time.perf_counter() - start
        exact = "skipped"
        if len(corpus) <= 5000:
            start = time.perf_counter()
            assert all_pairs(corpus, args.threshold) == planted
            exact = f"{time.perf_counter() - start:.2f}"
        assert found == planted, "LSH missed or invented a pair"
        print(f"{len(corpus):>8} {lsh:>9.2f} {exact:>14}  {len(found)} of {len(planted)} planted pairs")


if __name__ == "__main__":
    main()

"""Retriever speed: realrecall's BM25 beside bm25s used directly, and exact dense top-k beside a full sort.

    .venv/bin/python benchmarks/bench_retrievers.py                 # SciFact if present, else synthetic
    .venv/bin/python benchmarks/bench_retrievers.py --docs 200000   # synthetic corpus of that size

BM25: both sides tokenise the same texts with the same stemmer and stopwords and index with the same
parameters. bm25s' own ``retrieve`` ranks every document, even those that share no term with the query,
and leaves the order of ties to numpy. realrecall drops those documents and orders ties by corpus
position, so the difference between the two times is what determinism costs. Dense: top-k by
``top_k_indices`` (argpartition, then ties settled), and the same top-k by a stable ``argsort`` of
every score.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import bm25s
import Stemmer

from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.evaluate.retrievers import BM25Retriever, top_k_indices

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "reference-data" / "scifact"


def corpus_and_queries(n_docs: int | None) -> tuple[str, Corpus, list[str]]:
    if n_docs is None and SCIFACT.is_dir():
        corpus = load_corpus(SCIFACT / "corpus.jsonl")
        with (SCIFACT / "queries.jsonl").open() as handle:
            queries = [json.loads(line)["text"] for line in handle]
        return "SciFact", corpus, queries
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(50_000)]
    # Zipf-like word frequencies, as in real text.
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    n = n_docs or 50_000
    words = rng.choice(len(vocabulary), size=(n, 120), p=weights)
    chunks = tuple(Chunk(f"d{i}", " ".join(vocabulary[w] for w in row)) for i, row in enumerate(words))
    queries = [
        " ".join(vocabulary[w] for w in rng.choice(len(vocabulary), size=8, p=weights)) for _ in range(1000)
    ]
    return f"synthetic {n:,} docs", Corpus(chunks), queries


def timed(label: str, action: object) -> object:
    start = time.perf_counter()
    result = action()  # type: ignore[operator]
    print(f"  {label:<44} {time.perf_counter() - start:8.2f} s")
    return result


def bench_bm25(corpus: Corpus, queries: list[str], k: int) -> None:
    texts = [chunk.searchable_text() for chunk in corpus]
    stemmer = Stemmer.Stemmer("english")

    def raw_index() -> bm25s.BM25:
        model = bm25s.BM25(k1=0.9, b=0.4)
        model.index(
            bm25s.tokenize(texts, stopwords="english", stemmer=stemmer, show_progress=False),
            show_progress=False,
        )
        return model

    model = timed("bm25s: tokenize + index", raw_index)
    tokens = bm25s.tokenize(queries, stopwords="english", stemmer=stemmer, show_progress=False)
    timed(
        f"bm25s: retrieve {len(queries)} queries, k={k}",
        lambda: model.retrieve(tokens, k=k, show_progress=False),
    )  # type: ignore[attr-defined]
    ours = timed("realrecall BM25Retriever: build", lambda: BM25Retriever(corpus))
    timed(f"realrecall BM25Retriever: search {len(queries)}, k={k}", lambda: ours.search(queries, k))  # type: ignore[attr-defined]


def bench_top_k(n_docs: int, n_queries: int, k: int) -> None:
    rng = np.random.default_rng(1)
    scores = rng.standard_normal((n_queries, n_docs)).astype(np.float32)
    timed(
        f"top_k_indices: {n_queries} x {n_docs:,}, k={k}", lambda: [top_k_indices(row, k) for row in scores]
    )
    timed(
        f"stable argsort: {n_queries} x {n_docs:,}, k={k}",
        lambda: [np.argsort(-row, kind="stable")[:k] for row in scores],
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=None, help="synthetic corpus size (default: SciFact)")
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args()
    name, corpus, queries = corpus_and_queries(args.docs)
    print(f"BM25 on {name} ({len(corpus):,} chunks, {len(queries):,} queries)")
    bench_bm25(corpus, queries, args.k)
    print("Dense top-k selection")
    bench_top_k(max(len(corpus), 100_000), 200, args.k)


if __name__ == "__main__":
    main()

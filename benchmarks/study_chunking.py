"""Comparing chunkings (issue 11): one evidence-anchored gold set, three chunkings of SciFact, bm25.

    .venv/bin/python benchmarks/study_chunking.py                  # the table of docs/chunking.md
    .venv/bin/python benchmarks/study_chunking.py --budgets 1000 --k 5

SciFact from ``shared/reference-data`` beside the checkout (found as ``tests/support/reference.py``
finds it): the 188 dev claims whose evidence sentences are known, as a gold set holding that evidence
only (``tests/support/scifact.py``), scored without change on three chunkings of the 5,183 abstracts:
whole abstracts, one chunk per sentence, three-sentence windows with stride 2. For each: bm25's
recall@k and nDCG@k, recall@Ntok at each budget N (the top chunks that fit in N tokens, counted whole),
and the mean context the top k hands on. Then ``realrecall compare`` on each pair at each budget: is
the difference significant at equal budget? (And at recall@k, for contrast.) Tokens are counted as
results.json says (``token_method``): tiktoken's cl100k_base when cached, else four characters a token.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from realrecall.calibrate import compare  # noqa: E402
from realrecall.corpus import load_corpus  # noqa: E402
from realrecall.evaluate import EvaluationResult, evaluate  # noqa: E402
from realrecall.evaluate.retrievers import build_retriever  # noqa: E402
from support.reference import find_reference_data  # noqa: E402
from support.scifact import CHUNKINGS, evidence_gold, write_chunking  # noqa: E402

LABELS = {
    "whole": "whole abstracts",
    "sentences": "one chunk per sentence",
    "windows": "3-sentence windows, stride 2",
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--budgets", default="500,2000", help="token budgets, comma-separated (default 500,2000)"
    )
    parser.add_argument("--k", type=int, default=10, help="rank cut-off (default 10)")
    args = parser.parse_args()
    reference = find_reference_data()
    scifact = reference / "scifact" if reference is not None else None
    if scifact is None or not (scifact / "original" / "claims_dev.jsonl").is_file():
        print("SciFact reference data (shared/reference-data/scifact/original) is not here", file=sys.stderr)
        return 2
    budgets = [int(budget) for budget in args.budgets.split(",")]
    results = study(scifact, budgets, args.k)
    print_table(results, budgets, args.k)
    for metric in (f"recall@{args.k}", *(f"recall@{budget}tok" for budget in budgets)):
        print_comparisons(results, metric)
    return 0


def study(scifact: Path, budgets: list[int], k: int) -> dict[str, EvaluationResult]:
    """Each chunking scored by bm25 on the same evidence-only gold set."""
    gold = evidence_gold(scifact)
    metrics = [f"recall@{k}", *(f"recall@{budget}tok" for budget in budgets), f"ndcg@{k}"]
    metrics += [f"ndcg@{budget}tok" for budget in budgets]
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for chunking in CHUNKINGS:
            started = time.perf_counter()
            corpus = load_corpus(write_chunking(scifact, chunking, Path(folder) / f"{chunking}.jsonl"))
            retriever = build_retriever("bm25", corpus)
            results[chunking] = evaluate(gold, corpus=corpus, retriever=retriever, metrics=metrics)
            print(f"{chunking}: {len(corpus)} chunks, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return results


def print_table(results: dict[str, EvaluationResult], budgets: list[int], k: int) -> None:
    first = next(iter(results.values()))
    queries = first.gold_sets[0].n_queries
    print(f"SciFact dev claims with evidence ({queries}), bm25; tokens: {first.token_method}")
    print()
    metrics = [
        f"recall@{k}",
        *(f"recall@{b}tok" for b in budgets),
        f"ndcg@{k}",
        *(f"ndcg@{b}tok" for b in budgets),
    ]
    print(f"| chunking | chunks | tokens in top {k} | {' | '.join(metrics)} |")
    print("|---|" + "---:|" * (2 + len(metrics)))
    for chunking, result in results.items():
        scored = result.gold_sets[0]
        context = (scored.context_tokens or {}).get(k, float("nan"))
        corpus = result.corpus or {}
        figures = " | ".join(f"{scored.overall.metrics[name]:.3f}" for name in metrics)
        print(f"| {LABELS[chunking]} | {corpus.get('chunks')} | {context:.0f} | {figures} |")
    passages = {chunking: result.gold_sets[0].gold_passages for chunking, result in results.items()}
    print()
    for chunking, counted in passages.items():
        if counted is not None:
            print(
                f"{chunking}: {counted.from_evidence} gold chunks from evidence, {counted.split} split, "
                f"{counted.lost} lost"
            )


def print_comparisons(results: dict[str, EvaluationResult], metric: str) -> None:
    """``realrecall compare`` at equal budget: queries pair by id, whatever the chunks are called."""
    print()
    names = list(results)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            report = compare(results[a], results[b], metric=metric)
            (row,) = report.verdicts
            print(
                f"{a} -> {b}: {metric} {row.mean_a:.3f} -> {row.mean_b:.3f} "
                f"(difference {row.difference:+.3f}, 95% interval {row.interval.low:+.3f} to "
                f"{row.interval.high:+.3f}, p = {row.p_value:.4f}, n = {row.n})"
            )


if __name__ == "__main__":
    raise SystemExit(main())

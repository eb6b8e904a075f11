"""BM25 reproduces the published figure on BEIR SciFact test (nDCG@10 0.665, Thakur et al. 2021).

The oracle is pytrec_eval (trec_eval's ndcg_cut.10) over the shared reference data.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from realrecall.corpus import load_corpus
from realrecall.evaluate.retrievers import build_retriever, retrieve

pytrec_eval = pytest.importorskip("pytrec_eval")

PUBLISHED_NDCG_AT_10 = 0.665


@pytest.mark.slow
@pytest.mark.reference_data
def test_bm25_reproduces_the_published_scifact_ndcg_at_10(reference_data: Path) -> None:
    folder = reference_data / "scifact"
    corpus = load_corpus(folder / "corpus.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    with (folder / "queries.jsonl").open() as handle:
        queries = {r["_id"]: r["text"] for r in map(json.loads, handle) if r["_id"] in qrels}
    assert (len(corpus), len(queries)) == (5183, 300)

    ranked = retrieve(build_retriever("bm25", corpus), queries, 100)
    # trec_eval orders a run by score; descending reciprocal ranks keep our order exactly.
    run = {qid: {pid: 1.0 / rank for rank, pid in enumerate(ids, start=1)} for qid, ids in ranked.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    ndcg = sum(values["ndcg_cut_10"] for values in per_query.values()) / len(qrels)

    assert ndcg == pytest.approx(PUBLISHED_NDCG_AT_10, abs=0.02)
    # Measured 0.6762 with the defaults (bm25s 0.3.16, PyStemmer 3.1.0); a wider move means the tokenising
    # or scoring changed.
    assert ndcg == pytest.approx(0.6762, abs=0.002)

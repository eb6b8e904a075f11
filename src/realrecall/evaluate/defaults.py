"""The evaluate stage's defaults, in one place: the CLI, the pipeline config and the library import them.

Kept free of heavy imports (the package's ``__init__`` is lazy), so the CLI can show them in ``--help``
without loading numpy.
"""

from __future__ import annotations

from realrecall.resolution import DEFAULT_COVERAGE

__all__ = ["EVIDENCE_COVERAGE", "GOLD_FROM", "HYBRID_DENSE", "RELEVANCE_THRESHOLD", "RETRIEVER", "K"]

K: tuple[int, ...] = (1, 5, 10, 50)
"""Cutoffs scored when none are given: recall@k, passage_recall@k, nDCG@k for each, MRR at the deepest."""

RETRIEVER = "bm25"
"""The retriever built when none is named."""

RELEVANCE_THRESHOLD = 1
"""The lowest grade that counts as relevant (trec_eval's ``-l``)."""

HYBRID_DENSE = "local-dense"
"""The dense side of the hybrid retriever: local by default, so it needs no endpoint."""

GOLD_FROM = "auto"
"""Where gold passages come from: chunk ids the corpus holds, evidence for the rest (``resolution``)."""

EVIDENCE_COVERAGE = DEFAULT_COVERAGE
"""The share of an evidence span a chunk must cover to be gold."""

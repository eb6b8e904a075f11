"""Retrieved context in tokens: the prefix a token budget admits, and the context each cut-off hands on.

``recall@Ntok`` and ``ndcg@Ntok`` (``realrecall.evaluate.metrics``) score the prefix of a ranking whose
chunks, counted whole in rank order, add up to at most N tokens: the first chunk that would cross the
budget ends the prefix. Tokens are counted on each chunk's ``text`` (what a generator reads; the title
aside) by ``realrecall.tokens.metric_token_counter``; an id the corpus lacks counts 0 tokens (evaluate
warns about such ids: they can never be gold).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.tokens import TokenCounter, metric_token_counter

__all__ = ["ContextTokens", "budget_depth", "mean_context_tokens", "prefix_lengths"]


@dataclass
class ContextTokens:
    """The token count of each chunk of ``corpus``, counted once, when first asked."""

    corpus: Corpus
    counter: TokenCounter = field(default_factory=metric_token_counter)
    _counts: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def method(self) -> str:
        """How tokens are counted (``tiktoken cl100k_base`` or the four-characters estimate)."""
        return self.counter.method

    def of(self, passage_id: str) -> int:
        """Tokens of the chunk's text; 0 for an id the corpus lacks."""
        count = self._counts.get(passage_id)
        if count is None:
            chunk = self.corpus.get(passage_id)
            count = 0 if chunk is None else self.counter.count(chunk.text)
            self._counts[passage_id] = count
        return count

    def cumulative(self, ranked: Sequence[str]) -> np.ndarray:
        """Tokens of the top 1, 2, ... chunks of one ranking (int64)."""
        return np.cumsum(np.fromiter(map(self.of, ranked), dtype=np.int64, count=len(ranked)))


def prefix_lengths(rankings: Iterable[Sequence[str]], tokens: ContextTokens, budget: int) -> np.ndarray:
    """Per ranking, how many top chunks fit in ``budget`` tokens (int64): the longest prefix whose
    cumulative count is <= ``budget``; 0 when the first chunk alone is longer."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InputError(f"a token budget is a whole number >= 1, got {budget!r}", hint="e.g. recall@2000tok")
    return np.fromiter(
        (int(np.searchsorted(tokens.cumulative(ranked), budget, side="right")) for ranked in rankings),
        dtype=np.int64,
    )


def mean_context_tokens(
    rankings: Sequence[Sequence[str]], tokens: ContextTokens, cutoffs: Iterable[int]
) -> dict[int, float]:
    """Per cut-off k, the mean tokens of the top k chunks over ``rankings`` (a ranking shorter than k
    hands on all it has; an empty one, of a query the run lacks, 0)."""
    cumulative = [tokens.cumulative(ranked) for ranked in rankings]
    means: dict[int, float] = {}
    for k in sorted(set(cutoffs)):
        totals = [float(c[min(k, len(c)) - 1]) if len(c) else 0.0 for c in cumulative]
        means[k] = math.fsum(totals) / len(totals) if totals else 0.0
    return means


def budget_depth(tokens: ContextTokens, budgets: Iterable[int], *, at_least: int) -> int:
    """How deep a retriever must rank so that every budget's prefix ends inside the ranking.

    The most chunks any prefix of ``max(budgets)`` tokens can hold is the count of the corpus' smallest
    chunks that add up to at most the budget; one more shows where the prefix ends. Capped at the
    corpus size, never below ``at_least`` (the deepest ``@k``).
    """
    budget = max(budgets, default=0)
    if budget < 1 or not len(tokens.corpus):
        return at_least
    sizes = np.sort(np.fromiter((tokens.of(pid) for pid in tokens.corpus.ids), dtype=np.int64))
    fitting = int(np.searchsorted(np.cumsum(sizes), budget, side="right"))
    return max(at_least, min(len(tokens.corpus), fitting + 1))

"""Where each judged passage landed in a run: the one pass over the data every metric reads from.

Metrics only need the ranks of judged passages with a positive grade (or a grade that reaches the
relevance threshold), never the whole ranked list. So instead of sorting every retrieved list, the
rank of a judged passage with score ``s`` is counted directly, as trec_eval 10 would place it:
``1 + #(score > s) + #(score == s and id > passage id)``, comparing float64 scores and ids bytewise.
The counts are vectorised over padded blocks of each query's scores; the rare exact ties fall back to
comparing ids in Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from realrecall.runs import Run

__all__ = ["RankedJudgments", "discounts", "rank_judgments", "sequential_segment_sum"]

# Queries are processed in padded blocks of at most this many cells, which bounds memory.
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True)
class RankedJudgments:
    """Judged passages of every gold query with their rank in the run, sorted by (query, rank).

    Query indexes follow ``query_ids`` (trec_eval's order: strcmp on the ids). Only passages with a
    positive grade or a grade reaching the threshold are kept: no metric reads the others.
    """

    query_ids: tuple[str, ...]
    query: np.ndarray
    """int64 index into ``query_ids``, ascending."""
    grade: np.ndarray
    """int64 grade from the gold set."""
    rank: np.ndarray
    """int64 1-based rank in the run; 0 when the passage was not retrieved (sorted last)."""
    relevant: np.ndarray
    """bool: the grade reaches the relevance threshold."""
    num_relevant: np.ndarray
    """int64 per query: relevant passages in the gold set, retrieved or not."""
    first_relevant_rank: np.ndarray
    """int64 per query: rank of the first relevant passage retrieved, 0 when none is."""

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def relevant_in_top(self, k: int | None) -> np.ndarray:
        """Per query, how many relevant passages rank within the top ``k`` (all retrieved if None)."""
        hit = self.relevant & (self.rank > 0)
        if k is not None:
            hit &= self.rank <= k
        return np.bincount(self.query[hit], minlength=self.n_queries)


def rank_judgments(
    qrels: Mapping[str, Mapping[str, int]], run: Run, query_ids: Sequence[str], threshold: int
) -> RankedJudgments:
    """Rank the judged passages of ``query_ids`` (already in trec_eval order) in ``run``."""
    entry_query: list[int] = []
    entry_grade: list[int] = []
    # Retrieved entries: their position among the kept entries, run segment and score.
    hit_entry: list[int] = []
    hit_segment: list[int] = []
    hit_score: list[float] = []
    hit_ids: list[tuple[str, str]] = []
    docs = run._docs
    for qi, qid in enumerate(query_ids):
        per_query = docs.get(qid)
        segment = run._segment(qid)
        for pid, grade in qrels[qid].items():
            if grade <= 0 and not (grade >= 0 and grade >= threshold):
                continue
            if per_query is not None:
                score = per_query.get(pid)
                if score is not None:
                    hit_entry.append(len(entry_query))
                    hit_segment.append(segment)  # type: ignore[arg-type]
                    hit_score.append(float(score))
                    hit_ids.append((qid, pid))
            entry_query.append(qi)
            entry_grade.append(grade)

    n = len(query_ids)
    query = np.asarray(entry_query, dtype=np.int64)
    grade = np.asarray(entry_grade, dtype=np.int64)
    rank = np.zeros(len(query), dtype=np.int64)
    if hit_entry:
        hits = np.asarray(hit_entry, dtype=np.int64)
        rank[hits] = _ranks_in_run(
            run,
            np.asarray(hit_segment, dtype=np.int64),
            np.asarray(hit_score, dtype=np.float64),
            hit_ids,
        )
    unretrieved_last = np.where(rank > 0, rank, np.iinfo(np.int64).max)
    order = np.lexsort((unretrieved_last, query))
    query, grade, rank = query[order], grade[order], rank[order]
    relevant = (grade >= threshold) & (grade >= 0)
    num_relevant = np.bincount(query[relevant], minlength=n)
    first = np.zeros(n, dtype=np.int64)
    found = relevant & (rank > 0)
    # Entries are sorted by rank within a query, so the first hit of each query is its best rank.
    hit_queries, first_index = np.unique(query[found], return_index=True)
    first[hit_queries] = rank[found][first_index]
    return RankedJudgments(
        query_ids=tuple(query_ids),
        query=query,
        grade=grade,
        rank=rank,
        relevant=relevant,
        num_relevant=num_relevant,
        first_relevant_rank=first,
    )


def _ranks_in_run(
    run: Run,
    segment: np.ndarray,
    score: np.ndarray,
    ids: Sequence[tuple[str, str]],
) -> np.ndarray:
    """1-based rank of each (query, passage) hit, given its run segment and score."""
    flat, offsets = run._flat_scores, run._offsets
    starts = offsets[segment]
    lengths = offsets[segment + 1] - starts
    greater = np.empty(len(segment), dtype=np.int64)
    equal = np.empty(len(segment), dtype=np.int64)
    # Pad each query's scores to a power-of-two width so one block holds queries of similar length.
    widths = np.left_shift(1, np.ceil(np.log2(np.maximum(lengths, 8))).astype(np.int64))
    for width in np.unique(widths):
        members = np.flatnonzero(widths == width)
        cols = np.arange(width, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // int(width))
        for begin in range(0, len(members), step):
            sel = members[begin : begin + step]
            valid = cols[None, :] < lengths[sel, None]
            values = flat[np.where(valid, starts[sel, None] + cols[None, :], 0)]
            target = score[sel, None]
            greater[sel] = np.count_nonzero((values > target) & valid, axis=1)
            equal[sel] = np.count_nonzero((values == target) & valid, axis=1)
    rank = 1 + greater
    for i in np.flatnonzero(equal > 1):
        qid, pid = ids[i]
        rank[i] += _tied_above(run, qid, int(segment[i]), float(score[i]), pid)
    return rank


def _tied_above(run: Run, qid: str, segment: int, score: float, pid: str) -> int:
    """Passages with exactly ``score`` whose id sorts after ``pid`` (trec_eval ranks those first)."""
    begin, end = int(run._offsets[segment]), int(run._offsets[segment + 1])
    tied = np.flatnonzero(run._flat_scores[begin:end] == score)
    ids = list(run._docs[qid])
    return sum(1 for j in tied if ids[j] > pid)


def discounts(n: int) -> np.ndarray:
    """``log2(rank + 1)`` for ranks 1..n, from the C library's log2 as trec_eval computes it."""
    return np.array([math.log2(i + 2) for i in range(n)], dtype=np.float64)


def sequential_segment_sum(segment: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per-segment sums added left to right, as a C loop would (``np.add.reduceat`` is pairwise).

    ``segment`` must be ascending; ``values`` are summed in their order within each segment.
    """
    out = np.zeros(n, dtype=np.float64)
    if len(segment) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
    sizes = np.diff(np.r_[starts, len(segment)])
    position = np.arange(len(segment)) - np.repeat(starts, sizes)
    order = np.argsort(position, kind="stable")
    bounds = np.searchsorted(position[order], np.arange(int(position.max()) + 2))
    # Step j adds the j-th term of every segment at once; no segment appears twice in a step.
    for j in range(int(position.max()) + 1):
        chosen = order[bounds[j] : bounds[j + 1]]
        out[segment[chosen]] += values[chosen]
    return out

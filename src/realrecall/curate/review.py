"""The misses of an evaluation, laid out for a person to judge.

A miss is a query none of whose relevant gold passages is in the top ``k`` retrieved. Often the
retriever was right and the gold set incomplete: a passage it ranked first answers the question too.
Showing the query, its gold passage and what was retrieved lets a reviewer say so, and the
judgements (see ``judgements``) add the passage to the gold set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence, Set
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus, load_corpus
from realrecall.curate.duplicates import NearDuplicates, find_near_duplicates
from realrecall.errors import InputError, OutputError
from realrecall.evaluate.results import EvaluationResult, QueryResult, load_results, read_per_query
from realrecall.evaluate.settings import headline_metric
from realrecall.files import file_sha256, iter_jsonl, write_jsonl_atomic, written_in_place
from realrecall.gold import ORIGINS, GoldSet, load_gold

__all__ = [
    "Miss",
    "Passage",
    "Retrieved",
    "ReviewList",
    "find_misses",
    "pending",
    "write_judgement_template",
]


@dataclass(frozen=True)
class Passage:
    """A passage as the reviewer sees it; ``found`` is False when the corpus lacks the id."""

    id: str
    title: str = ""
    text: str = ""
    found: bool = True


@dataclass(frozen=True)
class Retrieved:
    """A retrieved passage at its rank; ``judged`` is its grade when the gold set already judged it.

    ``duplicate_of`` names a relevant gold passage it nearly repeats, with their Jaccard similarity
    (when review was asked to look for near-duplicates): the likeliest false miss.
    """

    rank: int
    passage: Passage
    judged: int | None = None
    duplicate_of: tuple[str, float] | None = None


@dataclass(frozen=True)
class Miss:
    """A query with no relevant gold passage in the top k, its gold passages and what was retrieved."""

    query_id: str
    query: str
    gold: tuple[Passage, ...]
    retrieved: tuple[Retrieved, ...]
    first_relevant_rank: int | None = None
    gold_set: str | None = None
    type: str | None = None
    language: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class ReviewList:
    """The misses to review (at most ``limit``), and how many there were in all.

    ``origin``: the origin of the queries reviewed (None: every query); ``metric``: the headline
    metric whose cut-off ``k`` is, when ``k`` was not given.
    """

    misses: tuple[Miss, ...]
    n_queries: int
    n_misses: int
    k: int | None
    corpus_path: str | None
    warnings: tuple[str, ...] = ()
    origin: str | None = None
    metric: str | None = None


def find_misses(
    results: EvaluationResult | str | Path,
    per_query: str | Path | None = None,
    *,
    corpus: Corpus | str | Path | None = None,
    k: int | None = None,
    limit: int | None = None,
    show: int = 5,
    gold_set: str | None = None,
    gold: GoldSet | str | Path | None = None,
    duplicates: float | None = None,
    origin: str | None = "real",
) -> ReviewList:
    """List the queries whose relevant gold passages are all outside the top ``k`` retrieved.

    ``results``: what ``evaluate`` returned, or its results.json; ``per_query``: the per-query file
    (``evaluate --per-query``), which holds the retrieved lists a results.json lacks (optional with
    an evaluation result made here). ``k`` defaults to the cut-off of the headline metric (the one
    ``calibrate`` leads with, recall@10 when evaluated), else the largest ``recall@k`` cut-off, else
    each query's whole top list: the misses listed are the ones the quoted figure counts. ``origin``:
    only the queries of this origin (default ``real``, which takes queries without an origin too: a
    synthetic question's miss says nothing about the real set; None: every query). ``show`` is how
    many retrieved passages each miss carries; ``corpus`` defaults to the one the results name.
    """
    if k is not None and k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    if show < 1:
        raise InputError(f"--show must be at least 1, got {show}")
    summary = load_results(results)
    every = _records(summary, per_query)
    records = [r for r in every if gold_set is None or r.gold_set == gold_set]
    if not records:
        raise InputError(f"no per-query record for gold set {gold_set!r}", path=per_query)
    records = _of_origin(records, origin, per_query or summary.source)
    if gold is not None:
        current = load_gold(gold) if isinstance(gold, str | Path) else gold
        records = [
            replace(r, grades=current[r.query_id].gold) if r.query_id in current else r for r in records
        ]
    loaded, warnings = _corpus(corpus, summary)
    metric, cutoff = (None, k) if k is not None else _headline_cutoff(summary)
    threshold = summary.relevance_threshold
    near = find_near_duplicates(loaded, threshold=duplicates) if duplicates is not None else None
    misses = [
        _miss(record, loaded, show, threshold, near)
        for record in records
        if not _hit(record, cutoff, threshold)
    ]
    shown = misses if limit is None else misses[:limit]
    return ReviewList(
        misses=tuple(shown),
        n_queries=len(records),
        n_misses=len(misses),
        k=cutoff,
        corpus_path=loaded.path,
        warnings=tuple(warnings),
        origin=origin,
        metric=metric,
    )


def _of_origin(
    records: Sequence[QueryResult], origin: str | None, source: str | Path | None
) -> list[QueryResult]:
    if origin is None:
        return list(records)
    if origin not in ORIGINS:
        raise InputError(f"unknown origin {origin!r}", hint=f"choose from {', '.join(ORIGINS)} or all")
    # A query without an origin is not synthetic (generate always writes one): a set evaluated without
    # origins is the user's own, and its queries count as real.
    kept = [r for r in records if r.origin == origin or (origin == "real" and r.origin is None)]
    if not kept:
        counts = Counter(r.origin or "no origin" for r in records)
        present = ", ".join(f"{name} {n}" for name, n in counts.most_common())
        raise InputError(
            f"no {origin} query among the {len(records)} reviewed ({present})",
            path=source,
            hint="choose the queries with --origin (synthetic, or all)",
        )
    return kept


def _headline_cutoff(summary: EvaluationResult) -> tuple[str | None, int | None]:
    """The headline metric and its cut-off; else the largest recall@k; else no cut-off."""
    if summary.metrics:
        metric = headline_metric(summary.metrics)
        _, _, k = metric.partition("@")
        if k.isascii() and k.isdigit() and int(k) > 0:
            return metric, int(k)
    ks = summary.recall_cutoffs()
    return (f"recall@{max(ks)}", max(ks)) if ks else (None, None)


def _records(summary: EvaluationResult, per_query: str | Path | None) -> tuple[QueryResult, ...]:
    if per_query is not None:
        return read_per_query(per_query)
    if not any(query.top for query in summary.queries):
        # results.json keeps no retrieved lists: only an evaluation made in this process has them.
        raise InputError(
            "the results hold no retrieved lists to review",
            path=summary.source,
            hint="give the per-query file: evaluate --per-query FILE, then gold review --per-query FILE",
        )
    return summary.queries


def pending(
    review: ReviewList, judged: Set[tuple[str, str]] = frozenset()
) -> list[tuple[Miss, list[Retrieved]]]:
    """Each miss with its retrieved passages still to judge: not judged in the gold set nor in ``judged``."""
    result = []
    for miss in review.misses:
        hits = [h for h in miss.retrieved if h.judged is None and (miss.query_id, h.passage.id) not in judged]
        if hits:
            result.append((miss, hits))
    return result


def write_judgement_template(path: str | Path, review: ReviewList, *, by: str | None = None) -> int:
    """Write one JSONL line per (miss, retrieved passage) with ``grade: null`` for a person to fill in.

    ``gold add --judgements`` skips lines still null, so a half-filled template is safe to apply. An
    existing file is only replaced when it is an unfilled template: one holding judgements (or
    anything else) is refused, since they would be lost.
    """
    _check_replaceable_template(Path(path))
    return write_jsonl_atomic(path, _template_records(review.misses, by))


def _check_replaceable_template(path: Path) -> None:
    if not path.exists() or written_in_place(path) or (path.is_file() and path.stat().st_size == 0):
        return  # nothing there to lose
    hint = "apply them first (gold add GOLD_FILE --judgements FILE), or write the template elsewhere"
    try:
        judged = sum(
            1 for _, record in iter_jsonl(path, what="judgement") if record.get("grade", 0) is not None
        )
    except InputError:
        raise OutputError("exists and is not a judgement template", path=path, hint=hint) from None
    if judged:
        raise OutputError(
            f"holds {judged} judgement(s) already; the template would replace them", path=path, hint=hint
        )


def _template_records(misses: Sequence[Miss], by: str | None) -> list[dict[str, Any]]:
    return [
        {
            "query_id": miss.query_id,
            "passage_id": hit.passage.id,
            "grade": None,
            "by": by,
            "why": None,
            "rank": hit.rank,
            "query": miss.query,
            "passage": hit.passage.text[:300],
        }
        for miss in misses
        for hit in miss.retrieved
        if hit.judged is None
    ]


def _corpus(corpus: Corpus | str | Path | None, summary: EvaluationResult) -> tuple[Corpus, list[str]]:
    if isinstance(corpus, Corpus):
        return corpus, []
    warnings = []
    if corpus is None:
        if not summary.corpus_path:
            raise InputError("results.json names no corpus", path=summary.source, hint="pass --corpus")
        named = Path(summary.corpus_path)
        beside = Path(summary.source or ".").parent / named
        path = named if named.exists() or named.is_absolute() else beside
        if not path.exists():
            raise InputError(
                f"corpus {summary.corpus_path!r} named in results.json not found",
                path=summary.source,
                hint="pass --corpus",
            )
        if summary.corpus_sha256 and path.is_file() and file_sha256(path) != summary.corpus_sha256:
            warnings.append(f"corpus {path} changed since the evaluation: passages may differ")
    else:
        path = Path(corpus)
    return load_corpus(path), warnings


def _hit(record: QueryResult, k: int | None, threshold: int) -> bool:
    top = record.top if k is None else record.top[:k]
    return not record.relevant(threshold).isdisjoint(top)


def _passage(corpus: Corpus, passage_id: str) -> Passage:
    chunk = corpus.get(passage_id)
    if chunk is None:
        return Passage(passage_id, found=False)
    return Passage(passage_id, chunk.title, chunk.text)


def _first_relevant_rank(record: QueryResult, relevant: frozenset[str]) -> int | None:
    # Ranked from the top list when it holds one (right even when --gold added passages since the
    # evaluation); otherwise the rank the evaluation found further down, if any.
    ranks = (rank for rank, pid in enumerate(record.top, start=1) if pid in relevant)
    return next(ranks, record.first_relevant_rank)


def _judged(record: QueryResult, passage_id: str) -> int | None:
    """The grade the gold set gave ``passage_id``; a listed relevant id (no grades written) counts 1."""
    if record.grades:
        return record.grades.get(passage_id)
    return 1 if passage_id in record.gold else None


def _duplicate_of(
    passage_id: str, relevant: frozenset[str], near: NearDuplicates | None
) -> tuple[str, float] | None:
    if near is None:
        return None
    found = sorted(
        (-similarity, pid) for pid, similarity in near.neighbours(passage_id).items() if pid in relevant
    )
    return (found[0][1], -found[0][0]) if found else None


def _miss(
    record: QueryResult, corpus: Corpus, show: int, threshold: int, near: NearDuplicates | None
) -> Miss:
    relevant = record.relevant(threshold)
    retrieved = tuple(
        Retrieved(rank, _passage(corpus, pid), _judged(record, pid), _duplicate_of(pid, relevant, near))
        for rank, pid in enumerate(record.top[:show], start=1)
    )
    return Miss(
        query_id=record.query_id,
        query=record.query,
        gold=tuple(_passage(corpus, pid) for pid in (record.grades or record.gold) if pid in relevant),
        retrieved=retrieved,
        first_relevant_rank=_first_relevant_rank(record, relevant),
        gold_set=record.gold_set,
        type=record.label("type"),
        language=record.language,
        origin=record.origin,
    )

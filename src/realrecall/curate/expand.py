"""Expanding a gold set with the near-duplicates of its passages.

When the corpus holds the same text twice (a page copied into two sections, a release note repeated),
a retriever that returns the copy is counted wrong. Adding each relevant gold passage's near-duplicates
(with the same grade, recorded in ``gold_history`` with ``by: "expand"``) removes those false misses;
with an evaluation's per-query file, the result says how many misses that removes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from realrecall.corpus import Corpus, load_corpus
from realrecall.curate.duplicates import NearDuplicates, find_near_duplicates
from realrecall.curate.judgements import Judgement, record_history
from realrecall.errors import InputError
from realrecall.evaluate.results import EvaluationResult, read_per_query, records_for
from realrecall.files import written_in_place
from realrecall.gold import GoldQuery, GoldSet, load_gold, write_gold

__all__ = ["ExpandResult", "expand_gold"]


@dataclass(frozen=True)
class ExpandResult:
    """Passages added per query; misses before and after when a per-query file was given."""

    added: Mapping[str, tuple[str, ...]]
    output: str
    duplicates: NearDuplicates
    evaluated: int = 0
    misses_before: int | None = None
    misses_after: int | None = None
    recovered: tuple[str, ...] = ()
    k: int | None = None

    @property
    def n_added(self) -> int:
        return sum(len(ids) for ids in self.added.values())


def expand_gold(
    gold_path: str | Path,
    corpus: Corpus | str | Path,
    *,
    output: str | Path,
    threshold: float = 0.8,
    shingle: int = 3,
    per_query: EvaluationResult | str | Path | None = None,
    k: int | None = None,
    relevance_threshold: int = 1,
    gold_set: str | None = None,
    now: datetime | None = None,
) -> ExpandResult:
    """Add each relevant gold passage's near-duplicates to its query and write the set to ``output``.

    A passage the query already judges (any grade, including a reviewer's 0) is left as judged. With
    ``per_query``, a miss is a query with no relevant passage in its top ``k`` (default: the whole
    retrieved list), counted before and after the expansion: the per-query file (``evaluate
    --per-query``), or the evaluation result itself. Records of several gold sets are narrowed to
    those of ``gold_set`` (default: the gold set's name, its file stem).
    """
    if Path(output).suffix != ".jsonl" and not written_in_place(output):
        raise InputError(
            "the expanded gold set is written as JSON Lines", path=output, hint="name it *.jsonl"
        )
    if k is not None and k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    gold = load_gold(gold_path)
    loaded = load_corpus(corpus) if isinstance(corpus, str | Path) else corpus
    tops = None
    if per_query is not None:
        every = per_query.queries if isinstance(per_query, EvaluationResult) else read_per_query(per_query)
        records = records_for(every, gold_set or gold.name)
        tops = {r.query_id: r.top for r in records}
        if not any(query_id in gold for query_id in tops):
            # Counting misses over no query would report "0 of 0 recovered" as if that were a result.
            names = sorted({r.gold_set for r in every if r.gold_set is not None})
            raise InputError(
                f"no per-query record is of gold set {gold_set or gold.name!r} (none names a query of "
                f"{Path(gold_path).name})",
                path=None if isinstance(per_query, EvaluationResult) else per_query,
                hint=f"pass --gold-set with one of: {', '.join(names)}"
                if names
                else "give this gold set's file",
            )
    duplicates = find_near_duplicates(loaded, threshold=threshold, shingle=shingle)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    expanded, added = _expand(gold, duplicates, relevance_threshold, stamp, loaded)
    write_gold(output, expanded)
    result = ExpandResult(added=added, output=str(output), duplicates=duplicates, k=k)
    if tops is None:
        return result
    after = GoldSet(tuple(expanded), name=gold.name)
    evaluated = [qid for qid in tops if qid in gold]
    before_misses = {q for q in evaluated if _missed(gold[q], tops[q], k, relevance_threshold)}
    after_misses = {q for q in evaluated if _missed(after[q], tops[q], k, relevance_threshold)}
    return ExpandResult(
        added=added,
        output=str(output),
        duplicates=duplicates,
        evaluated=len(evaluated),
        misses_before=len(before_misses),
        misses_after=len(after_misses),
        recovered=tuple(q for q in evaluated if q in before_misses - after_misses),
        k=k,
    )


def _expand(
    gold: GoldSet, duplicates: NearDuplicates, threshold: int, stamp: str, corpus: Corpus
) -> tuple[list[GoldQuery], dict[str, tuple[str, ...]]]:
    expanded, added = [], {}
    for query in gold:
        new: dict[str, Judgement] = {}
        for source in sorted(query.relevant(threshold)):
            for neighbour, similarity in duplicates.neighbours(source).items():
                if neighbour in query.gold or neighbour in new:
                    continue
                new[neighbour] = Judgement(
                    query_id=query.query_id,
                    passage_id=neighbour,
                    grade=query.gold[source],
                    by="expand",
                    why=f"near-duplicate of {source} (jaccard {similarity:.2f})",
                    at=stamp,
                )
        if new:
            added[query.query_id] = tuple(new)
            query = record_history(query, new.values(), corpus=corpus)
        expanded.append(query)
    return expanded, added


def _missed(query: GoldQuery, top: tuple[str, ...], k: int | None, threshold: int) -> bool:
    return query.relevant(threshold).isdisjoint(top if k is None else top[:k])

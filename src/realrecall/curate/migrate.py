"""Carry a gold set over to a new chunking: ``realrecall gold migrate GOLD --corpus NEW -o NEW_GOLD``.

Each query's chunk ids are rewritten to the chunks of the new corpus that hold its evidence
(``realrecall.resolution``); the evidence itself is kept, so the set can move again (and back). No
query is dropped: one whose evidence is found in no chunk is kept with its evidence and reported, one
without evidence keeps its ids and is reported (by id alone, a re-chunked corpus may hold its ids for
other text, or not at all). A set in which no query has evidence and no id is in the new corpus has
nothing to carry over: it is refused, and nothing is written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from realrecall.corpus import Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.evidence import Evidence
from realrecall.files import check_distinct
from realrecall.gold import GoldQuery, GoldSet, load_gold, write_gold
from realrecall.resolution import DEFAULT_COVERAGE, QueryResolution, Resolution, resolve_gold

__all__ = ["MigrateResult", "migrate_gold"]


@dataclass(frozen=True)
class MigrateResult:
    """What the migration did: the resolution (totals and per query), and where the set went.

    ``without_evidence``: queries with no evidence, carried by their ids alone. ``unresolved``: those
    of them with no id in the new corpus; they keep their old ids, which the new corpus does not hold.
    """

    output: str
    resolution: Resolution
    unresolved: tuple[str, ...] = ()
    without_evidence: tuple[str, ...] = ()

    @property
    def queries(self) -> tuple[QueryResolution, ...]:
        return self.resolution.queries

    @property
    def mapped(self) -> int:
        """Queries with at least one gold passage in the new corpus."""
        return sum(1 for query in self.queries if query.by_id or query.from_evidence)


def migrate_gold(
    gold: GoldSet | str | Path,
    corpus: Corpus | str | Path,
    *,
    output: str | Path,
    coverage: float = DEFAULT_COVERAGE,
    gold_from: str = "auto",
) -> MigrateResult:
    """Write ``gold`` with chunk ids of ``corpus`` to ``output`` (JSON Lines, atomically).

    ``output`` must not be one of the inputs: the old set is what a migration is checked against.
    """
    inputs = {"the gold set": _path_of(gold), "the corpus": _path_of(corpus)}
    check_distinct(inputs, {"the output": output})
    gold_set = gold if isinstance(gold, GoldSet) else load_gold(gold)
    chunks = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    resolved, resolution = resolve_gold(gold_set, chunks, gold_from=gold_from, coverage=coverage)
    queries: list[GoldQuery] = []
    without_evidence: list[str] = []
    unresolved: list[str] = []
    for old, new, how in zip(gold_set, resolved, resolution.queries, strict=True):
        if not old.evidence:
            without_evidence.append(old.query_id)
            if how.by_id == 0:
                unresolved.append(old.query_id)
        if not new.gold and not new.evidence:
            # Nothing could take the old ids' place: keeping them keeps the query (and its file valid).
            queries.append(old)
            continue
        evidence = tuple(_anchored_here(item, new) for item in new.evidence)
        queries.append(dataclasses.replace(new, evidence=evidence))
    if not queries:
        raise InputError("the gold set has no query", path=gold_set.path, hint="give a gold set with queries")
    if len(unresolved) == len(queries):
        raise InputError(
            "no query has evidence, and none of their passage ids is in the new corpus: nothing to migrate",
            path=gold_set.path,
            hint="give the queries evidence (the text that answers them; `gold import --corpus` records it)",
        )
    write_gold(output, queries)
    return MigrateResult(
        output=str(output),
        resolution=resolution,
        unresolved=tuple(unresolved),
        without_evidence=tuple(without_evidence),
    )


def _anchored_here(item: Evidence, query: GoldQuery) -> Evidence:
    """The item with its ``chunk_id`` kept only if that chunk is gold in the new set: an old chunk's id
    says nothing about the new chunking (and a reused one would mislead ``auto``)."""
    if item.chunk_id is None or item.chunk_id in query.gold:
        return item
    return dataclasses.replace(item, chunk_id=None)


def _path_of(source: object) -> str | Path | None:
    if isinstance(source, str | Path):
        return source
    return getattr(source, "path", None)

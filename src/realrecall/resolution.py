"""Resolve evidence-anchored gold against a corpus: which chunks of this chunking hold the evidence.

A chunk of document D (``Chunk.doc_id``; a chunk that names no document is a document of its own, its
id) is gold for an evidence item of D, with the item's grade, when

1. its text contains the evidence text (both after ``realrecall.evidence.normalise``: NFKC, whitespace
   runs as one space); or
2. offsets are known on both sides (the evidence's ``start``/``end``, or the place the evidence text is
   found in D's text rebuilt from its chunks' offsets, and the chunk's ``start``/``end``) and the chunk's
   span covers at least ``coverage`` of the evidence span; or
3. without offsets, the chunk holds a piece of the evidence at its edge (the evidence's beginning ends
   the chunk, or its end begins the chunk, or the whole chunk lies inside the evidence) at least
   ``coverage`` of the evidence text long: how evidence split across neighbouring chunks is found.

Every chunk meeting a rule is gold (evidence split across chunks makes each part that is long enough
gold); a chunk gold through several items gets the highest grade. Evidence found in no chunk is
*lost*: it is reported, and a query left with no gold passage scores 0 (it keeps its place).

Which source of gold is used (``gold_from``):
- ``ids``: the query's chunk ids only (evidence ignored);
- ``evidence``: the evidence only (ids ignored);
- ``auto``: the ids the corpus holds, and the evidence for the rest. An item whose ``chunk_id`` is in
  the corpus and whose chunk there still holds it is not resolved again; one whose chunk id names a
  chunk that no longer holds it (chunkers reuse ids such as ``doc#3``) is resolved, and that id is
  dropped from the query's ids. An item naming no chunk is resolved unless every id of its query is
  in the corpus (ids alone cannot show a reused id: anchor evidence with ``chunk_id``, or score with
  ``evidence``). So a gold set scored on the chunking its ids were written for scores exactly as with
  ``ids``. Ids the corpus lacks are dropped where the query has evidence to take their place, and
  kept (and counted as missing) where it has none.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from realrecall.errors import SettingError
from realrecall.evidence import Evidence, normalise, normalise_with_offsets
from realrecall.settings import check_choice

if TYPE_CHECKING:
    from realrecall.corpus import Chunk, Corpus
    from realrecall.gold import GoldQuery, GoldSet

__all__ = [
    "DEFAULT_COVERAGE",
    "GOLD_FROM",
    "GoldFrom",
    "QueryResolution",
    "Resolution",
    "check_coverage",
    "check_gold_from",
    "needs_resolution",
    "resolve_gold",
]

GoldFrom = Literal["auto", "ids", "evidence"]
"""Where gold passages come from: see the module docstring."""
GOLD_FROM: tuple[str, ...] = typing.get_args(GoldFrom)

DEFAULT_COVERAGE = 0.5
"""The share of an evidence span a chunk must cover to be gold (rules 2 and 3)."""


@dataclass(frozen=True)
class QueryResolution:
    """How one query's gold was found: passages ``by_id``, chunks added ``from_evidence``, evidence
    items resolved to more than one chunk (``split``) and found in none (``lost``), ids not in the
    corpus kept for want of evidence (``missing_ids``) or replaced by it (``replaced_ids``)."""

    query_id: str
    by_id: int = 0
    from_evidence: int = 0
    split: int = 0
    lost: int = 0
    missing_ids: int = 0
    replaced_ids: int = 0
    passages: int = 0  # gold passages after resolution

    @property
    def empty(self) -> bool:
        """Left with no gold passage: the query scores 0."""
        return self.passages == 0


@dataclass(frozen=True)
class Resolution:
    """What resolving one gold set against one corpus did, in total and per query."""

    gold_from: str
    coverage: float
    queries: tuple[QueryResolution, ...] = field(default=())

    def _total(self, name: str) -> int:
        return sum(getattr(query, name) for query in self.queries)

    @property
    def by_id(self) -> int:
        return self._total("by_id")

    @property
    def from_evidence(self) -> int:
        return self._total("from_evidence")

    @property
    def split(self) -> int:
        return self._total("split")

    @property
    def lost(self) -> int:
        return self._total("lost")

    @property
    def missing_ids(self) -> int:
        return self._total("missing_ids")

    @property
    def replaced_ids(self) -> int:
        return self._total("replaced_ids")

    @property
    def lost_queries(self) -> tuple[str, ...]:
        """Queries with at least one evidence item found in no chunk."""
        return tuple(query.query_id for query in self.queries if query.lost)

    @property
    def empty_queries(self) -> tuple[str, ...]:
        """Queries left with no gold passage (they score 0)."""
        return tuple(query.query_id for query in self.queries if query.empty)


def check_gold_from(gold_from: str, coverage: float) -> None:
    """A one-line SettingError for an unknown ``gold_from`` or a coverage outside (0, 1]."""
    check_choice("gold_from", gold_from, GOLD_FROM)
    check_coverage(coverage)


def check_coverage(coverage: float) -> None:
    """The one rule of ``evidence_coverage``: a share in (0, 1]."""
    if (
        isinstance(coverage, bool)
        or not isinstance(coverage, int | float)
        or math.isnan(coverage)
        or not 0 < coverage <= 1
    ):
        raise SettingError(
            "evidence_coverage",
            f"must be a number in (0, 1], got {coverage!r}",
            hint="0.5: a chunk holding half of the evidence is gold",
        )


def needs_resolution(gold_set: GoldSet, corpus: Corpus | None, gold_from: str = "auto") -> bool:
    """Whether scoring ``gold_set`` on ``corpus`` changes anything by resolving (any evidence at all)."""
    return corpus is not None and gold_from != "ids" and any(query.evidence for query in gold_set)


def resolve_gold(
    gold_set: GoldSet,
    corpus: Corpus,
    *,
    gold_from: str = "auto",
    coverage: float = DEFAULT_COVERAGE,
) -> tuple[GoldSet, Resolution]:
    """``gold_set`` with each query's ``gold`` naming chunks of ``corpus`` (evidence kept as it was)."""
    check_gold_from(gold_from, coverage)
    documents = _Documents(corpus, {item.doc_id for query in gold_set for item in query.evidence})
    queries: list[GoldQuery] = []
    outcomes: list[QueryResolution] = []
    for query in gold_set:
        gold, outcome = _resolve_query(query, corpus, documents, gold_from, coverage)
        queries.append(dataclasses.replace(query, gold=gold))
        outcomes.append(outcome)
    resolved = dataclasses.replace(gold_set, queries=tuple(queries))
    return resolved, Resolution(gold_from=gold_from, coverage=coverage, queries=tuple(outcomes))


def _resolve_query(
    query: GoldQuery, corpus: Corpus, documents: _Documents, gold_from: str, coverage: float
) -> tuple[dict[str, int], QueryResolution]:
    ids = dict(query.gold)
    if gold_from == "ids" or (gold_from == "auto" and not query.evidence):
        present = sum(pid in corpus for pid in ids)
        outcome = QueryResolution(
            query.query_id, by_id=present, missing_ids=len(ids) - present, passages=len(ids)
        )
        return ids, outcome
    found = {item: documents.chunks_holding(item, coverage) for item in dict.fromkeys(query.evidence)}
    if gold_from == "evidence":
        gold: dict[str, int] = {}
        todo: Sequence[Evidence] = query.evidence
        counts = {"by_id": 0, "replaced_ids": 0}
    else:
        # An item's chunk is still there if the corpus holds that id and the chunk holds the item:
        # chunkers reuse ids ("doc#3"), so an id alone does not say the chunk is the same.
        gone = {
            item.chunk_id
            for item in query.evidence
            if item.chunk_id is not None and item.chunk_id not in found[item]
        }
        gold = {pid: grade for pid, grade in ids.items() if pid in corpus and pid not in gone}
        every_id_kept = bool(ids) and len(gold) == len(ids)
        todo = [item for item in query.evidence if not _still_there(item, found[item], every_id_kept)]
        counts = {"by_id": len(gold), "replaced_ids": len(ids) - len(gold)}
    added = split = lost = 0
    for item in todo:
        chunk_ids = found[item]
        lost += not chunk_ids
        split += len(chunk_ids) > 1
        for chunk_id in chunk_ids:
            if chunk_id not in gold:
                added += 1
                gold[chunk_id] = item.grade
            else:
                gold[chunk_id] = max(gold[chunk_id], item.grade)
    outcome = QueryResolution(
        query.query_id, from_evidence=added, split=split, lost=lost, passages=len(gold), **counts
    )
    return gold, outcome


def _still_there(item: Evidence, holding: Sequence[str], every_id_kept: bool) -> bool:
    """In ``auto`` mode: the item's own chunk is in the corpus and holds it (or, naming no chunk,
    every id of its query is in the corpus)."""
    return item.chunk_id in holding if item.chunk_id is not None else every_id_kept


class _Documents:
    """The chunks of the documents evidence names, with their normalised texts (computed once)."""

    def __init__(self, corpus: Corpus, doc_ids: Iterable[str]) -> None:
        wanted = set(doc_ids)
        self._chunks: dict[str, list[Chunk]] = {}
        for chunk in corpus:
            doc_id = chunk.doc_id if chunk.doc_id is not None else chunk.id
            if doc_id in wanted:
                self._chunks.setdefault(doc_id, []).append(chunk)
        self._normalised: dict[str, str] = {}
        self._texts: dict[str, tuple[str, list[int]] | None] = {}

    def chunks_holding(self, item: Evidence, coverage: float) -> list[str]:
        """Ids of the chunks that are gold for ``item`` (rules 1 to 3 of the module docstring)."""
        chunks = self._chunks.get(item.doc_id, [])
        text = normalise(item.text) if item.text is not None else None
        spans: list[tuple[int, int]] | None = [item.span] if item.span is not None else None
        found: list[str] = []
        for chunk in chunks:
            chunk_text = self._normalised_text(chunk)
            span = _span(chunk)
            if text is not None and text in chunk_text:
                found.append(chunk.id)
            elif span is not None and (spans is not None or text is not None):
                if spans is None and text is not None:
                    spans = self._locate(item.doc_id, text)
                if _covers(spans or [], *span, coverage):
                    found.append(chunk.id)
            elif text is not None and _edge_piece(text, chunk_text) >= coverage * len(text):
                found.append(chunk.id)
        return found

    def _normalised_text(self, chunk: Chunk) -> str:
        cached = self._normalised.get(chunk.id)
        if cached is None:
            cached = self._normalised[chunk.id] = normalise(chunk.text)
        return cached

    def _locate(self, doc_id: str, text: str) -> list[tuple[int, int]]:
        """Where ``text`` (normalised) is in the document rebuilt from its chunks' offsets: raw spans."""
        if doc_id not in self._texts:
            rebuilt = _rebuilt_document(self._chunks.get(doc_id, []))
            self._texts[doc_id] = None if rebuilt is None else _normalised_with_offsets(rebuilt)
        document = self._texts[doc_id]
        if document is None:
            return []
        normalised, origins = document
        spans = []
        at = normalised.find(text)
        while at >= 0:
            spans.append((origins[at], origins[at + len(text) - 1] + 1))
            at = normalised.find(text, at + 1)
        return spans


def _span(chunk: Chunk) -> tuple[int, int] | None:
    """The chunk's ``(start, end)`` in its document (``end`` defaults to start + its length)."""
    if chunk.start is None:
        return None
    return chunk.start, chunk.end if chunk.end is not None else chunk.start + len(chunk.text)


def _rebuilt_document(chunks: Sequence[Chunk]) -> str | None:
    """The document's text as far as its chunks' offsets place it. A gap no chunk covers reads as
    whitespace: chunkers drop the spaces between chunks, and evidence may run across them."""
    placed = [(*span, chunk.text) for chunk in chunks if (span := _span(chunk)) is not None]
    if not placed:
        return None
    characters = [" "] * max(end for _, end, _ in placed)
    for start, end, text in placed:
        piece = text[: end - start]
        characters[start : start + len(piece)] = piece
    return "".join(characters)


_WORD = re.compile(r"\S+")


def _normalised_with_offsets(text: str) -> tuple[str, list[int]]:
    """``normalise_with_offsets``, fast for ASCII text (a whole document may be long)."""
    if not text.isascii():
        return normalise_with_offsets(text)
    words: list[str] = []
    origins: list[int] = []
    for match in _WORD.finditer(text):
        if words:
            origins.append(origins[-1] + 1)  # the space, from the character after the last word
        words.append(match.group())
        origins.extend(range(match.start(), match.end()))
    return " ".join(words), origins


def _covers(spans: Sequence[tuple[int, int]], start: int, end: int, coverage: float) -> bool:
    """The chunk ``[start, end)`` covers at least ``coverage`` of one of the evidence ``spans``."""
    for span_start, span_end in spans:
        overlap = min(end, span_end) - max(start, span_start)
        if overlap > 0 and overlap >= coverage * (span_end - span_start):
            return True
    return False


def _edge_piece(evidence: str, chunk: str) -> int:
    """The longest piece of ``evidence`` the chunk holds at an edge: the evidence's beginning ending
    the chunk, its end beginning the chunk, or the whole chunk inside it (texts normalised)."""
    if not chunk:
        return 0
    if chunk in evidence:
        return len(chunk)
    longest = min(len(evidence), len(chunk))
    for n in range(longest, 0, -1):
        if chunk.endswith(evidence[:n]):
            break
    else:
        n = 0
    for m in range(longest, n, -1):
        if chunk.startswith(evidence[-m:]):
            return m
    return n

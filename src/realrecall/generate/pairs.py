"""Questions over two chunks: which chunk goes with which, and what is asked of the pair.

Real users ask "what is the difference between X and Y" or "how do I do A and then B", and the answer
is spread over two passages; a set of one-passage lookups never tests that. ``--multi-chunk 0.2`` asks
a fifth of the questions over a chunk and a related one, and their gold holds both.

A chunk's partner is, in this order:

- ``same_document``: the next chunk of the same document in corpus order (the previous one for the
  last), the document being ``Chunk.doc_id`` or the ``document`` metadata (or its usual other names);
- ``similar``: else the chunk of the corpus whose content-word stems are most alike (Jaccard at least
  ``MIN_SIMILARITY``, the highest; ties to the earlier chunk): a near-duplicate, or a page on the
  same subject.

A chunk with neither gets one-chunk questions only. The partner may be any chunk of the corpus, in
the sample or not: the question is about the pair, and both are gold.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from realrecall.corpus import Chunk
from realrecall.generate.planner import Slot, stratum
from realrecall.generate.question_types import PAIR_TYPES
from realrecall.text_features import content_stems, jaccard

__all__ = ["MIN_SIMILARITY", "PAIR_TYPES", "Pairing", "pair_chunks", "pair_counts", "pair_warning"]

MIN_SIMILARITY = 0.2
# Stems held by more chunks than this share say nothing about a pair (and would make the search slow).
_COMMON_STEM_SHARE = 0.2


class Pairing:
    """The partners of chunks (``partners``: chunk id -> partner) and how each is related."""

    def __init__(self) -> None:
        self.partners: dict[str, Chunk] = {}
        self.relations: dict[str, str] = {}

    def add(self, chunk: Chunk, partner: Chunk, relation: str) -> None:
        self.partners[chunk.id] = partner
        self.relations[chunk.id] = relation


def _document(chunk: Chunk) -> str:
    if chunk.doc_id:
        return chunk.doc_id
    return stratum(chunk, "document")


def pair_chunks(corpus: Sequence[Chunk], chunks: Iterable[Chunk], *, language: str | None = None) -> Pairing:
    """The partner of each of ``chunks`` among ``corpus`` (see module doc)."""
    pairing = Pairing()
    documents: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in corpus:
        name = _document(chunk)
        if name:
            documents[name].append(chunk)
    alone: list[Chunk] = []
    for chunk in chunks:
        members = documents.get(_document(chunk), [])
        if len(members) > 1:
            position = next(index for index, member in enumerate(members) if member.id == chunk.id)
            partner = members[position + 1] if position + 1 < len(members) else members[position - 1]
            pairing.add(chunk, partner, "same_document")
        else:
            alone.append(chunk)
    if alone:
        _pair_similar(corpus, alone, pairing, language)
    return pairing


def _pair_similar(
    corpus: Sequence[Chunk], chunks: list[Chunk], pairing: Pairing, language: str | None
) -> None:
    stems = [frozenset(content_stems(chunk.text, language)) for chunk in corpus]
    holders: dict[str, list[int]] = defaultdict(list)
    for index, chunk_stems in enumerate(stems):
        for item in chunk_stems:
            holders[item].append(index)
    common = max(2, int(_COMMON_STEM_SHARE * len(corpus)))
    position = {chunk.id: index for index, chunk in enumerate(corpus)}
    for chunk in chunks:
        own = position.get(chunk.id)
        mine = stems[own] if own is not None else frozenset(content_stems(chunk.text, language))
        candidates = {
            index for item in mine if len(holders[item]) <= common for index in holders[item] if index != own
        }
        best: tuple[float, int] | None = None
        for index in sorted(candidates):
            score = jaccard(mine, stems[index])
            if score >= MIN_SIMILARITY and (best is None or score > best[0]):
                best = (score, index)
        if best is not None:
            pairing.add(chunk, corpus[best[1]], "similar")


def pair_counts(slots: Iterable[Slot], kept: Collection[str]) -> dict[str, Any]:
    """What became of the questions drawn to be over two chunks: ``drawn`` by the ``multi_chunk``
    draw, ``planned`` over a pair (the others had no related chunk: ``no_partner``, asked over one),
    ``made`` (in the output, of the slot keys ``kept``) and ``not_kept`` (every attempt rejected, or
    the endpoint failed: see the failures file)."""
    drawn = [slot for slot in slots if slot.pair_drawn]
    planned = [slot for slot in drawn if slot.partner is not None]
    made = sum(1 for slot in planned if slot.key in kept)
    return {
        "drawn": len(drawn),
        "planned": len(planned),
        "made": made,
        "not_made": {"no_partner": len(drawn) - len(planned), "not_kept": len(planned) - made},
    }


def pair_warning(counts: dict[str, Any]) -> str | None:
    """Why questions drawn to be over two chunks were asked over one, or None (all had a partner)."""
    alone = counts.get("not_made", {}).get("no_partner", 0) if counts else 0
    if not alone:
        return None
    return (
        f"{alone} of {counts['drawn']} question(s) drawn to be over two chunks (--multi-chunk) were "
        "asked over one: their chunk has no other chunk of the same document (doc_id or 'document' "
        f"metadata) and none with content-stem Jaccard >= {MIN_SIMILARITY}; see 'pairs' in the summary file"
    )

"""Evidence for every generated question, so a synthetic set survives re-chunking (issue 11).

A synthetic question names its chunk by id (``gold``), and also what answers it (``evidence``): the
chunk's document (``Chunk.doc_id``, or the chunk id when the corpus names no document: resolution
takes such a chunk as a document of its own) and text, with the ``chunk_id`` it was taken from (a
corpus that still holds that chunk needs no resolution):

- the extractive backend: the sentence the question was cut from, as it reads in the chunk;
- a model backend: the chunk's text, or, when the situation-first strategy recorded the passage's
  answer (a quote), that quote as it reads in the chunk;
- a question over two chunks: both chunks' texts, or (situation first) each passage's quote as it
  reads in its chunk.

Offsets in the document are recorded when the chunk has ``start``. A sentence or quote that cannot be
found in the chunk's text (markup the extractive backend strips, a quote the model reworded) falls
back to the whole chunk's text, which always resolves to the chunk itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from realrecall.evidence import Evidence, chunk_evidence, normalise, normalise_with_offsets
from realrecall.generate.extractive import sentences

if TYPE_CHECKING:
    from realrecall.corpus import Chunk
    from realrecall.generate.planner import Slot

__all__ = ["chunk_evidence", "question_evidence", "span_evidence"]

_WORD = re.compile(r"\w+")


def question_evidence(slot: Slot, question: str, candidate: Any, *, extractive: bool) -> tuple[Evidence, ...]:
    """The evidence of a kept question (see the module docstring); none for a chunk without text."""
    chunks = (slot.chunk,) if slot.partner is None else (slot.chunk, slot.partner)
    whole = tuple(item for item in map(chunk_evidence, chunks) if item is not None)
    if len(whole) < len(chunks):
        return ()  # a chunk without text: nothing to find it by
    situation = getattr(candidate, "situation", None)
    if slot.partner is not None:
        # Situation first: each passage's quote, as it reads in its chunk (else the whole chunk).
        quotes = (getattr(situation, "answer", None), getattr(situation, "answer_b", None))
        if all(isinstance(quote, str) and normalise(quote) for quote in quotes):
            return tuple(
                span_evidence(chunk, str(quote)) for chunk, quote in zip(chunks, quotes, strict=True)
            )
        return whole
    if extractive:
        sentence = _source_sentence(slot.chunk, question)
        return whole if sentence is None else (span_evidence(slot.chunk, sentence),)
    answer = getattr(situation, "answer", None)
    if isinstance(answer, str) and normalise(answer):
        return (span_evidence(slot.chunk, answer),)
    return whole


def span_evidence(chunk: Chunk, text: str, grade: int = 1) -> Evidence:
    """``text`` as it reads in the chunk (after normalisation), with its document offsets when the chunk
    has ``start``; the whole chunk when the text is not in it."""
    located = _locate(chunk.text, text)
    whole = chunk_evidence(chunk, grade)
    if located is None and whole is not None:
        return whole
    begin, end = located if located is not None else (0, len(chunk.text))
    offset = chunk.start
    return Evidence(
        doc_id=chunk.doc_id or chunk.id,
        text=chunk.text[begin:end],
        grade=grade,
        start=None if offset is None else offset + begin,
        end=None if offset is None else offset + end,
        chunk_id=chunk.id,
    )


def _locate(haystack: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` lies in ``haystack``, both compared normalised; offsets into ``haystack``."""
    wanted = normalise(needle)
    if not wanted:
        return None
    flat, origins = normalise_with_offsets(haystack)
    at = flat.find(wanted)
    if at < 0:
        return None
    stop = at + len(wanted)
    # The span ends where the next normalised character came from (or at the end), less the spaces.
    end = max(origins[stop - 1] + 1, origins[stop] if stop < len(origins) else len(haystack))
    while end > origins[at] + 1 and haystack[end - 1].isspace():
        end -= 1
    return origins[at], end


def _source_sentence(chunk: Chunk, question: str) -> str | None:
    """The chunk's sentence the extractive backend cut ``question`` from: the first whose words hold
    the question's words in a row (the question is a clause of it, lower-cased, marks dropped)."""
    words = [word.lower() for word in _WORD.findall(question)]
    if not words:
        return None
    for sentence in sentences(chunk.text):
        found = [word.lower() for word in _WORD.findall(sentence)]
        if any(found[i : i + len(words)] == words for i in range(len(found) - len(words) + 1)):
            return sentence
    return None

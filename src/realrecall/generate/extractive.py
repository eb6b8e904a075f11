"""The offline generator: a sentence of the chunk becomes the query (the Inverse Cloze Task).

Inverse Cloze (Lee et al., 2019, "Latent Retrieval for Weakly Supervised Open Domain Question
Answering") trains retrievers on pseudo-queries that are sentences cut from a passage. Here the
sentence is the query and its chunk the gold passage. It needs no model and no network, so the whole
pipeline runs anywhere, deterministically for a given seed.

It is the worst case of vocabulary reuse: every query word comes from the gold chunk (lexical overlap
close to 1.0), so a lexical retriever scores far better on these queries than on real users'
questions. Use it to exercise the pipeline, or as a lower bound on how much a synthetic set can
flatter BM25; never quote its figures as the real ones.
"""

from __future__ import annotations

import hashlib
import re

from realrecall.corpus import Chunk

__all__ = ["MAX_QUERY_WORDS", "MIN_SENTENCE_WORDS", "extract_query", "sentences"]

MIN_SENTENCE_WORDS = 4
MAX_QUERY_WORDS = 20

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s*|[-*•]\s+|\d+[.)]\s+|>\s*)")


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and headings: a sentence never runs across two of them."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        starts_block = not line.strip() or _HEADING.match(line) or _ITEM.match(line)
        if starts_block and current:
            blocks.append(" ".join(current))
            current = []
        if _HEADING.match(line):
            blocks.append(line)
        elif line.strip():
            current.append(line)
    if current:
        blocks.append(" ".join(current))
    return blocks


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` with at least ``MIN_SENTENCE_WORDS`` words, markup stripped."""
    found: list[str] = []
    for block in _blocks(text):
        for piece in _SENTENCE_END.split(_MARKUP.sub("", block)):
            cleaned = " ".join(piece.replace("`", "").replace("**", "").split())
            if len(cleaned.split()) >= MIN_SENTENCE_WORDS:
                found.append(cleaned)
    return found


def _to_query(sentence: str) -> str:
    words = sentence.split()[:MAX_QUERY_WORDS]
    return " ".join(words).rstrip(".,;:!")


def extract_query(chunk: Chunk, *, seed: int, position: int) -> str | None:
    """The query for ``position`` (slot and attempt number) of ``chunk``; None if it has no sentence.

    The chunk's sentences are put in an order drawn from ``(seed, chunk id)``; position ``p`` takes
    sentence ``p mod count``, so a chunk's slots get different sentences while there are enough.
    """
    found = sentences(chunk.text)
    if not found:
        whole = " ".join(chunk.text.split())
        if len(whole.split()) < 2:
            return None
        found = [whole]

    def rank(item: tuple[int, str]) -> str:
        return hashlib.sha256(f"{seed}\x1f{chunk.id}\x1f{item[0]}".encode()).hexdigest()

    ordered = [sentence for _, sentence in sorted(enumerate(found), key=rank)]
    return _to_query(ordered[position % len(ordered)])

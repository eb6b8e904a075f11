"""The offline generator: a clause of the chunk's prose becomes the query (the Inverse Cloze Task).

Inverse Cloze (Lee et al., 2019, "Latent Retrieval for Weakly Supervised Open Domain Question
Answering") trains retrievers on pseudo-queries that are sentences cut from a passage. Here a clause
of one of the chunk's sentences is the query and its chunk the gold passage. It needs no model and no
network, so the whole pipeline runs anywhere, deterministically for a given seed.

The query is shaped like one a user types, as far as cutting allows:

- only the chunk's prose is read (``generate.screening.prose_paragraphs``): code blocks and code
  lines, template tags, link lists, headings, tables and menus are left out; a link reads as its
  text, inline code as its words, without markup;
- a sentence cut off by the chunking (the chunk's first, when the chunk starts mid-sentence; its
  last, when it ends mid-sentence) is not used while the chunk has others, nor a sentence that
  still looks like code;
- the query is the sentence's first clause of at least ``MIN_CLAUSE_WORDS`` words (commas,
  semicolons, colons, brackets and dashes end a clause), cut to ``MAX_QUERY_WORDS`` words, without
  closing punctuation or a trailing stopword, and lower-case at the start unless it opens with a
  name written in capitals (``API``, ``OpenAI``).

It is still the worst case of vocabulary reuse: every query word comes from the gold chunk (lexical
overlap 1.0), so a lexical retriever scores far better on these queries than on real users'
questions. Use it to exercise the pipeline, or as a lower bound on how much a synthetic set can
flatter BM25; never quote its figures as the real ones.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from realrecall.corpus import Chunk
from realrecall.generate.screening import looks_like_code, prose_paragraphs
from realrecall.generate.sources import Candidate
from realrecall.llm.types import Usage
from realrecall.text_features import stopwords

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.planner import Slot

__all__ = [
    "MAX_QUERY_WORDS",
    "MIN_CLAUSE_WORDS",
    "MIN_SENTENCE_WORDS",
    "ExtractiveQuestions",
    "extract_query",
    "sentences",
]

MIN_SENTENCE_WORDS = 4
MIN_CLAUSE_WORDS = 4
MAX_QUERY_WORDS = 12

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLAUSE_END = re.compile(r"[,;:()\[\]]|\s[-–—]+\s")
_MARKS = str.maketrans("", "", '*"“”')
_ENDS_SENTENCE = re.compile(r"[.!?:][\"')\]]*\s*$")


def sentences(text: str) -> list[str]:
    """The sentences of the prose of ``text`` with at least ``MIN_SENTENCE_WORDS`` words, markup
    stripped; sentences cut off by the chunking are left out while there are others (module doc)."""
    found: list[str] = []
    paragraphs = prose_paragraphs(text, MIN_SENTENCE_WORDS)
    for number, paragraph in enumerate(paragraphs):
        pieces = _SENTENCE_END.split(paragraph.replace("**", ""))
        for index, piece in enumerate(pieces):
            cleaned = " ".join(piece.split())
            cut_at_start = number == 0 and index == 0 and _starts_mid_sentence(text)
            cut_at_end = (
                number == len(paragraphs) - 1 and index == len(pieces) - 1 and not _ENDS_SENTENCE.search(text)
            )
            if len(cleaned.split()) < MIN_SENTENCE_WORDS or looks_like_code(cleaned):
                continue
            found.append(("~" if cut_at_start or cut_at_end else "") + cleaned)
    whole = [sentence for sentence in found if not sentence.startswith("~")]
    return whole or [sentence.removeprefix("~") for sentence in found]


def _starts_mid_sentence(text: str) -> bool:
    first = text.lstrip()[:1]
    return bool(first) and (first.islower() or not (first.isalnum() or first in "#`*[-"))


def _to_query(sentence: str, language: str | None) -> str:
    # Emphasis marks and quotes (often left open by the cut) are markup, not what a user types.
    sentence = sentence.translate(_MARKS)
    clauses = [" ".join(part.split()) for part in _CLAUSE_END.split(sentence)]
    clause = next((part for part in clauses if len(part.split()) >= MIN_CLAUSE_WORDS), sentence)
    words = clause.split()[:MAX_QUERY_WORDS]
    stop = stopwords(language)
    while len(words) > MIN_CLAUSE_WORDS and words[-1].lower().strip(".,;:!?\"'") in stop:
        words.pop()
    query = " ".join(words).rstrip(".,;:!?\"' ")
    first = words[0] if words else ""
    if first[:1].isupper() and first[1:] == first[1:].lower():
        query = query[:1].lower() + query[1:]  # "Chroma will ..." -> "chroma will ...", not "API"
    return query


def extract_query(chunk: Chunk, *, seed: int, position: int, language: str | None = None) -> str | None:
    """The query for ``position`` (slot and attempt number) of ``chunk``; None if it has no sentence.

    The chunk's sentences are put in an order drawn from ``(seed, chunk id)``; position ``p`` takes
    sentence ``p mod count``, so a chunk's slots get different sentences while there are enough.
    """
    found = sentences(chunk.text)
    if not found:
        return None

    def rank(item: tuple[int, str]) -> str:
        return hashlib.sha256(f"{seed}\x1f{chunk.id}\x1f{item[0]}".encode()).hexdigest()

    ordered = [sentence for _, sentence in sorted(enumerate(found), key=rank)]
    return _to_query(ordered[position % len(ordered)], language)


class ExtractiveQuestions:
    """Questions cut from the chunk itself (see ``extractive``): no model, no request, no cost."""

    def __init__(self, config: GenerateConfig) -> None:
        self.config = config

    async def propose(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None) -> Candidate:
        position = slot.index + attempt * self.config.per_chunk
        question = extract_query(slot.chunk, seed=self.config.seed, position=position)
        failure = None if question is not None else "no_sentence"
        return Candidate(question, failure, attempt, Usage(0, 0), "extractive")

"""Lexical overlap: how much of a question's vocabulary is copied from its source passage.

A question written by someone who has read the passage reuses its distinctive words, and a lexical
retriever (BM25) then finds the passage easily; real users, who have not read it, use their own words.
The overlap of every synthetic question is stored, and ``--max-overlap`` regenerates or drops those
above a bound, so that the synthetic set does not flatter lexical retrievers.

Definition::

    overlap(q, p) = |C(q) ∩ W(p)| / |C(q)|

where ``W(x)`` is the set of word stems of text ``x`` and ``C(q)`` the stems of the question's content
words (words that are not stopwords of the language). Words are lower-cased ``\\w+`` runs of at least
two characters; words of letters only are compared by their first five letters (truncation stemming:
``configure`` and ``configuring`` match, as do ``Konfiguration`` and ``konfigurieren``), words with a
digit (``v2``, ``e404``, ``utf8``) whole, since they are identifiers. A question with no content word
has overlap 0.0. Stopword lists (``en``, ``de``) are package data under ``generate/stopwords/``; for a
language without a list the union of all lists is used.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

__all__ = ["STEM_LENGTH", "content_stems", "lexical_overlap", "stems", "stopword_languages", "stopwords"]

STEM_LENGTH = 5
_WORD = re.compile(r"\w{2,}")


@functools.cache
def stopword_languages() -> tuple[str, ...]:
    """Languages that have a stopword list (the file names under ``generate/stopwords/``)."""
    folder = resources.files("realrecall.generate").joinpath("stopwords")
    return tuple(
        sorted(entry.name.removesuffix(".txt") for entry in folder.iterdir() if entry.name.endswith(".txt"))
    )


@functools.cache
def stopwords(language: str | None) -> frozenset[str]:
    """The stopwords of ``language`` (ISO 639-1 code); the union of all lists for a language without one."""
    code = (language or "").lower().split("-")[0]
    if code not in stopword_languages():
        return frozenset().union(*(stopwords(known) for known in stopword_languages()))
    text = resources.files("realrecall.generate").joinpath("stopwords", f"{code}.txt").read_text("utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _stem(word: str) -> str:
    return word[:STEM_LENGTH] if word.isalpha() else word


def stems(text: str) -> set[str]:
    """The set of word stems of ``text`` (see the module doc)."""
    return {_stem(word) for word in _words(text)}


def content_stems(text: str, language: str | None) -> set[str]:
    """Stems of the words of ``text`` that are not stopwords of ``language``."""
    stop = stopwords(language)
    return {_stem(word) for word in _words(text) if word not in stop}


def lexical_overlap(question: str, passage: str, language: str | None) -> float:
    """Share of the question's content-word stems that occur in the passage, in [0, 1] (see module doc)."""
    content = content_stems(question, language)
    if not content:
        return 0.0
    return len(content & stems(passage)) / len(content)

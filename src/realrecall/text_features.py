"""Text features: words, stems, stopwords, lexical overlap, shingles and Jaccard similarity.

The one place that tokenises text. Its users: generate's overlap filter and near-duplicate question
filter, calibrate's diagnostics (question length, overlap with the gold passage) and curate's
near-duplicate passage finder. BM25 is not a user: it tokenises with bm25s and PyStemmer, as its
retriever module says.

Words are runs of word characters (``\\w+``). Each user folds case before tokenising and says how:
stems lower-case the text, shingles case-fold it. The two differ only on a few characters (``ß``,
``ﬁ``), and each is kept so that the overlap values recorded in provenance and the duplicate pairs
found stay what they were.

Lexical overlap: how much of a question's vocabulary is copied from its source passage. A question
written by someone who has read the passage reuses its distinctive words, and a lexical retriever
(BM25) then finds the passage easily; real users, who have not read it, use their own words. Generate
stores the overlap of every synthetic question and ``--max-overlap`` regenerates or drops those above
a bound; calibrate compares the overlap of the two sets with the same function. Definition::

    overlap(q, p) = |C(q) ∩ W(p)| / |C(q)|

where ``W(x)`` is the set of word stems of text ``x`` and ``C(q)`` the stems of the question's content
words (words that are not stopwords of the language). Stems come from the lower-cased words of at
least two characters; words of letters only are compared by their first five letters (truncation
stemming: ``configure`` and ``configuring`` match, as do ``Konfiguration`` and ``konfigurieren``),
words with a digit (``v2``, ``e404``, ``utf8``) whole, since they are identifiers. A question with no
content word has overlap 0.0. Stopword lists (``en``, ``de``) are package data under ``stopwords/``
beside this module; for a language without a list the union of all lists is used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = [
    "STEM_LENGTH",
    "content_stems",
    "jaccard",
    "lexical_overlap",
    "shingles",
    "stem",
    "stems",
    "stopword_languages",
    "stopwords",
    "words",
]

STEM_LENGTH = 5
# Shorter words ("a", "I", "x") carry no topic; stems leave them out.
_MIN_STEM_WORD = 2
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The runs of word characters of ``text``, in order, as written (fold case before, if wanted)."""
    return _WORD.findall(text)


# --- stopwords ----------------------------------------------------------------------------------


def _stopword_folder() -> Traversable:
    return resources.files("realrecall").joinpath("stopwords")


@functools.cache
def stopword_languages() -> tuple[str, ...]:
    """Languages that have a stopword list (the file names under ``stopwords/``)."""
    names = (entry.name for entry in _stopword_folder().iterdir())
    return tuple(sorted(name.removesuffix(".txt") for name in names if name.endswith(".txt")))


@functools.cache
def stopwords(language: str | None) -> frozenset[str]:
    """The stopwords of ``language`` (ISO 639-1 code); the union of all lists for a language without one."""
    code = (language or "").lower().split("-")[0]
    if code not in stopword_languages():
        return frozenset().union(*(stopwords(known) for known in stopword_languages()))
    text = _stopword_folder().joinpath(f"{code}.txt").read_text("utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


# --- stems and lexical overlap ------------------------------------------------------------------


def _stem_words(text: str) -> list[str]:
    return [word for word in words(text.lower()) if len(word) >= _MIN_STEM_WORD]


def stem(word: str) -> str:
    """A lower-case word's stem: its first ``STEM_LENGTH`` letters, or the whole word if it has a digit."""
    return word[:STEM_LENGTH] if word.isalpha() else word


def stems(text: str) -> set[str]:
    """The set of word stems of ``text`` (see the module doc)."""
    return {stem(word) for word in _stem_words(text)}


def content_stems(text: str, language: str | None) -> set[str]:
    """Stems of the words of ``text`` that are not stopwords of ``language``."""
    stop = stopwords(language)
    return {stem(word) for word in _stem_words(text) if word not in stop}


def lexical_overlap(question: str, passage: str, language: str | None) -> float:
    """Share of the question's content-word stems that occur in the passage, in [0, 1] (see module doc)."""
    content = content_stems(question, language)
    if not content:
        return 0.0
    return len(content & stems(passage)) / len(content)


# --- shingles and Jaccard -----------------------------------------------------------------------


def shingles(text: str, size: int) -> frozenset[str]:
    """The set of ``size``-word shingles of ``text``; a shorter text is one shingle of all its words.

    Words are those of the case-folded text, joined by one space.
    """
    folded = words(text.casefold())
    if len(folded) <= size:
        return frozenset([" ".join(folded)]) if folded else frozenset()
    return frozenset(" ".join(folded[i : i + size]) for i in range(len(folded) - size + 1))


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)

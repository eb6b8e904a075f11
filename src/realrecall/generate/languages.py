"""The language of each question: the chunk's own by default, checked on every answer.

- A chunk's language is its metadata's ``language`` (or ``lang``), else what the project's detector
  (``realrecall.labels.language``, py3langid) reads in its prose (code and markup left out).
- Without ``--languages`` every question is asked in its chunk's language. ``--languages de,en``
  keeps the chunks written in those languages (the others are skipped, counted in the summary);
  ``--cross-language`` asks questions in the languages drawn from the weights whatever the chunk's
  language (a German question on an English page, on purpose).
- Every model answer is read by the detector, its identifiers and code left out (``language_text``:
  `n_results`, ``collection.add()``, ``--max-attempts``, ``getOrCreate``, ``E2014``, ``HNSW``: an
  identifier has no language). It is in the wrong language, rejected as ``wrong_language`` and asked
  again with feedback like any other invalid answer, when another language is confident
  (``WRONG_LANGUAGE_CONFIDENCE``) **or, asked in another language than English (the prompts'), that
  language is unlikely** (below ``ASKED_LANGUAGE_FLOOR``): an English keyword query ("cerebellar
  disease definition") on a German slot reads as no language confidently, but hardly as German. An
  answer made of identifiers alone is kept.
- Codes are ISO 639-1 codes the detector knows; any other (``klingon``) is refused.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from realrecall.corpus import Chunk
from realrecall.errors import InputError
from realrecall.generate.planner import chunk_language
from realrecall.generate.screening import prose_text
from realrecall.labels.language import LanguageDetector, known_languages

__all__ = [
    "ASKED_LANGUAGE_FLOOR",
    "LANGUAGE_NAMES",
    "PROMPT_LANGUAGE",
    "WRONG_LANGUAGE_CONFIDENCE",
    "check_language_codes",
    "detect_chunk_language",
    "known_language_codes",
    "language_text",
    "read_chunk_language",
    "wrong_language",
]

# The languages' names the prompts give the model (any other code is named by itself).
LANGUAGE_NAMES: Mapping[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "sv": "Swedish",
    "da": "Danish",
    "ja": "Japanese",
    "zh": "Chinese",
}

WRONG_LANGUAGE_CONFIDENCE = 0.8
"""An answer is in the wrong language when the detector names another one with at least this
probability (over the candidates ``LANGUAGE_NAMES`` plus the languages asked for): "how do I persist
a collection" reads 0.91 English, "dog age by teeth" 0.86, "n_results default" is undetermined."""

ASKED_LANGUAGE_FLOOR = 0.1
"""An answer asked in another language than the prompts' (English) is in the wrong language, too, when
that language has less than this probability (over the same candidates): a model that drifts writes
the prompts' language, and a short English keyword query reads as no language confidently. An answer
asked in English that drifts is in a language the detector sees confidently, while short English
keyword queries often read as French or Swedish at 0.3-0.4: no floor rejects them. Measured on the
real queries of the shared reference data (English only) by benchmarks/study_languages.py."""

PROMPT_LANGUAGE = "en"
"""The language the built-in prompts are written in: what a model drifts into."""

# Tokens that are identifiers or code, not words of a language: a backticked span; a token holding a
# digit or one of _ / \ = < > { } [ ] # @ $ |; a dot or colon between word characters (collection.add,
# file.py, std::vec) or a call's bracket (add()); a camelCase word; an acronym in capitals; an option
# (--max-attempts, -k). A word that ends a sentence ("disk.", "Hinweis:") is a word.
_CODE_TOKEN = re.compile(
    r"`[^`]*`|\S*[_/\\=<>{}\[\]#@$|]\S*|\S*\d\S*|\S*\w[.:]+\w\S*|\S*\w\(\S*"
    r"|\b[a-z]+[A-Z]\w*|\b[A-Z]{2,}s?\b|(?<!\S)--?[A-Za-z]\S*"
)

_CHUNK_CONFIDENCE = 0.5


@functools.cache
def known_language_codes() -> frozenset[str]:
    """The ISO 639-1 codes the detector knows (read from the detector's own model: no second load)."""
    return known_languages()


def check_language_codes(codes: Iterable[str]) -> None:
    """Refuse a language code the detector does not know (one line naming it)."""
    known = known_language_codes()
    for code in codes:
        if code not in known:
            raise InputError(
                f"unknown language code {code!r}",
                hint="use ISO 639-1 codes such as en, de, fr ("
                + ", ".join(sorted(LANGUAGE_NAMES))
                + ", ...)",
            )


def detect_chunk_language(chunk: Chunk) -> str | None:
    """The chunk's language: its metadata's, else the detector's reading of its prose (None: unsure)."""
    named = chunk_language(chunk)
    if named is not None:
        return named
    return read_chunk_language(chunk)


def read_chunk_language(chunk: Chunk) -> str | None:
    """The detector's reading of the chunk's prose, whatever its metadata says (None: unsure)."""
    text = prose_text(chunk.text) or chunk.text
    language, _ = LanguageDetector(min_confidence=_CHUNK_CONFIDENCE).detect(text)
    return language


def language_text(text: str) -> str:
    """``text`` without its identifiers and code (see ``_CODE_TOKEN``): what the detector reads."""
    return " ".join(_CODE_TOKEN.sub(" ", text).split())


def wrong_language(question: str, expected: str, others: Iterable[str] = ()) -> str | None:
    """The language ``question`` reads as when it is not written in ``expected``, else None.

    Wrong: another language has at least ``WRONG_LANGUAGE_CONFIDENCE``, or ``expected`` (unless it is
    the prompts' language) has less than ``ASKED_LANGUAGE_FLOOR`` (the likeliest language is returned),
    over the candidates
    ``LANGUAGE_NAMES``, ``others`` and ``expected``, on ``language_text(question)``; None too when no
    word is left once identifiers are taken out.
    """
    candidates = tuple(sorted({*LANGUAGE_NAMES, *others, expected} & known_language_codes()))
    if expected not in candidates:
        return None  # a language the detector does not know (metadata): nothing to check against
    probabilities = LanguageDetector(candidates).probabilities(language_text(question))
    if not probabilities:
        return None  # identifiers alone: no language
    likeliest = max(probabilities, key=probabilities.__getitem__)
    if likeliest == expected:
        return None
    if probabilities[likeliest] >= WRONG_LANGUAGE_CONFIDENCE:
        return likeliest
    if expected != PROMPT_LANGUAGE and probabilities[expected] < ASKED_LANGUAGE_FLOOR:
        return likeliest
    return None

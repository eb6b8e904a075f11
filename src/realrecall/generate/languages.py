"""The language of each question: the chunk's own by default, checked on every answer.

- A chunk's language is its metadata's ``language`` (or ``lang``), else what the project's detector
  (``realrecall.labels.language``, py3langid) reads in its prose (code and markup left out).
- Without ``--languages`` every question is asked in its chunk's language. ``--languages de,en``
  keeps the chunks written in those languages (the others are skipped, counted in the summary);
  ``--cross-language`` asks questions in the languages drawn from the weights whatever the chunk's
  language (a German question on an English page, on purpose).
- Every model answer is read by the detector; one that is confidently in another language than the
  one asked for (``WRONG_LANGUAGE_CONFIDENCE``) is rejected as ``wrong_language`` and asked again
  with feedback, like any other invalid answer. Short keyword queries ("chroma docker port") are
  often undetermined: they are kept, since an identifier has no language.
- Codes are ISO 639-1 codes the detector knows; any other (``klingon``) is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from realrecall.corpus import Chunk
from realrecall.errors import InputError
from realrecall.generate.planner import chunk_language
from realrecall.generate.screening import prose_text
from realrecall.labels.language import LanguageDetector, known_languages

__all__ = [
    "LANGUAGE_NAMES",
    "WRONG_LANGUAGE_CONFIDENCE",
    "check_language_codes",
    "detect_chunk_language",
    "known_language_codes",
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


def wrong_language(question: str, expected: str, others: Iterable[str] = ()) -> str | None:
    """The language ``question`` is confidently written in when it is not ``expected``, else None."""
    candidates = tuple(sorted({*LANGUAGE_NAMES, *others, expected} & known_language_codes()))
    if expected not in candidates:
        return None  # a language the detector does not know (metadata): nothing to check against
    language, _ = LanguageDetector(candidates, WRONG_LANGUAGE_CONFIDENCE).detect(question)
    return language if language is not None and language != expected else None

"""Language of a question, detected offline with py3langid (a naive Bayes model shipped in the package).

Detection is deterministic. Short questions are where any detector guesses: restricting the candidates
to the languages the corpus holds (``languages=("en", "de")``) makes it reliable, and a guess below
``min_confidence`` is reported as undetermined rather than written down as fact.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from realrecall.errors import InputError

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

__all__ = ["LanguageDetector", "known_languages"]


@dataclass(frozen=True)
class LanguageDetector:
    """ISO 639-1 codes for text; ``None`` when the best guess is below ``min_confidence``."""

    languages: tuple[str, ...] | None = None
    min_confidence: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "_identifier", _identifier(self.languages))

    def detect(self, text: str) -> tuple[str | None, float]:
        """``(language, probability)`` of the best guess; language ``None`` if not confident enough."""
        if not any(ch.isalpha() for ch in text):
            return None, 0.0
        language, probability = self._identifier.classify(text)  # type: ignore[attr-defined]
        return (language if probability >= self.min_confidence else None), float(probability)

    def probabilities(self, text: str) -> dict[str, float]:
        """Every candidate language's probability for ``text`` (they add up to 1); {} without a letter."""
        if not any(ch.isalpha() for ch in text):
            return {}
        return {str(code): float(p) for code, p in self._identifier.rank(text)}  # type: ignore[attr-defined]

    @classmethod
    def for_languages(cls, languages: Sequence[str] | None, min_confidence: float = 0.5) -> LanguageDetector:
        return cls(tuple(languages) if languages else None, min_confidence)


def known_languages() -> frozenset[str]:
    """The ISO 639-1 codes the detector knows."""
    return frozenset(str(code) for code in _identifier(None).nb_classes)


@functools.cache
def _identifier(languages: tuple[str, ...] | None) -> LanguageIdentifier:
    # Loading the model takes about half a second, so each candidate set is built once per process.
    # Our own instance, never changed after this: py3langid's module-level identifier is shared and
    # mutable (set_languages), which would leak one caller's restriction into another's. Imported here:
    # py3langid loads numpy, which commands that never detect a language should not pay for.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    if languages is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # A restricted set is a copy of the full model's identifier (sharing its tables), not a second
    # load: reading the model file is what takes the time.
    identifier: LanguageIdentifier = copy.copy(_identifier(None))
    if languages:
        try:
            identifier.set_languages(list(languages))
        except ValueError as exc:
            raise InputError(
                f"unknown language code in {', '.join(languages)}: {exc}",
                hint="use ISO 639-1 codes such as en, de, fr",
            ) from None
    return identifier

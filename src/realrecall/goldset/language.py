"""Language of a question, detected offline with py3langid (a naive Bayes model shipped in the package).

Detection is deterministic. Short questions are where any detector guesses: restricting the candidates
to the languages the corpus holds (``languages=("en", "de")``) makes it reliable, and a guess below
``min_confidence`` is reported as undetermined rather than written down as fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from py3langid.langid import MODEL_FILE, LanguageIdentifier

from realrecall.errors import InputError

__all__ = ["LanguageDetector"]


@dataclass(frozen=True)
class LanguageDetector:
    """ISO 639-1 codes for text; ``None`` when the best guess is below ``min_confidence``."""

    languages: tuple[str, ...] | None = None
    min_confidence: float = 0.5

    def __post_init__(self) -> None:
        # A private identifier per detector: py3langid's module-level one is shared, mutable state.
        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        if self.languages:
            try:
                identifier.set_languages(list(self.languages))
            except ValueError as exc:
                raise InputError(
                    f"unknown language code in {', '.join(self.languages)}: {exc}",
                    hint="use ISO 639-1 codes such as en, de, fr",
                ) from None
        object.__setattr__(self, "_identifier", identifier)

    def detect(self, text: str) -> tuple[str | None, float]:
        """``(language, probability)`` of the best guess; language ``None`` if not confident enough."""
        if not any(ch.isalpha() for ch in text):
            return None, 0.0
        language, probability = self._identifier.classify(text)  # type: ignore[attr-defined]
        return (language if probability >= self.min_confidence else None), float(probability)

    @classmethod
    def for_languages(cls, languages: Sequence[str] | None, min_confidence: float = 0.5) -> LanguageDetector:
        return cls(tuple(languages) if languages else None, min_confidence)

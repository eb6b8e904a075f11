"""Near-duplicate questions: two questions that differ only in wording details count once.

Two questions are near-duplicates when the Jaccard similarity of their content-word stem sets
(``realrecall.text_features.content_stems``: stopwords of the question's language left out, so that
the frame every short question shares, "how do I ... my ...", does not make two different questions
look alike) reaches the threshold (0.8 by default). A question with no content word is compared by all
its stems. The index keeps an inverted list for the first few stems of each question (prefix
filtering, see ``NearDuplicateIndex._prefix``), so a check costs the questions that share one of
those, not the set, nor every question that shares a common word.
"""

from __future__ import annotations

import math
from collections import defaultdict

from realrecall.errors import InputError
from realrecall.text_features import content_stems, stems

__all__ = ["NearDuplicateIndex"]


def _signature(question: str, language: str | None) -> set[str]:
    return content_stems(question, language) or stems(question)


class NearDuplicateIndex:
    """The questions kept so far, answering "is this one a near-duplicate of any of them?"."""

    def __init__(self, threshold: float = 0.8) -> None:
        if not 0.0 < threshold <= 1.0:
            raise InputError(
                f"near-duplicate threshold must be in (0, 1], got {threshold!r}",
                hint="e.g. 0.8 (1.0 flags only questions with the same content words)",
            )
        self.threshold = threshold
        self._stems: list[set[str]] = []
        self._ids: list[str] = []
        self._postings: dict[str, list[int]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self._stems)

    def find(self, question: str, language: str | None = None) -> str | None:
        """The id of a kept question ``question`` nearly duplicates (the earliest kept), or None."""
        candidate = _signature(question, language)
        if not candidate:
            return None
        positions: set[int] = set()
        for stem in self._prefix(candidate):
            positions.update(self._postings.get(stem, ()))
        size = len(candidate)
        for position in sorted(positions):
            stored = self._stems[position]
            common = len(candidate & stored)
            if common / (size + len(stored) - common) >= self.threshold:
                return self._ids[position]
        return None

    def add(self, question_id: str, question: str, language: str | None = None) -> None:
        position = len(self._stems)
        question_stems = _signature(question, language)
        self._stems.append(question_stems)
        self._ids.append(question_id)
        for stem in self._prefix(question_stems):
            self._postings[stem].append(position)

    def _prefix(self, signature: set[str]) -> list[str]:
        """The first stems of ``signature`` in sorted order that any set at Jaccard >= threshold from
        it shares at least one of (prefix filtering): two such sets share at least
        ``ceil(threshold * size)`` stems of each one's ``size``, so they cannot miss the first
        ``size - ceil(threshold * size) + 1`` of both. (The small margin only ever lengthens it.)"""
        size = len(signature)
        length = size - math.ceil(self.threshold * size - 1e-9) + 1
        return sorted(signature)[:length]

"""Near-duplicate questions: two questions that differ only in wording details count once.

Two questions are near-duplicates when the Jaccard similarity of their word-stem sets (see
``overlap.stems``, stopwords included, so "how do I" and "what is" still differ) reaches the threshold
(0.8 by default). The index keeps an inverted list per stem, so a check costs the size of the
questions sharing a stem, not of the whole set.
"""

from __future__ import annotations

from collections import defaultdict

from realrecall.generate.overlap import stems

__all__ = ["NearDuplicateIndex", "jaccard"]


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicateIndex:
    """The questions kept so far, answering "is this one a near-duplicate of any of them?"."""

    def __init__(self, threshold: float = 0.8) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError("threshold must be in (0, 1]")
        self.threshold = threshold
        self._stems: list[set[str]] = []
        self._ids: list[str] = []
        self._postings: dict[str, list[int]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self._stems)

    def find(self, question: str) -> str | None:
        """The id of a kept question ``question`` nearly duplicates, or None."""
        candidate = stems(question)
        seen: set[int] = set()
        for stem in candidate:
            for position in self._postings.get(stem, ()):
                if position in seen:
                    continue
                seen.add(position)
                if jaccard(candidate, self._stems[position]) >= self.threshold:
                    return self._ids[position]
        if not candidate:
            # A question with no word at all duplicates any other such question.
            for position, kept in enumerate(self._stems):
                if not kept:
                    return self._ids[position]
        return None

    def add(self, question_id: str, question: str) -> None:
        position = len(self._stems)
        question_stems = stems(question)
        self._stems.append(question_stems)
        self._ids.append(question_id)
        for stem in question_stems:
            self._postings[stem].append(position)

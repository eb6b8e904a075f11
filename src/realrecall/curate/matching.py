"""Finding the corpus passage a row names: by id, by URL (chunk metadata ``url``) or by title.

URLs and titles are compared in normal form (see ``normalise``). A URL or title often names a page
that was split into several chunks; what to do then is the caller's choice (``ambiguous``): report
the row, take every chunk, or take the first in corpus order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from realrecall.corpus import Chunk, Corpus
from realrecall.curate.normalise import normalise_title, normalise_url

__all__ = ["AMBIGUOUS", "MATCH_BY", "Match", "PassageMatcher"]

MATCH_BY = ("id", "url", "title")
AMBIGUOUS = ("report", "all", "first")
MatchBy = Literal["id", "url", "title"]
Ambiguous = Literal["report", "all", "first"]


@dataclass(frozen=True)
class Match:
    """The passage ids a value resolved to, or why it resolved to none."""

    ids: tuple[str, ...]
    reason: str | None = None


class PassageMatcher:
    """Resolves the values of one passage column against a corpus (built once, queried per row)."""

    def __init__(self, corpus: Corpus | None, by: MatchBy, ambiguous: Ambiguous = "report") -> None:
        self.corpus = corpus
        self.by = by
        self.ambiguous = ambiguous
        self._index: dict[str, list[str]] = {}
        if corpus is not None and by != "id":
            key = _url_key if by == "url" else _title_key
            for chunk in corpus:
                for value in key(chunk):
                    self._index.setdefault(value, []).append(chunk.id)

    def resolve(self, value: str) -> Match:
        value = value.strip()
        if not value:
            return Match((), "empty passage cell")
        if self.by == "id":
            if self.corpus is not None and value not in self.corpus:
                return Match((), f"no chunk with id {value!r}")
            return Match((value,))
        normal = normalise_url(value) if self.by == "url" else normalise_title(value)
        found = self._index.get(normal)
        if not found and self.by == "url" and "#" in normal:
            # A link to a section of a page whose chunks carry only the page URL.
            found = self._index.get(normal.split("#", 1)[0])
        if not found:
            return Match((), f"no chunk with {self.by} {value!r}")
        unique = tuple(dict.fromkeys(found))
        if len(unique) == 1 or self.ambiguous == "all":
            return Match(unique)
        if self.ambiguous == "first":
            return Match(unique[:1])
        shown = ", ".join(unique[:3]) + (", ..." if len(unique) > 3 else "")
        return Match((), f"{self.by} {value!r} matches {len(unique)} chunks ({shown})")


def _url_key(chunk: Chunk) -> list[str]:
    url = chunk.metadata.get("url")
    return [normalise_url(url)] if isinstance(url, str) and url.strip() else []


def _title_key(chunk: Chunk) -> list[str]:
    titles = [chunk.title, chunk.metadata.get("title")]
    return list(dict.fromkeys(normalise_title(t) for t in titles if isinstance(t, str) and t.strip()))

"""The corpus: the passages (chunks) a retriever searches, each with a stable id.

Formats, chosen by what the file holds (read by ``realrecall.formats.jsonl``):
- JSON Lines, one chunk per line: ``{"id", "text", "title"?, "metadata"?}``; BEIR's ``corpus.jsonl``
  (``"_id"`` instead of ``"id"``) reads the same way.
- A JSON object ``{"<id>": "<text>", ...}`` (the shape of many chunk dumps, e.g. Chroma's examples).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

from realrecall.bulk import bulk_step
from realrecall.collection import IdIndexed
from realrecall.formats import jsonl
from realrecall.formats.ids import parse_id

# parse_id is the id rule of every file format; re-exported here, where other modules import it from.
__all__ = ["Chunk", "Corpus", "load_corpus", "parse_id"]


@dataclass(frozen=True)
class Chunk:
    """One passage. ``metadata`` is kept as given (document, section, language, ...).

    ``doc_id``, ``start``, ``end``: the document the chunk was cut from and the chunk's character
    offsets in that document's text (``end`` exclusive), when the corpus says so; evidence-anchored
    gold (``realrecall.resolution``) uses them.
    """

    id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None

    @property
    def content_hash(self) -> str:
        """SHA-256 of title and text: what decides whether a chunk changed between two runs."""
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()

    def searchable_text(self) -> str:
        """Title and text together, as retrievers index them (BEIR's convention)."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class Corpus(IdIndexed[Chunk]):
    """An ordered, id-unique collection of chunks (``len``, ``in``, ``[id]``, ``get``, ``ids``)."""

    chunks: tuple[Chunk, ...]
    path: str | None = None

    def __post_init__(self) -> None:
        self._index_items(self.chunks, _CHUNK_ID, what="chunk id", path=self.path, hint="make ids unique")


_CHUNK_ID: Callable[[Chunk], str] = attrgetter("id")


@bulk_step
def load_corpus(path: str | Path) -> Corpus:
    """Read a corpus file (JSON Lines or a JSON ``{id: text}`` object); errors name file and line."""
    p = Path(path)
    if p.is_dir() and (p / "corpus.jsonl").is_file():
        p = p / "corpus.jsonl"
    records = jsonl.read_corpus_mapping(p) if p.suffix == ".json" else jsonl.read_corpus(p)
    return Corpus(tuple(Chunk(**record) for record in records), path=str(p))

"""The corpus: the passages (chunks) a retriever searches, each with a stable id.

Formats, chosen by what the file holds (read by ``realrecall.formats.jsonl``):
- JSON Lines, one chunk per line: ``{"id", "text", "title"?, "metadata"?}``; BEIR's ``corpus.jsonl``
  (``"_id"`` instead of ``"id"``) reads the same way.
- A JSON object ``{"<id>": "<text>", ...}`` (the shape of many chunk dumps, e.g. Chroma's examples).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.formats import jsonl
from realrecall.formats.ids import parse_id

# parse_id is the id rule of every file format; re-exported here, where other modules import it from.
__all__ = ["Chunk", "Corpus", "load_corpus", "parse_id"]


@dataclass(frozen=True)
class Chunk:
    """One passage. ``metadata`` is kept as given (document, section, language, ...)."""

    id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """SHA-256 of title and text: what decides whether a chunk changed between two runs."""
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()

    def searchable_text(self) -> str:
        """Title and text together, as retrievers index them (BEIR's convention)."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class Corpus:
    """An ordered, id-unique collection of chunks."""

    chunks: tuple[Chunk, ...]
    path: str | None = None
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, chunk in enumerate(self.chunks):
            if chunk.id in index:
                raise InputError(f"duplicate chunk id {chunk.id!r}", path=self.path, hint="make ids unique")
            index[chunk.id] = position
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.chunks)

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._index

    def __getitem__(self, chunk_id: str) -> Chunk:
        return self.chunks[self._index[chunk_id]]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(chunk.id for chunk in self.chunks)

    def get(self, chunk_id: str) -> Chunk | None:
        position = self._index.get(chunk_id)
        return None if position is None else self.chunks[position]


def load_corpus(path: str | Path) -> Corpus:
    """Read a corpus file (JSON Lines or a JSON ``{id: text}`` object); errors name file and line."""
    p = Path(path)
    if p.is_dir() and (p / "corpus.jsonl").is_file():
        p = p / "corpus.jsonl"
    records = jsonl.read_corpus_mapping(p) if p.suffix == ".json" else jsonl.read_corpus(p)
    return Corpus(tuple(Chunk(**record) for record in records), path=str(p))

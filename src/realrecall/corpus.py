"""The corpus: the passages (chunks) a retriever searches, each with a stable id.

Formats, chosen by what the file holds:
- JSON Lines, one chunk per line: ``{"id", "text", "title"?, "metadata"?}``; BEIR's ``corpus.jsonl``
  (``"_id"`` instead of ``"id"``) reads the same way.
- A JSON object ``{"<id>": "<text>", ...}`` (the shape of many chunk dumps, e.g. Chroma's examples).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import iter_jsonl

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
    if p.suffix == ".json":
        return _load_json_mapping(p)
    chunks: list[Chunk] = []
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(p, what="chunk"):
        chunk = _chunk_from_record(record, p, number)
        if chunk.id in first_line:
            raise InputError(
                f"duplicate chunk id {chunk.id!r} (first seen on line {first_line[chunk.id]})",
                path=p,
                line=number,
                hint="make chunk ids unique",
            )
        first_line[chunk.id] = number
        chunks.append(chunk)
    return Corpus(tuple(chunks), path=str(p))


def parse_id(
    value: Any,
    what: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    hint: str = 'write ids as non-empty strings, e.g. "doc1-chunk3"',
) -> str:
    """An id as text: a string with something besides spaces in it, or an integer (``7`` -> ``"7"``).

    An empty id (``""``, ``"  "``) matches nothing a user can name and a float id (``1.5``, ``1e3``)
    has no single text form, so both are refused naming the file, the line and the fix.
    """
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    got = "an empty string" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
    raise InputError(
        f"{what} must be a non-empty string, got {got}",
        path=path,
        line=line,
        hint=hint,
    )


def _chunk_from_record(record: Mapping[str, Any], path: Path, line: int) -> Chunk:
    key = "id" if "id" in record else "_id"
    if record.get(key) is None:
        raise InputError('chunk has no "id" (or BEIR "_id")', path=path, line=line, hint='add an "id" field')
    chunk_id = parse_id(record[key], f'"{key}"', path=path, line=line)
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError('chunk has no "text" string', path=path, line=line, hint='add a "text" field')
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise InputError('"title" must be a string', path=path, line=line)
    metadata = record.get("metadata")
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, dict):
        raise InputError('"metadata" must be an object', path=path, line=line)
    return Chunk(id=chunk_id, text=text, title=title, metadata=metadata)


def _load_json_mapping(path: Path) -> Corpus:
    from realrecall.files import read_text_lines

    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        # Pairs, not a dict: json.loads keeps the last of two equal keys, silently dropping a chunk.
        value = json.loads(text, object_pairs_hook=list)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    if not isinstance(value, list) or not value or not all(isinstance(pair, tuple) for pair in value):
        raise InputError(
            "expected a non-empty JSON object {id: text}",
            path=path,
            hint="or give a JSON Lines corpus with one chunk per line",
        )
    chunks = []
    seen: set[str] = set()
    for raw_id, chunk_text in value:
        chunk_id = parse_id(raw_id, "chunk id", path=path)
        if chunk_id in seen:
            raise InputError(f"duplicate chunk id {chunk_id!r}", path=path, hint="make chunk ids unique")
        seen.add(chunk_id)
        if not isinstance(chunk_text, str):
            raise InputError(
                f"text of chunk {chunk_id!r} is not a string",
                path=path,
                hint='write the corpus as {"<id>": "<text>", ...}',
            )
        chunks.append(Chunk(id=chunk_id, text=chunk_text))
    return Corpus(tuple(chunks), path=str(path))

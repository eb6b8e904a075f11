"""Evidence-anchored gold: the text (or span) of a document that answers a query, not a chunk id.

A gold query may name, beside or instead of chunk ids, ``"evidence": [{"doc_id": "D", "text": "...",
"grade": 2, "start": 10, "end": 52, "chunk_id": "c7"}]``. Chunk ids die with the chunking; the evidence
survives it: ``realrecall.resolution.resolve_gold`` finds, in whatever chunking is scored, the chunks
that hold it.

This module imports nothing from the rest of the package except errors and grades: the file-format
readers and the gold-query type both use it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from realrecall.errors import InputError
from realrecall.grades import MAX_GRADE, check_grade

if TYPE_CHECKING:
    from realrecall.corpus import Chunk

__all__ = ["EVIDENCE_KEYS", "Evidence", "chunk_evidence", "normalise", "normalise_with_offsets"]

EVIDENCE_KEYS = ("doc_id", "text", "grade", "start", "end", "chunk_id")
"""The keys of one evidence object, in the order they are written."""

_HINT = 'evidence is {"doc_id": "D", "text": "the sentence(s) that answer", "grade"?: 1, "start"?, "end"?}'


@dataclass(frozen=True)
class Evidence:
    """The part of document ``doc_id`` that answers a query.

    ``text``: the answering text as it reads in the document (compared after :func:`normalise`);
    ``start``/``end``: its character offsets in the document's text, when known (``end`` exclusive);
    at least one of the two is given. ``grade``: the grade the chunks holding it get. ``chunk_id``: the
    chunk it was taken from, when known: a corpus that still holds that chunk needs no resolution.
    """

    doc_id: str
    text: str | None = None
    grade: int = 1
    start: int | None = None
    end: int | None = None
    chunk_id: str | None = None

    def __post_init__(self) -> None:
        # Readers check with the file and line; this catches evidence built in Python.
        problem = _problem(self.doc_id, self.text, self.grade, self.start, self.end)
        if problem is not None:
            raise InputError(f"evidence {problem}", hint=_HINT)

    @property
    def span(self) -> tuple[int, int] | None:
        """``(start, end)`` in the document, when both are known."""
        if self.start is None or self.end is None:
            return None
        return self.start, self.end

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this evidence (keys left at their default are not written)."""
        record: dict[str, Any] = {"doc_id": self.doc_id}
        if self.text is not None:
            record["text"] = self.text
        record["grade"] = self.grade
        for name in ("start", "end", "chunk_id"):
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        return record

    @classmethod
    def from_dict(cls, value: Any, *, path: str | Path | None = None, line: int | None = None) -> Evidence:
        """One evidence object of a gold-set record; a one-line InputError naming the key otherwise."""
        reader = _Reader(path, line)
        if not isinstance(value, Mapping):
            reader.fail(f"must be an object, got {_shown(value)}")
        unknown = [key for key in value if key not in EVIDENCE_KEYS]
        if unknown:
            reader.fail(f"has an unknown key {unknown[0]!r} (known: {', '.join(EVIDENCE_KEYS)})")
        doc_id = value.get("doc_id")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)  # numeric document ids (SciFact's, PubMed's) are written as numbers
        if not isinstance(doc_id, str) or not doc_id.strip():
            reader.fail(f'needs a "doc_id" string, got {_shown(doc_id)}')
        chunk_id = value.get("chunk_id")
        if chunk_id is not None and (not isinstance(chunk_id, str) or not chunk_id.strip()):
            reader.fail(f'"chunk_id" must be a non-empty string, got {_shown(chunk_id)}')
        text = value.get("text")
        if text is not None and not isinstance(text, str):
            reader.fail(f'"text" must be a string, got {_shown(text)}')
        grade = check_grade(value.get("grade", 1), f"evidence in {doc_id}", path=path, line=line)
        start, end = (reader.offset(value, name) for name in ("start", "end"))
        problem = _problem(doc_id, text, grade, start, end)
        if problem is not None:
            reader.fail(problem)
        return cls(doc_id=doc_id, text=text, grade=grade, start=start, end=end, chunk_id=chunk_id)


def chunk_evidence(chunk: Chunk, grade: int = 1) -> Evidence | None:
    """A whole chunk as evidence: its document (``doc_id``, or the chunk id when the corpus names none:
    resolution takes such a chunk as a document of its own), text, offsets when known, and id.

    What generate, ``gold import``, ``gold add`` and ``gold expand`` record for a chunk they anchor, so
    the gold survives re-chunking. None for a chunk without text (nothing to find it by).
    """
    if not normalise(chunk.text):
        return None
    start, end = chunk.start, chunk.end
    if start is not None and end is None:
        end = start + len(chunk.text)  # the corpus reader's default, for a chunk built in Python
    if start is None or end is None or end <= start:
        start = end = None
    return Evidence(chunk.doc_id or chunk.id, chunk.text, grade, start, end, chunk.id)


def _problem(doc_id: Any, text: Any, grade: Any, start: Any, end: Any) -> str | None:
    """What is wrong with these fields of an evidence object (None when nothing is)."""
    if not isinstance(doc_id, str) or not doc_id.strip():
        return f"needs a non-empty doc_id, got {doc_id!r}"
    if type(grade) is not int or not -MAX_GRADE <= grade <= MAX_GRADE:
        return f"grade must be an integer, got {grade!r}"
    for name, value in (("start", start), ("end", end)):
        if value is not None and (type(value) is not int or value < 0):
            return f'"{name}" must be a whole number >= 0, got {value!r}'
    if (start is None) != (end is None):
        return 'gives only one of "start" and "end": give both offsets, or neither'
    if start is not None and end is not None and end <= start:
        return f'"end" ({end}) must be after "start" ({start})'
    if text is not None and (not isinstance(text, str) or not normalise(text)):
        return "text is empty"
    if text is None and start is None:
        return 'gives neither "text" nor "start"/"end": nothing to find it by'
    return None


class _Reader:
    def __init__(self, path: str | Path | None, line: int | None) -> None:
        self.path, self.line = path, line

    def fail(self, what: str) -> NoReturn:
        raise InputError(f"evidence {what}", path=self.path, line=self.line, hint=_HINT)

    def offset(self, value: Mapping[str, Any], name: str) -> int | None:
        raw = value.get(name)
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int) or raw < 0):
            self.fail(f'"{name}" must be a whole number >= 0 (a character offset), got {_shown(raw)}')
        return raw


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:60]


# -- normalisation ----------------------------------------------------------------------------------

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` as evidence is compared: Unicode NFKC, whitespace runs as one space, no edge spaces."""
    if text.isascii():  # the common case, fast: NFKC leaves ASCII as it is
        return _SPACE.sub(" ", text).strip()
    return normalise_with_offsets(text)[0]


def normalise_with_offsets(text: str) -> tuple[str, list[int]]:
    """:func:`normalise` and, for each character of the result, the offset in ``text`` it came from.

    NFKC is applied per cluster (a character and the combining marks after it), so every output
    character maps back to the cluster it came from; for text met in practice this equals NFKC of
    the whole string.
    """
    pieces: list[str] = []
    origins: list[int] = []
    space_at: int | None = None  # where the whitespace run before the next character began
    for start, cluster in _clusters(text):
        for char in unicodedata.normalize("NFKC", cluster):
            if char.isspace():
                space_at = start if space_at is None else space_at
                continue
            if space_at is not None and pieces:
                pieces.append(" ")
                origins.append(space_at)
            space_at = None
            pieces.append(char)
            origins.append(start)
    return "".join(pieces), origins


def _clusters(text: str) -> list[tuple[int, str]]:
    """``text`` cut before every character that starts a new cluster (combining class 0)."""
    if text.isascii():  # the common case, and NFKC leaves ASCII as it is
        return list(enumerate(text))
    clusters: list[tuple[int, str]] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or unicodedata.combining(text[i]) == 0:
            clusters.append((start, text[start:i]))
            start = i
    return clusters

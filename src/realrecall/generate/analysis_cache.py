"""What a run reads off texts before it asks anything, kept beside the output so a rerun reads it back.

Before a slot can be planned every chunk is screened (``generate.screening``) and its language read
(``generate.languages``), and before a question written earlier is kept it is checked for the language
it was asked in. Each is a pure function of a text, and together they were most of a rerun's time (the
language model's load alone nearly half): a nightly job over an unchanged corpus paid them every
night. ``synthetic.analysis.json`` keeps them by the SHA-256 of what was read (a chunk's content hash;
a question with the language asked for and the others allowed), under ``VERSION``: a change of the
rules or of the detector's threshold changes ``VERSION``, and everything is read again once.

A chunk whose metadata names its language needs no detector, so none is kept for it. The file is
rewritten (atomically) only when a run read something new, and keeps the entries other runs (another
``--shard``) read; with ``--prune`` it keeps only what the run read itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from realrecall.corpus import Chunk
from realrecall.files import atomic_write_text

__all__ = ["VERSION", "AnalysisCache"]

VERSION = "2"
"""Changes whenever a verdict kept here would change: the screen's rules, the language detection of
chunks, the language check of questions."""

_UNSET = object()


class AnalysisCache:
    """Screen verdicts and languages by chunk hash, and language checks by question (see the module doc)."""

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self._chunks: dict[str, dict[str, Any]] = dict((entries or {}).get("chunks", {}))
        self._questions: dict[str, str | None] = dict((entries or {}).get("questions", {}))
        self._new = False

    @classmethod
    def load(cls, path: Path) -> AnalysisCache:
        """The cache in ``path``; empty when there is none, it cannot be read, or it is of another version."""
        try:
            record = json.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return cls()
        if not isinstance(record, dict) or record.get("version") != VERSION:
            return cls()
        chunks, questions = record.get("chunks"), record.get("questions")
        return cls(
            {
                "chunks": {k: v for k, v in chunks.items() if isinstance(v, dict)}
                if isinstance(chunks, dict)
                else {},
                "questions": {k: v for k, v in questions.items() if v is None or isinstance(v, str)}
                if isinstance(questions, dict)
                else {},
            }
        )

    @property
    def changed(self) -> bool:
        """Whether anything was read that the file does not hold yet."""
        return self._new

    def chunk(self, chunk: Chunk, name: str, read: Callable[[Chunk], str | None]) -> str | None:
        """The ``name`` fact of ``chunk`` (``screen`` or ``language``): kept, else ``read(chunk)``."""
        facts = self._chunks.setdefault(chunk.content_hash, {})
        value = facts.get(name, _UNSET)
        if value is _UNSET or not (value is None or isinstance(value, str)):
            value = read(chunk)
            facts[name] = value
            self._new = True
        return value

    def question(
        self, question: str, language: str, others: Iterable[str], check: Callable[[], str | None]
    ) -> str | None:
        """The language check of ``question`` asked in ``language`` (``others`` allowed): kept, else run."""
        key = hashlib.sha256(
            "\x1f".join([language, ",".join(sorted(set(others))), question]).encode("utf-8")
        ).hexdigest()
        if key in self._questions:
            return self._questions[key]
        verdict = check()
        self._questions[key] = verdict
        self._new = True
        return verdict

    def save(self, path: Path, *, prune: bool = False) -> None:
        """Write the cache to ``path`` (atomically), with what the file holds that this run did not
        read unless ``prune``."""
        on_disk = AnalysisCache() if prune else AnalysisCache.load(path)
        chunks = {**on_disk._chunks, **self._chunks}
        questions = {**on_disk._questions, **self._questions}
        record = {"version": VERSION, "chunks": chunks, "questions": questions}
        atomic_write_text(path, json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._new = False

"""How a synthetic question was made: the ``provenance`` object of a gold-set record.

``realrecall generate`` writes one on every record; the gold readers parse it into :class:`Provenance`
(``GoldQuery.provenance``) and the gold writer writes it back with the same keys, in the same order and
with the same values, so synthetic files, generation caches and ``evaluate.results.generator_of`` read
the same JSON as before. A key this version does not know is kept in ``extra`` and written back; a key
an older version did not write reads as None (written back as null).

This module imports nothing from the rest of the package except errors: the file-format readers and the
gold-query type both use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from realrecall.errors import InputError

__all__ = ["PromptRef", "Provenance", "TokenUsage"]

_HINT = '"provenance" is what `realrecall generate` records; fix the value or remove the key'


class _Reader:
    """Reads the keys of one provenance object, raising a one-line InputError naming the key."""

    def __init__(self, record: Any, where: str, path: str | Path | None, line: int | None) -> None:
        self.where, self.path, self.line = where, path, line
        if not isinstance(record, Mapping):
            self.fail(f"must be an object, got {_shown(record)}")
        self.record: Mapping[str, Any] = record

    def fail(self, what: str, key: str | None = None) -> NoReturn:
        name = f"{self.where}.{key}" if key else self.where
        raise InputError(f'"{name}" {what}', path=self.path, line=self.line, hint=_HINT)

    def text(self, key: str) -> str | None:
        value = self.record.get(key)
        if value is not None and not isinstance(value, str):
            self.fail(f"must be a string, got {_shown(value)}", key)
        return value

    def whole(self, key: str) -> int | None:
        value = self.record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(f"must be a whole number, got {_shown(value)}", key)
        return value

    def number(self, key: str) -> float | None:
        """The number as written (an int stays an int, so it is written back byte for byte)."""
        value = self.record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            self.fail(f"must be a number, got {_shown(value)}", key)
        return value

    def only(self, keys: tuple[str, ...]) -> None:
        """Nested objects are small and fixed: an unknown key there is refused rather than dropped."""
        unknown = [key for key in self.record if key not in keys]
        if unknown:
            self.fail(f"has an unknown key {unknown[0]!r} (known: {', '.join(keys)})")


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:60]


@dataclass(frozen=True)
class PromptRef:
    """The prompt template that wrote the question: its name and the SHA-256 of its text."""

    name: str | None
    sha256: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, record: Any, *, path: str | Path | None = None, line: int | None = None) -> PromptRef:
        reader = _Reader(record, "provenance.prompt", path, line)
        reader.only(("name", "sha256"))
        return cls(name=reader.text("name"), sha256=reader.text("sha256"))


@dataclass(frozen=True)
class TokenUsage:
    """Tokens spent on the question, every attempt and judge verdict included."""

    prompt_tokens: int | None
    completion_tokens: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}

    @classmethod
    def from_dict(cls, record: Any, *, path: str | Path | None = None, line: int | None = None) -> TokenUsage:
        reader = _Reader(record, "provenance.usage", path, line)
        reader.only(("prompt_tokens", "completion_tokens"))
        return cls(
            prompt_tokens=reader.whole("prompt_tokens"), completion_tokens=reader.whole("completion_tokens")
        )


# The keys in the order generate writes them (the order ``to_dict`` keeps).
_KEYS = (
    "generator", "backend", "model", "prompt", "temperature", "seed", "request_seed", "persona",
    "chunk_hash", "question_index", "attempt", "usage", "created", "overlap", "style_example_ids",
    "judge", "slot_key",
)  # fmt: skip


@dataclass(frozen=True)
class Provenance:
    """How one synthetic question was made.

    ``generator``: the realrecall version that wrote it; ``backend``, ``model``, ``prompt`` and
    ``temperature``: the generator (``evaluate.results.generator_of`` compares these); ``seed`` and
    ``request_seed``: the run's and the request's seeds; ``persona``; ``chunk_hash``: the chunk's
    content hash when it was written; ``question_index`` and ``attempt``: which question of the chunk
    and which try; ``usage``; ``created`` (ISO time); ``overlap``: lexical overlap with the chunk;
    ``style_example_ids``: the real questions shown as style examples; ``judge``: the answerability
    verdict and who gave it (None when not judged); ``slot_key``: the generation cache key.
    ``extra``: keys this version does not know, kept as they were.
    """

    generator: str | None = None
    backend: str | None = None
    model: str | None = None
    prompt: PromptRef | None = None
    temperature: float | None = None
    seed: int | None = None
    request_seed: int | None = None
    persona: str | None = None
    chunk_hash: str | None = None
    question_index: int | None = None
    attempt: int | None = None
    usage: TokenUsage | None = None
    created: str | None = None
    overlap: float | None = None
    style_example_ids: tuple[str, ...] = ()
    judge: Mapping[str, Any] | None = None
    slot_key: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the order generate writes them, then the unknown ones."""
        return {
            "generator": self.generator,
            "backend": self.backend,
            "model": self.model,
            "prompt": None if self.prompt is None else self.prompt.to_dict(),
            "temperature": self.temperature,
            "seed": self.seed,
            "request_seed": self.request_seed,
            "persona": self.persona,
            "chunk_hash": self.chunk_hash,
            "question_index": self.question_index,
            "attempt": self.attempt,
            "usage": None if self.usage is None else self.usage.to_dict(),
            "created": self.created,
            "overlap": self.overlap,
            "style_example_ids": list(self.style_example_ids),
            "judge": None if self.judge is None else dict(self.judge),
            "slot_key": self.slot_key,
            **self.extra,
        }

    @classmethod
    def from_dict(cls, record: Any, *, path: str | Path | None = None, line: int | None = None) -> Provenance:
        """A provenance object read back, each known key checked (an InputError names the key and line)."""
        reader = _Reader(record, "provenance", path, line)
        prompt, usage, judge = (reader.record.get(key) for key in ("prompt", "usage", "judge"))
        if judge is not None and not isinstance(judge, Mapping):
            reader.fail(f"must be an object or null, got {_shown(judge)}", "judge")
        return cls(
            generator=reader.text("generator"),
            backend=reader.text("backend"),
            model=reader.text("model"),
            prompt=None if prompt is None else PromptRef.from_dict(prompt, path=path, line=line),
            temperature=reader.number("temperature"),
            seed=reader.whole("seed"),
            request_seed=reader.whole("request_seed"),
            persona=reader.text("persona"),
            chunk_hash=reader.text("chunk_hash"),
            question_index=reader.whole("question_index"),
            attempt=reader.whole("attempt"),
            usage=None if usage is None else TokenUsage.from_dict(usage, path=path, line=line),
            created=reader.text("created"),
            overlap=reader.number("overlap"),
            style_example_ids=_ids(reader),
            judge=judge,
            slot_key=reader.text("slot_key"),
            extra={key: value for key, value in reader.record.items() if key not in _KEYS},
        )


def _ids(reader: _Reader) -> tuple[str, ...]:
    value = reader.record.get("style_example_ids")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        reader.fail(f"must be a list of query ids, got {_shown(value)}", "style_example_ids")
    return tuple(value)

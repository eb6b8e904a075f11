"""The plain records the readers return; ``realrecall.gold`` and ``realrecall.corpus`` build their types
from them, so this package never imports those types (the dependency points one way only). The one
types it uses are ``realrecall.provenance.Provenance`` and ``realrecall.evidence.Evidence``, leaf
modules: the JSON Lines reader parses a record's ``"provenance"`` and ``"evidence"`` there, where it
knows the line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from realrecall.evidence import Evidence
from realrecall.provenance import Provenance

__all__ = ["ORIGINS", "ChunkRecord", "GoldRecord"]

ORIGINS = ("real", "synthetic")
"""Where a gold query came from, as a gold set states it in ``"origin"``."""


class GoldRecord(TypedDict):
    """The fields of one gold query (``realrecall.gold.GoldQuery``'s constructor arguments)."""

    query_id: str
    query: str
    gold: dict[str, int]
    origin: str | None
    type: str | None
    language: str | None
    metadata: Mapping[str, Any]  # read-only: a JSON Lines reader shares its name tables
    provenance: NotRequired[Provenance | None]
    evidence: NotRequired[tuple[Evidence, ...]]


class ChunkRecord(TypedDict):
    """The fields of one passage (``realrecall.corpus.Chunk``'s constructor arguments)."""

    id: str
    text: str
    title: str
    metadata: dict[str, Any]
    doc_id: NotRequired[str | None]
    start: NotRequired[int | None]
    end: NotRequired[int | None]

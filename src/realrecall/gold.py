"""Gold sets: queries paired with the passages that answer them, and where each query came from.

Formats, chosen by the path:
- ``*.jsonl``: one query per line, ``{"query_id", "query", "gold": {"<passage id>": grade, ...}}`` or
  ``"gold_ids": [...]`` (grade 1), ``"origin": "real" | "synthetic"``, ``"type"?``, ``"language"?``;
  every other field is kept in ``metadata`` (provenance, source, ...).
- BEIR: a folder holding ``queries.jsonl`` and ``qrels/test.tsv``, or a ``qrels/<split>.tsv`` file
  whose folder's parent holds ``queries.jsonl``.
- TREC qrels (any other file): ``query_id iteration passage_id grade`` per line, ``#`` comment lines
  allowed, as trec_eval 10 reads them. TREC qrels carry no query text.

Grades are integers; a passage is relevant when its grade reaches the relevance threshold (1 by
default). Judged-but-not-relevant passages (grade 0, or -1 for "pooled, unjudged") are kept, since
nDCG and the reports need every judgment.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import iter_jsonl, read_text_lines, write_jsonl_atomic

__all__ = ["ORIGINS", "GoldQuery", "GoldSet", "load_gold", "write_gold"]

ORIGINS = ("real", "synthetic")
_KNOWN_FIELDS = ("query_id", "query", "gold", "gold_ids", "origin", "type", "language")


@dataclass(frozen=True)
class GoldQuery:
    """One query and its judged passages (``gold``: passage id -> integer grade)."""

    query_id: str
    query: str
    gold: Mapping[str, int]
    origin: str | None = None
    type: str | None = None
    language: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """Ids of the passages whose grade reaches ``threshold``."""
        return frozenset(pid for pid, grade in self.gold.items() if grade >= threshold)

    def field(self, name: str) -> Any:
        """The value of a gold-set field used for slicing: a core field or any metadata key."""
        if name in ("query_id", "query", "origin", "type", "language"):
            return getattr(self, name)
        return self.metadata.get(name)

    def to_record(self) -> dict[str, Any]:
        """The JSON Lines record of this query (the inverse of reading it)."""
        record: dict[str, Any] = {"query_id": self.query_id, "query": self.query, "gold": dict(self.gold)}
        for name in ("origin", "type", "language"):
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        record.update(self.metadata)
        return record


@dataclass(frozen=True)
class GoldSet:
    """An ordered collection of gold queries with unique ids."""

    queries: tuple[GoldQuery, ...]
    name: str = "gold"
    path: str | None = None
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, query in enumerate(self.queries):
            if query.query_id in index:
                raise InputError(f"duplicate query_id {query.query_id!r}", path=self.path)
            index[query.query_id] = position
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[GoldQuery]:
        return iter(self.queries)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._index

    def __getitem__(self, query_id: str) -> GoldQuery:
        return self.queries[self._index[query_id]]

    def qrels(self) -> dict[str, dict[str, int]]:
        """The judgments as trec_eval-style tools take them: ``{query_id: {passage_id: grade}}``."""
        return {query.query_id: dict(query.gold) for query in self.queries}

    def origins(self) -> set[str | None]:
        return {query.origin for query in self.queries}

    def with_origin(self, origin: str) -> GoldSet:
        """The queries of one origin (``real`` or ``synthetic``), as a gold set of their own."""
        return GoldSet(
            tuple(q for q in self.queries if q.origin == origin),
            name=f"{self.name}[{origin}]",
            path=self.path,
        )

    def missing_passages(self, corpus_ids: Iterable[str] | Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(query_id, passage_id)`` pairs whose relevant passage is not in the corpus (worth a warning)."""
        known = corpus_ids if isinstance(corpus_ids, Mapping) else set(corpus_ids)
        return [(q.query_id, pid) for q in self.queries for pid in q.relevant() if pid not in known]


def load_gold(path: str | Path, *, origin: str | None = None, name: str | None = None) -> GoldSet:
    """Read a gold set in any supported format (see the module docstring).

    ``origin`` sets the origin of queries whose file does not state one (always the case for BEIR and
    TREC qrels); it never overrides an origin written in the file.
    """
    if origin is not None and origin not in ORIGINS:
        raise InputError(f"unknown origin {origin!r}", hint=f"choose from {', '.join(ORIGINS)}")
    p = Path(path)
    if p.is_dir():
        queries = _load_beir(p / "qrels" / "test.tsv", p / "queries.jsonl", origin)
    elif p.suffix == ".tsv":
        queries = _load_beir(p, p.parent.parent / "queries.jsonl", origin)
    elif p.suffix in (".jsonl", ".json"):
        queries = _load_jsonl(p, origin)
    else:
        queries = _load_trec_qrels(p, origin)
    default_name = p.parent.parent.name if p.suffix == ".tsv" else p.stem if p.is_file() else p.name
    return GoldSet(tuple(queries), name=name or default_name, path=str(p))


def write_gold(path: str | Path, queries: Iterable[GoldQuery]) -> int:
    """Write a gold set as JSON Lines, atomically; returns the number of queries written."""
    return write_jsonl_atomic(path, (query.to_record() for query in queries))


def _text_id(value: Any, what: str, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise InputError(f"{what} must be a non-empty string", path=path, line=line)
    return str(value)


def _grade(value: Any, passage_id: str, path: Path, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise InputError(
            f"grade of passage {passage_id!r} must be an integer, got {value!r}",
            path=path,
            line=line,
            hint="use 1 for relevant, 0 for judged not relevant, higher for graded relevance",
        )
    return int(value)


def _gold_from_record(record: Mapping[str, Any], path: Path, line: int) -> dict[str, int]:
    if "gold" in record:
        raw = record["gold"]
        if not isinstance(raw, dict):
            raise InputError(
                '"gold" must be an object {"<passage id>": grade}',
                path=path,
                line=line,
                hint='or give "gold_ids": [...] for grade-1 passages',
            )
        gold = {
            _text_id(pid, "passage id", path, line): _grade(g, str(pid), path, line) for pid, g in raw.items()
        }
    elif "gold_ids" in record:
        raw_ids = record["gold_ids"]
        if not isinstance(raw_ids, list):
            raise InputError('"gold_ids" must be a list of passage ids', path=path, line=line)
        gold = {_text_id(pid, "passage id", path, line): 1 for pid in raw_ids}
    else:
        raise InputError('query has no "gold" or "gold_ids"', path=path, line=line, hint="name its passages")
    if not gold:
        raise InputError(
            "empty gold: the query names no passage",
            path=path,
            line=line,
            hint="add at least one passage id, or remove the query",
        )
    return gold


def _load_jsonl(path: Path, origin: str | None) -> list[GoldQuery]:
    queries: list[GoldQuery] = []
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what="query"):
        if "query_id" not in record:
            raise InputError(
                'query has no "query_id"', path=path, line=number, hint='add a unique "query_id"'
            )
        query_id = _text_id(record["query_id"], '"query_id"', path, number)
        if query_id in first_line:
            raise InputError(
                f"duplicate query_id {query_id!r} (first seen on line {first_line[query_id]})",
                path=path,
                line=number,
                hint="make query ids unique",
            )
        first_line[query_id] = number
        text = record.get("query")
        if not isinstance(text, str) or not text.strip():
            raise InputError(
                'query has no "query" text', path=path, line=number, hint="add the question text"
            )
        record_origin = record.get("origin", origin)
        if record_origin is not None and record_origin not in ORIGINS:
            raise InputError(
                f"unknown origin {record_origin!r}",
                path=path,
                line=number,
                hint=f"use {' or '.join(ORIGINS)}",
            )
        for name in ("type", "language"):
            if record.get(name) is not None and not isinstance(record[name], str):
                raise InputError(f'"{name}" must be a string', path=path, line=number)
        queries.append(
            GoldQuery(
                query_id=query_id,
                query=text,
                gold=_gold_from_record(record, path, number),
                origin=record_origin,
                type=record.get("type"),
                language=record.get("language"),
                metadata={k: v for k, v in record.items() if k not in _KNOWN_FIELDS},
            )
        )
    return queries


def _load_beir(qrels_path: Path, queries_path: Path, origin: str | None) -> list[GoldQuery]:
    if not qrels_path.is_file():
        raise InputError("BEIR qrels file not found", path=qrels_path, hint="expected qrels/<split>.tsv")
    judgments: dict[str, dict[str, int]] = {}
    rows = (line for _, line in read_text_lines(qrels_path))
    for number, row in enumerate(csv.reader(rows, delimiter="\t"), start=1):
        if not row or not "".join(row).strip():
            continue
        if number == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        if len(row) < 3:
            raise InputError(
                f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(row)}",
                path=qrels_path,
                line=number,
            )
        query_id, passage_id = row[0].strip(), row[1].strip()
        try:
            grade = int(row[2])
        except ValueError:
            raise InputError(f"score {row[2]!r} is not an integer", path=qrels_path, line=number) from None
        judgments.setdefault(query_id, {})[passage_id] = grade
    if not judgments:
        raise InputError("empty qrels: no judgment found", path=qrels_path)
    texts: dict[str, tuple[str, dict[str, Any]]] = {}
    if queries_path.is_file():
        for number, record in iter_jsonl(queries_path, what="query"):
            raw_id = record.get("_id", record.get("query_id"))
            query_id = _text_id(raw_id, '"_id"', queries_path, number)
            texts[query_id] = (str(record.get("text", record.get("query", ""))), record.get("metadata") or {})
    return [
        GoldQuery(
            query_id=query_id,
            query=texts.get(query_id, ("", {}))[0],
            gold=gold,
            origin=origin,
            metadata=dict(texts.get(query_id, ("", {}))[1]),
        )
        for query_id, gold in judgments.items()
    ]


def _load_trec_qrels(path: Path, origin: str | None) -> list[GoldQuery]:
    judgments: dict[str, dict[str, int]] = {}
    for number, line in read_text_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) < 4:
            raise InputError(
                f"expected 4 fields (query_id iteration passage_id grade), got {len(fields)}",
                path=path,
                line=number,
                hint="a TREC qrels line reads like '301 0 FBIS3-10082 1'; JSON Lines gold sets end in .jsonl",
            )
        try:
            grade = int(fields[3])
        except ValueError:
            raise InputError(f"grade {fields[3]!r} is not an integer", path=path, line=number) from None
        judgments.setdefault(fields[0], {})[fields[2]] = grade
    if not judgments:
        raise InputError(
            "empty qrels: no judgment found", path=path, hint="add lines 'query_id 0 passage_id grade'"
        )
    return [GoldQuery(query_id=q, query="", gold=g, origin=origin) for q, g in judgments.items()]

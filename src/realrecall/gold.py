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
import json
import numbers
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.corpus import parse_id
from realrecall.errors import InputError
from realrecall.files import iter_jsonl, parse_jsonl_line, read_text_lines, write_jsonl_atomic

__all__ = ["MAX_GRADE", "ORIGINS", "GoldQuery", "GoldSet", "check_grade", "load_gold", "write_gold"]

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

    def __post_init__(self) -> None:
        # Loaders check grades with the file and line; this catches a query built in Python, whose NaN
        # or float grade would otherwise fail deep in the scoring. type() is exact: bool is refused.
        for passage_id, grade in self.gold.items():
            if type(grade) is not int or not -MAX_GRADE <= grade <= MAX_GRADE:
                check_grade(grade, passage_id)

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """Ids of the passages whose grade reaches ``threshold``."""
        return frozenset(pid for pid, grade in self.gold.items() if grade >= threshold)

    def field(self, name: str) -> Any:
        """The value of a gold-set field used for slicing: a core field or any metadata key."""
        if name in ("query_id", "query", "origin", "type", "language"):
            return getattr(self, name)
        return self.metadata.get(name)

    def present_fields(self) -> list[str]:
        """The names :meth:`field` gives a value for (not None): what a slice can be made of."""
        core = [name for name in ("origin", "type", "language") if getattr(self, name) is not None]
        return core + [name for name, value in self.metadata.items() if value is not None]

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


def _text_id(value: Any, what: str, path: Path, line: int, *, example: str = '"doc1-chunk3"') -> str:
    return parse_id(value, what, path=path, line=line, hint=f"write ids as non-empty strings, e.g. {example}")


# trec_eval reads a grade as a C long; this bound (int32) keeps every sum of grades exact in int64 and
# float64, and no real judgment scale comes near it. 1e30 or 1e400 is a typo, not a grade.
MAX_GRADE = 2**31 - 1
_GRADE_HINT = "use 1 for relevant, 0 for judged not relevant, higher for graded relevance"
_INTEGER = re.compile(r"[+-]?[0-9]+")


def check_grade(
    value: Any, passage_id: str, *, path: str | Path | None = None, line: int | None = None
) -> int:
    """A grade as an int: a whole number within ``MAX_GRADE`` either way, else a one-line InputError."""
    return _grade(value, passage_id, path, line)


def _grade(value: Any, passage_id: str, path: str | Path | None, line: int | None) -> int:
    # JSON's NaN and Infinity parse as floats; int() of them would raise, so they are refused here.
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral | float)
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise InputError(
            f"grade of passage {passage_id!r} must be an integer, got {_json_text(value)}",
            path=path,
            line=line,
            hint=_GRADE_HINT,
        )
    return _bounded_grade(int(value), passage_id, path, line)


def _bounded_grade(grade: int, passage_id: str, path: str | Path | None, line: int | None) -> int:
    if abs(grade) > MAX_GRADE:
        raise InputError(
            f"grade of passage {passage_id!r} is out of range: {grade}",
            path=path,
            line=line,
            hint=f"grades are small integers (at most {MAX_GRADE} either way); {_GRADE_HINT}",
        )
    return grade


def _text_grade(raw: str, passage_id: str, path: Path, line: int) -> int:
    """A grade written as text (TREC qrels, BEIR tsv): ASCII digits only, as trec_eval's atol reads."""
    if _INTEGER.fullmatch(raw) is None:
        raise InputError(
            f"grade {raw!r} of passage {passage_id!r} is not an integer",
            path=path,
            line=line,
            hint=_GRADE_HINT,
        )
    return _bounded_grade(int(raw), passage_id, path, line)


def _json_text(value: Any) -> str:
    """A value as it reads in the JSON file (NaN, Infinity, true, "1"), not as Python prints it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # a value built in Python, not read from JSON
        return repr(value)


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
    for number, record in _unique_key_records(path):
        if "query_id" not in record:
            raise InputError(
                'query has no "query_id"', path=path, line=number, hint='add a unique "query_id"'
            )
        query_id = _text_id(record["query_id"], '"query_id"', path, number, example='"q12"')
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


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise _RepeatedKey(key)
        value[key] = item
    return value


def _unique_key_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``iter_jsonl`` that also refuses a key given twice in one object.

    JSON keeps the last of two equal keys, so ``"gold": {"p1": 1, "p1": 0}`` would silently judge p1
    not relevant; a gold set is hand-edited often enough for this to happen.
    """
    seen_any = False
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line, object_pairs_hook=_refuse_repeated_keys)
        except _RepeatedKey as repeated:
            raise InputError(
                f"key {repeated.key!r} appears twice in one object",
                path=path,
                line=number,
                hint="JSON keeps only the last one: give each passage (and field) once",
            ) from None
        except ValueError:
            record = None  # parse_jsonl_line below raises the usual one-line error
        if not isinstance(record, dict):
            record = parse_jsonl_line(line, path, number, what="query")
        seen_any = True
        yield number, record
    if not seen_any:
        raise InputError("empty file: no query found", path=path, hint="add at least one query")


def _load_beir(qrels_path: Path, queries_path: Path, origin: str | None) -> list[GoldQuery]:
    if not qrels_path.is_file():
        raise InputError("BEIR qrels file not found", path=qrels_path, hint="expected qrels/<split>.tsv")
    judgments = _Judgments(qrels_path)
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
        query_id = _text_id(row[0].strip(), "query-id", qrels_path, number, example='"q12"')
        passage_id = _text_id(row[1].strip(), "corpus-id", qrels_path, number)
        grade = _text_grade(row[2].strip(), passage_id, qrels_path, number)
        judgments.judge(query_id, passage_id, grade, number)
    if not judgments:
        raise InputError("empty qrels: no judgment found", path=qrels_path)
    texts = _beir_queries(queries_path) if queries_path.is_file() else {}
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


def _beir_queries(path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """BEIR's queries.jsonl: ``{query_id: (text, metadata)}``."""
    texts: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what="query"):
        raw_id = record.get("_id", record.get("query_id"))
        query_id = _text_id(raw_id, '"_id"', path, number, example='"q12"')
        if query_id in first_line:
            raise InputError(
                f"duplicate query id {query_id!r} (first seen on line {first_line[query_id]})",
                path=path,
                line=number,
                hint="make query ids unique",
            )
        first_line[query_id] = number
        text = record.get("text", record.get("query", ""))
        if not isinstance(text, str):
            raise InputError('"text" must be a string', path=path, line=number, hint="give the question text")
        metadata = record.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InputError('"metadata" must be an object', path=path, line=number)
        texts[query_id] = (text, metadata)
    return texts


class _Judgments(dict[str, dict[str, int]]):
    """``{query_id: {passage_id: grade}}`` read line by line from a qrels file.

    The same judgment given twice is harmless (some public qrels repeat lines); two different grades
    for one passage of one query leave the figure to whichever line came last, so they are refused.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._line: dict[tuple[str, str], int] = {}

    def judge(self, query_id: str, passage_id: str, grade: int, line: int) -> None:
        per_query = self.setdefault(query_id, {})
        previous = per_query.get(passage_id)
        if previous is not None and previous != grade:
            raise InputError(
                f"passage {passage_id!r} of query {query_id!r} is graded {grade} here and {previous} "
                f"on line {self._line[query_id, passage_id]}",
                path=self.path,
                line=line,
                hint="keep one grade per (query, passage)",
            )
        if previous is None:
            self._line[query_id, passage_id] = line
        per_query[passage_id] = grade


def _load_trec_qrels(path: Path, origin: str | None) -> list[GoldQuery]:
    judgments = _Judgments(path)
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
        judgments.judge(fields[0], fields[2], _text_grade(fields[3], fields[2], path, number), number)
    if not judgments:
        raise InputError(
            "empty qrels: no judgment found", path=path, hint="add lines 'query_id 0 passage_id grade'"
        )
    return [GoldQuery(query_id=q, query="", gold=g, origin=origin) for q, g in judgments.items()]

"""Gold sets: queries paired with the passages that answer them, and where each query came from.

Formats, chosen by the path (read by ``realrecall.formats``):
- ``*.jsonl``: one query per line, ``{"query_id", "query", "gold": {"<passage id>": grade, ...}}`` or
  ``"gold_ids": [...]`` (grade 1), and/or ``"evidence": [{"doc_id", "text", "grade"?, "start"?,
  "end"?}]`` (``realrecall.evidence``: what answers, resolved to the chunks of the corpus scored),
  ``"origin": "real" | "synthetic"``, ``"type"?``, ``"language"?``,
  ``"provenance"?`` (how generate made the question: ``GoldQuery.provenance``), ``"judged_by"?``
  (the passages a judge graded: ``formats.judge_marks``); every other field is kept in ``metadata``
  (source, form, ..., and ``judged_by``).
- BEIR: a folder holding ``queries.jsonl`` and ``qrels/test.tsv``, or a ``qrels/<split>.tsv`` file
  whose folder's parent holds ``queries.jsonl``.
- TREC qrels (any other file): ``query_id iteration passage_id grade`` per line, ``#`` comment lines
  allowed, as trec_eval 10 reads them; an iteration ``judge:<model>`` marks a judge's grade
  (``GoldSet.judged_by_judge``). TREC qrels carry no query text.

Grades are integers; a passage is relevant when its grade reaches the relevance threshold (1 by
default). Judged-but-not-relevant passages (grade 0, or -1 for "pooled, unjudged") are kept, since
nDCG and the reports need every judgment.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import chain, repeat
from operator import attrgetter, is_not, methodcaller
from pathlib import Path
from typing import Any

from realrecall.bulk import bulk_step
from realrecall.collection import IdIndexed
from realrecall.errors import InputError
from realrecall.evidence import Evidence
from realrecall.files import write_jsonl_atomic
from realrecall.formats import beir, jsonl, trec_qrels
from realrecall.formats.judge_marks import (
    JUDGED_BY,
    JudgeMarks,
    judge_mark,
    mark_model,
    read_qrels_marks,
)
from realrecall.formats.record_fields import NO_FIELDS
from realrecall.formats.records import ORIGINS, GoldRecord
from realrecall.grades import MAX_GRADE, check_grade, plain_grades
from realrecall.provenance import Provenance

# MAX_GRADE, check_grade and ORIGINS are rules of the file formats; they are re-exported here, beside
# the type they constrain, where the rest of the code imports them from.
__all__ = [
    "GOLD_COUNT",
    "MAX_GRADE",
    "ORIGINS",
    "Evidence",
    "GoldQuery",
    "GoldSet",
    "Provenance",
    "check_grade",
    "load_gold",
    "write_gold",
]

GOLD_COUNT = "gold_count"
"""The slice field of how many relevant gold passages a query needs (``GoldQuery.field``)."""


@dataclass(frozen=True, slots=True)
class GoldQuery:
    """One query and its judged passages (``gold``: passage id -> integer grade).

    ``evidence``: what answers it, as document text or spans (``realrecall.evidence``), beside or
    instead of ``gold``; ``realrecall.resolution.resolve_gold`` turns it into chunk ids of a corpus.
    ``metadata``: every other field of the record, as given; ``provenance``: how a synthetic question
    was made (None for a question written by a person, or by another tool). Slots, no ``__dict__``:
    a gold set may hold millions of queries (about 100 bytes less each).
    """

    query_id: str
    query: str
    gold: Mapping[str, int]
    origin: str | None = None
    type: str | None = None
    language: str | None = None
    metadata: Mapping[str, Any] = NO_FIELDS  # read-only and shared: no empty dict per query
    provenance: Provenance | None = None
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, tuple):  # a list built in Python: kept hashable and immutable
            object.__setattr__(self, "evidence", tuple(self.evidence))
        # Loaders check grades with the file and line; this catches a query built in Python, whose NaN
        # or float grade would otherwise fail deep in the scoring (a bool is not a plain grade either).
        if not plain_grades(self.gold.values()):
            for passage_id, grade in self.gold.items():
                check_grade(grade, passage_id)

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """Ids of the passages whose grade reaches ``threshold``."""
        return frozenset(pid for pid, grade in self.gold.items() if grade >= threshold)

    def field(self, name: str) -> Any:
        """The value of a gold-set field used for slicing: a core field or any metadata key.

        ``gold_count``, unless the record has a field of that name, is the number of relevant gold
        passages (grade >= 1) the query needs: 1 for most questions, 2 for a two-chunk one.
        """
        if name in ("query_id", "query", "origin", "type", "language"):
            return getattr(self, name)
        if name == "provenance" and self.provenance is not None:
            return self.provenance.to_dict()
        value = self.metadata.get(name)  # no copy of every field to read one
        if value is None and name == GOLD_COUNT:
            return len(self.relevant())
        return value

    def present_fields(self) -> list[str]:
        """The names :meth:`field` gives a value for (not None): what a slice can be made of."""
        core = [name for name in ("origin", "type", "language") if getattr(self, name) is not None]
        return core + [name for name, value in self.extra_fields().items() if value is not None]

    def extra_fields(self) -> dict[str, Any]:
        """Every field of the record beyond the core ones, as JSON holds them (provenance last)."""
        if self.provenance is None:
            return dict(self.metadata)
        return {**self.metadata, "provenance": self.provenance.to_dict()}

    def to_record(self) -> dict[str, Any]:
        """The JSON Lines record of this query (the inverse of reading it)."""
        record: dict[str, Any] = {"query_id": self.query_id, "query": self.query}
        # A query anchored by evidence alone has no "gold"; every other query writes it, as before.
        if self.gold or not self.evidence:
            record["gold"] = dict(self.gold)
        if self.evidence:
            record["evidence"] = [item.to_dict() for item in self.evidence]
        for name in ("origin", "type", "language"):
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        record.update(self.extra_fields())
        return record


@dataclass(frozen=True)
class GoldSet(IdIndexed[GoldQuery]):
    """An ordered collection of gold queries with unique ids (``len``, ``in``, ``[id]``, ``get``, ``ids``)."""

    queries: tuple[GoldQuery, ...]
    name: str = "gold"
    path: str | None = None
    judge_marks: JudgeMarks | None = None
    """The pairs a judge graded (query id -> passage id -> model; ``formats.judge_marks``), as
    ``load_gold`` read them from the file's marks; None: read from the queries' ``judged_by`` fields
    when asked (:meth:`judged_by_judge`)."""

    def __post_init__(self) -> None:
        self._index_items(
            self.queries, _QUERY_ID, what="query_id", path=self.path, hint="make query ids unique"
        )

    @cached_property
    def lowest_grade(self) -> int | None:
        """The lowest grade any query gives a judged passage (None: no passage is judged), found once
        per gold set: whether every judged passage is relevant decides how evaluate counts and lists
        them, twice an evaluation (a pass over every grade, 0.02 s of 100,000 qrels queries)."""
        lowest: int | None = min(chain.from_iterable(map(_VALUES, map(_JUDGED, self.queries))), default=None)
        return lowest

    @cached_property
    def has_fields(self) -> bool:
        """Whether any query has a field of its own; NO_FIELDS, every qrels query's, is passed over
        unread (its length is Python code: 0.15 s for a million queries, against 0.06 s)."""
        return any(filter(None, filter(partial(is_not, NO_FIELDS), map(_METADATA, self.queries))))

    @cached_property
    def bare(self) -> bool:
        """Whether every query is its id, text, judgments and core fields alone (TREC and BEIR qrels):
        no field of its own, no evidence, no provenance. Found once per set (three passes over the
        queries; none for TREC qrels, bare as read): evaluate then skips its passes that look for
        fields, evidence and provenance, 0.02 s of 100,000 queries."""
        queries = self.queries
        return not self.has_fields and not any(map(_EVIDENCE, queries)) and not any(map(_PROVENANCE, queries))

    def qrels(self) -> dict[str, dict[str, int]]:
        """The judgments as trec_eval-style tools take them: ``{query_id: {passage_id: grade}}``."""
        return {query.query_id: dict(query.gold) for query in self.queries}

    def judged_by_judge(self) -> JudgeMarks:
        """The pairs a judge graded: query id -> passage id -> the judge's model (empty: none)."""
        if self.judge_marks is not None:
            return self.judge_marks
        marks = {}
        for query in self.queries:
            marked = query.metadata.get(JUDGED_BY)
            if isinstance(marked, Mapping):
                models = {pid: mark_model(m) for pid, m in marked.items() if isinstance(m, str)}
                marks[query.query_id] = {pid: m for pid, m in models.items() if m is not None}
        return {qid: models for qid, models in marks.items() if models}

    def origins(self) -> set[str | None]:
        return {query.origin for query in self.queries}

    def with_origin(self, origin: str) -> GoldSet:
        """The queries of one origin (``real`` or ``synthetic``), as a gold set of their own."""
        return GoldSet(
            tuple(q for q in self.queries if q.origin == origin),
            name=f"{self.name}[{origin}]",
            path=self.path,
            judge_marks=self.judge_marks,
        )

    def missing_passages(self, corpus_ids: Iterable[str] | Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(query_id, passage_id)`` pairs whose relevant passage is not in the corpus (worth a warning)."""
        known = corpus_ids if isinstance(corpus_ids, Mapping) else set(corpus_ids)
        return [(q.query_id, pid) for q in self.queries for pid in q.relevant() if pid not in known]


_QUERY_ID: Callable[[GoldQuery], str] = attrgetter("query_id")

_JUDGED: Callable[[GoldQuery], Mapping[str, int]] = attrgetter("gold")
_VALUES = methodcaller("values")
_METADATA, _EVIDENCE, _PROVENANCE = map(attrgetter, ("metadata", "evidence", "provenance"))


@bulk_step  # a query is a handful of objects that all stay: 3M qrels lines read in 4.6 s, not 7-8.5
def load_gold(
    path: str | Path, *, origin: str | None = None, name: str | None = None, exact: bool = False
) -> GoldSet:
    """Read a gold set in any supported format (see the module docstring).

    ``origin`` sets the origin of queries whose file does not state one (always the case for BEIR and
    TREC qrels); it never overrides an origin written in the file. TREC qrels go through a fast path
    first (``realrecall.formats.trec_fast``), which reads the same judgments or declines the file;
    ``exact=True`` reads them line by line alone (slower; the same gold set).
    """
    if origin is not None and origin not in ORIGINS:
        raise InputError(f"unknown origin {origin!r}", hint=f"choose from {', '.join(ORIGINS)}")
    p = Path(path)
    marks: dict[str, dict[str, str]] = {}
    records = _records(p, origin, marks)
    if records is None:
        # A TREC qrels query is its id and judgments: made with no record dict between.
        judged = trec_qrels.read_judgments(p, exact=exact)
        queries = _judged_queries(judged, origin)
        del judged
        marks = read_qrels_marks(p)
    else:
        queries = tuple(GoldQuery(**record) for record in _drained(records))
    default_name = p.parent.parent.name if p.suffix == ".tsv" else p.stem if p.is_file() else p.name
    gold_set = GoldSet(queries, name=name or default_name, path=str(p), judge_marks=marks)
    if records is None:
        gold_set.__dict__["bare"] = True  # ``_judged_queries`` made every query bare: no passes to tell
    return gold_set


def _judged_queries(judged: dict[str, dict[str, int]], origin: str | None) -> tuple[GoldQuery, ...]:
    """``GoldQuery(query_id, "", gold, origin)`` of each judged query, whose grades its reader checked.

    The constructor's ``__post_init__`` would check them again: 0.55 s of the 1.4 s a million TREC
    qrels queries took to make. Every field is set as the constructor sets it (a test compares the
    two field by field, so a field added to GoldQuery and not here fails it), a field at a time over
    every query, each pass in C: no Python call per query (100,000 queries: 0.06 s, not 0.08).
    """
    queries = list(map(_new, repeat(GoldQuery, len(judged))))
    for setter, values in (
        (_set_query_id, judged),
        (_set_query, repeat("")),
        (_set_gold, judged.values()),
        (_set_origin, repeat(origin)),
        (_set_type, repeat(None)),
        (_set_language, repeat(None)),
        (_set_metadata, repeat(NO_FIELDS)),
        (_set_provenance, repeat(None)),
        (_set_evidence, repeat(())),
    ):
        deque(map(setter, queries, values), maxlen=0)
    return tuple(queries)


_new = object.__new__
# Each slot's own setter: a frozen dataclass refuses plain assignment, and ``object.__setattr__``
# looks the slot up by name at every call (a million qrels queries made in 0.95 s, against 0.65 s).
_set_query_id, _set_query, _set_gold, _set_origin, _set_type = (
    GoldQuery.__dict__[name].__set__ for name in ("query_id", "query", "gold", "origin", "type")
)
_set_language, _set_metadata, _set_provenance, _set_evidence = (
    GoldQuery.__dict__[name].__set__ for name in ("language", "metadata", "provenance", "evidence")
)


def _records(
    path: Path, origin: str | None, judge_marks: dict[str, dict[str, str]]
) -> Iterable[GoldRecord] | None:
    """The records of a BEIR or JSON Lines gold set (``judge_marks`` receives a JSON Lines set's
    ``judged_by`` fields as they are read); None for a TREC qrels file."""
    if path.is_dir():
        return beir.read_gold(path / "qrels" / "test.tsv", path / "queries.jsonl", origin)
    if path.suffix == ".tsv":
        return beir.read_gold(path, path.parent.parent / "queries.jsonl", origin)
    if path.suffix in (".jsonl", ".json"):
        return jsonl.iter_gold(path, origin, judge_marks)
    return None


def _drained(records: Iterable[GoldRecord]) -> Iterator[GoldRecord]:
    """Each record, dropped as it is handed out (popped from a list, or read one at a time), so a
    million records and the million queries made from them never live at once."""
    if not isinstance(records, list):
        yield from records
        return
    records.reverse()
    while records:
        yield records.pop()


def write_gold(path: str | Path, queries: Iterable[GoldQuery]) -> int:
    """Write a gold set as JSON Lines, atomically; returns the number of queries written.

    A ``GoldSet`` read from TREC qrels with judge marks writes them as each query's ``judged_by``
    (``formats.judge_marks``), so the judge's pairs stay marked in the copy.
    """
    marks = queries.judge_marks if isinstance(queries, GoldSet) else None
    if not marks:
        return write_jsonl_atomic(path, (query.to_record() for query in queries))
    return write_jsonl_atomic(path, (_with_marks(query.to_record(), marks) for query in queries))


def _with_marks(record: dict[str, Any], marks: JudgeMarks) -> dict[str, Any]:
    marked = marks.get(record["query_id"])
    if marked and JUDGED_BY not in record:
        record[JUDGED_BY] = {pid: judge_mark(model) for pid, model in marked.items()}
    return record

"""What an evaluation produced, and the only reader and writer of its two files.

``results.json`` (:func:`write_results`, :func:`load_results`) holds every figure with the number of
queries behind it, the retriever's description, the input files' hashes and, per gold set, the
per-query values as columns (each query's metric values and every field its gold set gave it; see
:class:`PerQueryColumns`). The per-query JSON Lines
(:func:`write_per_query`, :func:`read_per_query`) repeats those records with the ids retrieved, for
miss analysis. calibrate, compare, review and the scheduled pipeline all read these types: an
:class:`EvaluationResult` from ``evaluate`` or one read back from its file are the same thing.
"""

from __future__ import annotations

import json
import math
import numbers
import uuid
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, islice, repeat
from operator import attrgetter, methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from realrecall._gc import gc_paused
from realrecall.errors import InputError
from realrecall.files import atomic_write_chunks, iter_jsonl, read_text_lines
from realrecall.gold import ORIGINS

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MAX_CODED_VALUES",
    "MAX_SLICE_VALUES",
    "PER_QUERY_COLUMNS",
    "RESERVED_FIELDS",
    "CodedColumn",
    "EvaluationResult",
    "GoldPassages",
    "GoldSetResult",
    "PerQueryColumns",
    "QueryRecords",
    "QueryResult",
    "ResultsSource",
    "SliceResult",
    "default_slice_fields",
    "distinct_labels",
    "load_results",
    "merge_by_retriever",
    "read_per_query",
    "records_for",
    "write_per_query",
    "write_results",
]

# A field with more distinct values than this (a per-query id, free text) is not a slice anyone reads.
MAX_SLICE_VALUES = 50

# Keys of a per-query record that are not gold-set fields: identity, judgments, outcome. A gold-set
# field of one of these names cannot travel into the results (it would overwrite the outcome).
RESERVED_FIELDS = frozenset(
    {"query_id", "query", "gold", "gold_ids", "origin", "type", "language", "gold_set",
     "first_relevant_rank", "top", "metrics"}
)  # fmt: skip
_CORE_FIELDS = ("query_id", "query", "origin", "type", "language")
# The columns of results.json's per-query table, in the order written; ``metrics`` follows them.
PER_QUERY_COLUMNS = (
    "query_id",
    "query",
    "gold",
    "origin",
    "type",
    "language",
    "fields",
    "first_relevant_rank",
)
_RESULTS_HINT = "give evaluate's results.json (or rerun evaluate)"


@dataclass(frozen=True)
class SliceResult:
    """The mean of each metric over the queries whose ``field`` equals ``value`` (n of them)."""

    field: str | None
    value: Any
    n: int
    metrics: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "value": self.value, "n": self.n, "metrics": dict(self.metrics)}


@dataclass(frozen=True)
class QueryResult:
    """One query's outcome: where its first gold passage ranked, what came first, each metric.

    ``gold``: the relevant gold ids (as evaluate writes them); ``grades``: every judged passage with
    its grade, when known (a per-query file written with grades, or a gold set given to review).
    ``fields``: every other field of the gold-set record (``source``, ``product``, ``provenance``...).
    ``gold_set``: the name of the gold set the query belongs to.
    """

    query_id: str
    query: str
    gold: tuple[str, ...]
    origin: str | None
    type: str | None
    language: str | None
    first_relevant_rank: int | None
    top: tuple[str, ...]
    metrics: Mapping[str, float]
    fields: Mapping[str, Any] = field(default_factory=dict)
    gold_set: str | None = None
    grades: Mapping[str, int] = field(default_factory=dict)

    def field(self, name: str) -> Any:
        """The value a slice of ``name`` groups by: a core field or any gold-set field.

        A nested value (a list, an object) is given as its JSON text, so that it can be grouped.
        """
        value = getattr(self, name) if name in _CORE_FIELDS else self.fields.get(name)
        if value is None or isinstance(value, str | int | float | bool):
            return value
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    @property
    def weight(self) -> float:
        """1/p for a question generated from a sample of chunks (``inclusion_probability`` p), else 1.

        Figures over a sample weighted by it (Horvitz-Thompson, Hajek's mean) estimate the corpus.
        """
        probability = self.fields.get("inclusion_probability")
        if (
            isinstance(probability, int | float)
            and not isinstance(probability, bool)
            and 0 < probability <= 1
        ):
            return 1.0 / float(probability)
        return 1.0

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """The relevant gold ids: by grade when the grades are known, else every id of ``gold``."""
        if self.grades:
            return frozenset(pid for pid, grade in self.grades.items() if grade >= threshold)
        return frozenset(self.gold)

    def to_dict(self, *, with_top: bool) -> dict[str, Any]:
        return query_record(
            self.query_id,
            self.query,
            self.gold,
            self.origin,
            self.type,
            self.language,
            self.fields,
            self.first_relevant_rank,
            self.top if with_top else None,
            self.metrics,
        )


def query_record(
    query_id: str,
    query: str,
    gold: Iterable[str],
    origin: str | None,
    type: str | None,
    language: str | None,
    fields: Mapping[str, Any],
    first_relevant_rank: int | None,
    top: Iterable[str] | None,
    metrics: Mapping[str, float],
) -> dict[str, Any]:
    """One per-query record as results.json and the per-query file hold it (``top`` only in the latter)."""
    record: dict[str, Any] = {
        "query_id": query_id,
        "query": query,
        "gold": list(gold),
        "origin": origin,
        "type": type,
        "language": language,
        **record_fields(fields),
        "first_relevant_rank": first_relevant_rank,
    }
    if top is not None:
        record["top"] = list(top)
    record["metrics"] = dict(metrics)
    return record


def record_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The gold-set fields a per-query record carries: all but those named like its own keys."""
    return {name: value for name, value in fields.items() if name not in RESERVED_FIELDS}


@dataclass(frozen=True)
class PerQueryColumns:
    """One gold set's per-query values as results.json holds them: one array per column.

    ``core``: an iterable per name of :data:`PER_QUERY_COLUMNS` (``gold``: the relevant ids;
    ``fields``: each query's other gold-set fields, an object, read-only (queries with no fields of
    their own share one); ``first_relevant_rank``: None when no relevant passage was retrieved);
    ``metrics``: an iterable per metric (None where a query lacks the metric). All are as long as the
    gold set, in its order, and read once, as they are written: a million queries are never all
    Python objects at once. A column may be a :class:`CodedColumn`, written quicker. A million TREC
    qrels queries take 128 MB in the file, where one JSON object per query (every key repeated) took
    318 MB.
    """

    core: Mapping[str, Iterable[Any]]
    metrics: Mapping[str, Iterable[float | None]]


# The distinct values a coded column may hold: their texts are all made before the first row is
# written (a million take about 60 MB). A column with more is written a block at a time.
MAX_CODED_VALUES = 1 << 20


@dataclass(frozen=True, eq=False)
class CodedColumn:
    """A column as its distinct values and, per row, the index of its value (dictionary encoding).

    results.json encodes each distinct value once and repeats its text: a metric column of a million
    queries holds a few dozen distinct values (recall, MRR) or tens of thousands (nDCG), and turning
    every float into text was a third of the time to write the file.
    """

    distinct: Sequence[Any]
    codes: np.ndarray
    """Integers, one per row: ``distinct[codes[i]]`` is row i's value."""

    def __iter__(self) -> Iterator[Any]:
        return map(self.distinct.__getitem__, listed(self.codes))

    @classmethod
    def of_numbers(cls, values: np.ndarray, *, zero_is_null: bool = False) -> CodedColumn | None:
        """``values`` (floats or integers) coded by value, 0 written as null when ``zero_is_null``;
        None when one is negative or -0.0 (sorted by value, -0.0 and 0.0 are one, but their texts
        differ), or when they hold more than ``MAX_CODED_VALUES`` distinct values."""
        import numpy as np

        if np.signbit(values).any():
            return None
        distinct, codes = _distinct_values(values)
        if len(distinct) > MAX_CODED_VALUES:
            return None
        listed: list[Any] = distinct.tolist()
        if zero_is_null and listed and listed[0] == 0:
            listed[0] = None
        # The smallest integers that hold the codes: every column is coded before the first is written.
        narrow = np.min_scalar_type(max(len(listed) - 1, 0))
        return cls(listed, codes.reshape(-1).astype(narrow))


def _distinct_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``: the sorted distinct values (NaNs, all "NaN", one
    value, last) and each value's index among them.

    A long column goes through pandas' ``factorize``, which hashes where ``np.unique`` sorts: a
    million metric values in 0.01-0.04 s against 0.1-0.13 s, for every column of results.json.
    Shorter ones keep numpy: a small evaluation need not import pandas for it.
    """
    import numpy as np

    if len(values) < _HASHED_FROM:
        return np.unique(values, return_inverse=True)
    import pandas as pd

    codes, distinct = pd.factorize(values, sort=True, use_na_sentinel=False)
    return distinct, codes


_HASHED_FROM = 1 << 18


def listed_blocks(values: np.ndarray) -> Iterator[list[Any]]:
    """``values.tolist()`` ``_VALUES_PER_CHUNK`` rows at a time: a million queries' floats as Python
    objects, for five metrics, would take 200 MB at once while results.json is written."""
    return (values[at : at + _VALUES_PER_CHUNK].tolist() for at in range(0, len(values), _VALUES_PER_CHUNK))


def listed(values: np.ndarray) -> Iterator[Any]:
    """``listed_blocks`` one value at a time, handed out in C by ``chain`` (a generator yielding each
    one cost 0.3 s a million)."""
    return chain.from_iterable(listed_blocks(values))


def columns_of(queries: Sequence[QueryResult]) -> PerQueryColumns:
    """The columns of ``queries``: streamed from a :class:`QueryRecords`, else read off each result."""
    if isinstance(queries, QueryRecords):
        return queries.columns()
    metric_names = dict.fromkeys(chain.from_iterable(query.metrics for query in queries))
    core: dict[str, Iterable[Any]] = {
        "query_id": (query.query_id for query in queries),
        "query": (query.query for query in queries),
        "gold": (list(query.gold) for query in queries),
        "origin": (query.origin for query in queries),
        "type": (query.type for query in queries),
        "language": (query.language for query in queries),
        "fields": (record_fields(query.fields) for query in queries),
        "first_relevant_rank": (query.first_relevant_rank for query in queries),
    }
    # map, not a generator expression: each column must keep its own metric name.
    metrics = {
        name: map(methodcaller("get", name), map(attrgetter("metrics"), queries)) for name in metric_names
    }
    return PerQueryColumns(core, metrics)


class QueryRecords(Sequence[QueryResult]):
    """A gold set's per-query outcomes kept as columns and made into records only when read.

    ``evaluate`` returns one per gold set: writing results.json streams :meth:`columns`, and the
    per-query file :meth:`records`, straight from the columns (no :class:`QueryResult` per query, no
    list of them), and the ranked top ids, which only the per-query file shows, are computed only
    when asked for. Reading it as a sequence (calibrate, compare, review) makes every
    :class:`QueryResult` once and keeps them.
    """

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def records(self, *, with_top: bool) -> Iterator[dict[str, Any]]:
        """Every query's record in order, as ``QueryResult.to_dict`` writes it."""

    @abstractmethod
    def columns(self) -> PerQueryColumns:
        """Every query's values as results.json's columns, each made as it is read."""

    @abstractmethod
    def _results(self) -> tuple[QueryResult, ...]:
        """Every query as a QueryResult (called once; the tuple is kept)."""

    @property
    def materialised(self) -> tuple[QueryResult, ...]:
        made: tuple[QueryResult, ...] | None = self.__dict__.get("_made")
        if made is None:
            made = self.__dict__["_made"] = self._results()
        return made

    @overload
    def __getitem__(self, index: int) -> QueryResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[QueryResult, ...]: ...

    def __getitem__(self, index: int | slice) -> QueryResult | tuple[QueryResult, ...]:
        return self.materialised[index]

    def __iter__(self) -> Iterator[QueryResult]:
        return iter(self.materialised)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self.materialised == tuple(other)
        return NotImplemented

    # Equal to the tuple of its results, which is unhashable (QueryResult holds dicts).
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} queries>"


@dataclass(frozen=True)
class GoldPassages:
    """Where a gold set's passages came from in this evaluation (``realrecall.resolution``).

    ``by_id``: passages named by chunk id; ``from_evidence``: chunks found to hold evidence; ``split``:
    evidence items found in more than one chunk; ``lost``: evidence items found in no chunk, and
    ``lost_queries`` the queries they belong to; ``missing_ids``: ids the corpus lacks, kept for want
    of evidence; ``replaced_ids``: ids the corpus lacks, replaced by evidence. ``gold_from`` and
    ``coverage``: the settings used.
    """

    gold_from: str = "ids"
    coverage: float | None = None
    by_id: int = 0
    from_evidence: int = 0
    split: int = 0
    lost: int = 0
    lost_queries: tuple[str, ...] = ()
    missing_ids: int = 0
    replaced_ids: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold_from": self.gold_from,
            "coverage": self.coverage,
            "by_id": self.by_id,
            "from_evidence": self.from_evidence,
            "split": self.split,
            "lost": self.lost,
            "lost_queries": list(self.lost_queries),
            "missing_ids": self.missing_ids,
            "replaced_ids": self.replaced_ids,
        }


_PASSAGE_COUNTS = ("by_id", "from_evidence", "split", "lost", "missing_ids", "replaced_ids")


@dataclass(frozen=True)
class GoldSetResult:
    """Every figure for one gold set: overall, per slice and per query, with what was wrong with it.

    ``missing_run``, ``no_relevant``: how many queries the run had no entry for, and how many had no
    relevant passage at the threshold (both score 0); ``missing_passages``: gold ids not in the corpus;
    ``gold_passages``: where the gold passages came from (None in results of older versions);
    ``context_tokens``: cut-off k -> mean tokens of the top k chunks retrieved (None without a corpus).
    """

    name: str
    path: str | None
    sha256: str | None
    modified: str | None
    origins: Mapping[str, int]
    overall: SliceResult
    slices: tuple[SliceResult, ...]
    queries: Sequence[QueryResult]
    """A tuple, or (from ``evaluate``) :class:`QueryRecords` made on demand."""
    missing_run: int
    no_relevant: int
    missing_passages: int
    gold_passages: GoldPassages | None = None
    context_tokens: Mapping[int, float] | None = None

    @property
    def n_queries(self) -> int:
        return self.overall.n

    def to_dict(self) -> dict[str, Any]:
        return {**self._outline(), "per_query": list(_records_of(self.queries, with_top=False))}

    def _outline(self) -> dict[str, Any]:
        """Everything ``to_dict`` gives but the per-query records."""
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.sha256,
            "modified": self.modified,
            "n_queries": self.n_queries,
            "origins": dict(self.origins),
            "missing_run": self.missing_run,
            "no_relevant": self.no_relevant,
            "missing_passages": self.missing_passages,
            **({} if self.gold_passages is None else {"gold_passages": self.gold_passages.to_dict()}),
            **(
                {}
                if self.context_tokens is None
                else {"context_tokens": {str(k): v for k, v in self.context_tokens.items()}}
            ),
            "overall": {"n": self.overall.n, "metrics": dict(self.overall.metrics)},
            "slices": [s.to_dict() for s in self.slices],
        }


def _records_of(queries: Sequence[QueryResult], *, with_top: bool) -> Iterator[dict[str, Any]]:
    if isinstance(queries, QueryRecords):
        return queries.records(with_top=with_top)
    return (query.to_dict(with_top=with_top) for query in queries)


@dataclass(frozen=True)
class EvaluationResult:
    """The outcome of ``evaluate``: one ``GoldSetResult`` per gold set, and how it was obtained.

    ``source``: the file it was read from (None when evaluate made it, or it came from a mapping);
    it is not written.
    """

    retriever: Mapping[str, str]
    corpus: Mapping[str, Any] | None
    metrics: tuple[str, ...]
    relevance_threshold: int
    gold_sets: tuple[GoldSetResult, ...]
    created: str
    warnings: tuple[str, ...] = ()
    version: str = ""
    source: str | None = None
    retriever_fingerprint: Mapping[str, Any] | None = None
    """Name, options and library versions of the retriever (None in results of older versions)."""
    token_method: str | None = None
    """How context tokens were counted (``realrecall.tokens``); None when no corpus was given."""

    @property
    def name(self) -> str:
        """The retriever's name (``bm25``, ``run``...)."""
        return self.retriever.get("name") or "retriever"

    @property
    def description(self) -> str:
        """The retriever's description, with its parameters."""
        return self.retriever.get("description") or ""

    @property
    def identity(self) -> tuple[str, str]:
        """Results of one identity are of one retriever (they merge)."""
        return (self.name, self.description)

    @property
    def corpus_path(self) -> str | None:
        return None if self.corpus is None else self.corpus.get("path")

    @property
    def corpus_sha256(self) -> str | None:
        return None if self.corpus is None else self.corpus.get("sha256")

    @property
    def queries(self) -> tuple[QueryResult, ...]:
        """The queries of every gold set, in order."""
        return tuple(query for gold_set in self.gold_sets for query in gold_set.queries)

    def of_origin(self, origin: str) -> tuple[QueryResult, ...]:
        """The queries of one origin (``real`` or ``synthetic``)."""
        return tuple(q for q in self.queries if q.origin == origin)

    def slice_fields(self) -> tuple[str, ...]:
        """Every field a query has a plain value for (origin aside), type and language first."""
        names: dict[str, None] = {}
        for query in self.queries:
            names.update(
                (name, None)
                for name, value in (("type", query.type), ("language", query.language), *query.fields.items())
                if value is None or isinstance(value, str | int | float | bool)
            )
        preferred = [name for name in ("type", "language") if name in names]
        return tuple(preferred + sorted(name for name in names if name not in preferred))

    def present_fields(self) -> tuple[str, ...]:
        """Every field some query gives a value for (origin included): what ``--by`` can name."""
        names: dict[str, None] = {}
        for query in self.queries:
            core = (name for name in ("origin", "type", "language") if getattr(query, name) is not None)
            names.update(dict.fromkeys(core))
            names.update((name, None) for name, value in query.fields.items() if value is not None)
        return tuple(names)

    def generator_fingerprints(self, origin: str = "synthetic") -> tuple[str, ...]:
        """The generators that wrote the queries of ``origin``, as canonical JSON (see ``generator_of``)."""
        return tuple(sorted({generator_of(q) for q in self.of_origin(origin)}))

    @property
    def fingerprints(self) -> dict[str, Any]:
        """What decides these figures: the retriever, the corpus and each synthetic set's generator."""
        return {
            "retriever": None if self.retriever_fingerprint is None else dict(self.retriever_fingerprint),
            "corpus": None
            if self.corpus is None
            else {"sha256": self.corpus_sha256, "chunks": self.corpus.get("chunks")},
            "generators": {
                g.name: sorted({_generator(record) for record in _synthetic_records(g.queries)})
                for g in self.gold_sets
                if g.origins.get("synthetic")
            },
        }

    def real_set_dates(self) -> tuple[str, ...]:
        """``modified`` stamps of the gold sets that hold real queries."""
        return tuple(g.modified for g in self.gold_sets if g.modified and g.origins.get("real"))

    def recall_cutoffs(self) -> tuple[int, ...]:
        """The cut-offs of the ``recall@k`` metrics evaluated, ascending."""
        cutoffs = set()
        for name in self.metrics:
            kind, _, k = name.partition("@")
            if kind == "recall" and k.isascii() and k.isdigit():
                cutoffs.add(int(k))
        return tuple(sorted(cutoffs))

    def to_dict(self) -> dict[str, Any]:
        """results.json's content with one record per query (the file holds them as columns, which
        :func:`load_results` reads as well as this mapping)."""
        return {**self._header(), "gold_sets": [g.to_dict() for g in self.gold_sets]}

    def _outline(self) -> dict[str, Any]:
        """``to_dict`` with each gold set's per-query records left out (written as streamed columns)."""
        return {**self._header(), "gold_sets": [g._outline() for g in self.gold_sets]}

    def _header(self) -> dict[str, Any]:
        return {
            "realrecall_version": self.version,
            "created": self.created,
            "retriever": dict(self.retriever),
            "corpus": None if self.corpus is None else dict(self.corpus),
            "fingerprints": self.fingerprints,
            "metrics": list(self.metrics),
            "relevance_threshold": self.relevance_threshold,
            **({} if self.token_method is None else {"token_method": self.token_method}),
            "warnings": list(self.warnings),
        }


ResultsSource = EvaluationResult | Mapping[str, Any] | str | Path


# The provenance keys that say which generator wrote a synthetic question. The seed, the attempt and the
# time are left out: they change the questions, not the kind of question the generator writes.
_GENERATOR_KEYS = ("backend", "model", "prompt", "temperature")


def generator_of(query: QueryResult) -> str:
    """The generator that wrote ``query`` as canonical JSON (backend, model, prompt hash, temperature).

    A query without provenance (written by hand, or by another tool) is ``{"backend": "unrecorded"}``.
    """
    return _generator(query.fields)


def _synthetic_records(queries: Sequence[QueryResult]) -> Iterator[Mapping[str, Any]]:
    """The fields of each synthetic query: from the columns when made on demand (no QueryResult made)."""
    if isinstance(queries, QueryRecords):
        return (r for r in queries.records(with_top=False) if r["origin"] == "synthetic")
    return (q.fields for q in queries if q.origin == "synthetic")


def _generator(fields: Mapping[str, Any]) -> str:
    provenance = fields.get("provenance")
    if not isinstance(provenance, Mapping) or "backend" not in provenance:
        return json.dumps({"backend": "unrecorded"})
    record: dict[str, Any] = {key: provenance.get(key) for key in _GENERATOR_KEYS}
    prompt = record["prompt"]
    if isinstance(prompt, Mapping):
        record["prompt"] = prompt.get("sha256")
    return json.dumps(record, sort_keys=True)


@gc_paused
def write_results(result: EvaluationResult, path: str | Path) -> None:
    """Write ``results.json`` atomically, its per-query columns streamed (never all in memory at once)."""
    tables = [columns_of(g.queries) for g in result.gold_sets]
    atomic_write_chunks(path, results_chunks(result._outline(), tables))


# Values encoded per piece written: big enough to keep the write calls few, small enough to stay cheap.
_VALUES_PER_CHUNK = 1 << 14


def results_chunks(outline: Mapping[str, Any], tables: Sequence[PerQueryColumns]) -> Iterator[str]:
    """results.json's text in pieces: the outline indented, each per-query column on one line.

    ``outline``: the document with each gold set's ``per_query`` left out; ``tables[i]``: the columns
    of gold set i, written as its last key. ``json.dumps(indent=2)`` runs Python's own encoder over
    every value; the columns (nearly all of a big file) go through the C encoder instead, a block of
    values at a time. Any JSON reader reads the file as an indented one.
    """
    token = f"realrecall-per-query-{uuid.uuid4().hex}"
    document = dict(outline)
    if isinstance(outline.get("gold_sets"), list):
        document["gold_sets"] = [
            {**raw, "per_query": f"{token}-{number}"} if number < len(tables) else raw
            for number, raw in enumerate(outline["gold_sets"])
        ]
    text = json.dumps(document, indent=2, ensure_ascii=False)
    for number, table in enumerate(tables):
        placeholder = f'"{token}-{number}"'
        at = text.index(placeholder)
        indent = text[text.rindex("\n", 0, at) + 1 :].index('"')
        yield text[:at]
        text = text[at + len(placeholder) :]
        yield from _table_chunks(table, indent)
    yield text + "\n"


def _table_chunks(table: PerQueryColumns, indent: int) -> Iterator[str]:
    """``{"query_id": [...], ..., "metrics": {"recall@10": [...]}}``, indented, one column a line."""
    key = json.JSONEncoder(ensure_ascii=False).encode
    pad, inner = "\n" + " " * (indent + 2), "\n" + " " * (indent + 4)
    yield "{"
    for name, values in table.core.items():
        yield f"{pad}{key(name)}: "
        yield from _array_chunks(values)
        yield ","
    yield f'{pad}"metrics": {{'
    for number, (name, values) in enumerate(table.metrics.items()):
        yield f"{',' if number else ''}{inner}{key(name)}: "
        yield from _array_chunks(values)
    yield (pad if table.metrics else "") + "}\n" + " " * indent + "}"


def _array_chunks(values: Iterable[Any]) -> Iterator[str]:
    """One JSON array, on one line, encoded a block of values at a time by the C encoder (a coded
    column's distinct values once each, their texts then repeated)."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    blocks: Iterator[str]
    if isinstance(values, CodedColumn):
        texts = [encode(value) for value in values.distinct]
        blocks = (",".join(map(texts.__getitem__, codes)) for codes in listed_blocks(values.codes))
    else:
        rows = iter(values)
        blocks = (encode(block)[1:-1] for block in iter(lambda: list(islice(rows, _VALUES_PER_CHUNK)), []))
    first = True
    for block in blocks:
        yield ("[" if first else ",") + block
        first = False
    yield "[]" if first else "]"


# Records encoded per piece of the per-query file: few write calls, each cheap.
_RECORDS_PER_CHUNK = 2048


@gc_paused
def write_per_query(result: EvaluationResult, path: str | Path) -> int:
    """Write one JSON line per query of every gold set (with its top-k ids) for miss analysis."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for gold_set in result.gold_sets:
            records = _records_of(gold_set.queries, with_top=True)
            while batch := list(islice(records, _RECORDS_PER_CHUNK)):
                count += len(batch)
                yield "".join(encode({"gold_set": gold_set.name, **record}) + "\n" for record in batch)

    atomic_write_chunks(path, lines())
    return count


@gc_paused
def load_results(source: ResultsSource, *, origins: Mapping[str, str] | None = None) -> EvaluationResult:
    """Read results.json (a path, or the already-parsed mapping) into an :class:`EvaluationResult`.

    Every value is checked: a file that is not what evaluate writes is an InputError naming it.
    ``origins`` (gold set name -> ``real`` | ``synthetic``) sets the origin of every query of the
    named gold sets, for sets evaluated without one (a BEIR or TREC real set, say). A record without
    an origin takes its gold set's, when the set has one origin. An :class:`EvaluationResult` is
    returned as it is, with ``origins`` applied.
    """
    forced = dict(origins or {})
    if isinstance(source, EvaluationResult):
        return _with_origins(source, forced) if forced else source
    if isinstance(source, Mapping):
        return _parse(source, None, forced)
    path = Path(source)
    if not path.is_file():
        raise InputError("results file not found", path=path, hint="run `realrecall evaluate` first")
    # Read line by line: a byte that is not UTF-8 (a binary or Latin-1 file) is named by its line.
    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg})", path=path, line=exc.lineno, hint="give evaluate's results.json"
        ) from exc
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object", path=path, hint="give evaluate's results.json")
    return _parse(data, str(path), forced)


@gc_paused
def read_per_query(path: str | Path) -> tuple[QueryResult, ...]:
    """Every record of a per-query file (``evaluate --per-query``), in file order.

    Only ``query_id`` and ``top`` are required; ``gold`` may list the relevant ids or grade every
    judged one (``{id: grade}``); ``gold_set`` tells apart the queries of several gold sets.
    """
    records = []
    for number, record in iter_jsonl(path, what="per-query record"):
        where = _Where(str(path), number)
        query_id = record.get("query_id")
        if not isinstance(query_id, str | int) or isinstance(query_id, bool) or query_id == "":
            raise InputError('record has no "query_id"', path=path, line=number)
        if not isinstance(record.get("top"), list):
            raise InputError(
                'record has no "top" list of retrieved ids',
                path=path,
                line=number,
                hint="write the per-query file with realrecall evaluate --per-query",
            )
        gold_set = _optional_text(record.get("gold_set"), "gold_set", where)
        records.append(_query(record, gold_set, None, None, where, metrics_required=False))
    return tuple(records)


def records_for(records: Sequence[QueryResult], gold_set: str | None) -> tuple[QueryResult, ...]:
    """The records of one gold set (by ``gold_set``); all records when none of them names a gold set."""
    if gold_set is None:
        return tuple(records)
    chosen = tuple(r for r in records if r.gold_set == gold_set)
    return chosen if chosen or any(r.gold_set is not None for r in records) else tuple(records)


def merge_by_retriever(results: Iterable[EvaluationResult]) -> tuple[EvaluationResult, ...]:
    """Merge results of the same retriever (name and description), keeping first-seen order."""
    merged: dict[tuple[str, str], EvaluationResult] = {}
    for item in results:
        previous = merged.get(item.identity)
        if previous is None:
            merged[item.identity] = item
            continue
        _check_no_overlap(previous, item)
        merged[item.identity] = replace(
            previous,
            metrics=previous.metrics + tuple(m for m in item.metrics if m not in previous.metrics),
            gold_sets=previous.gold_sets + item.gold_sets,
            corpus=previous.corpus if previous.corpus_path else item.corpus,
            warnings=tuple(dict.fromkeys(previous.warnings + item.warnings)),
        )
    return tuple(merged.values())


def default_slice_fields(result: EvaluationResult) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every slice field except those with too many values to read as slices (ids, free text)."""
    fields, skipped = [], []
    for name in result.slice_fields():
        count = len({q.field(name) for q in result.queries})
        if count > MAX_SLICE_VALUES:
            skipped.append(
                f"field {name!r} has {count} values: not sliced (give --by {name} to slice it anyway)"
            )
        else:
            fields.append(name)
    return tuple(fields), tuple(skipped)


def distinct_labels(results: Sequence[EvaluationResult]) -> list[str]:
    """Short labels that tell the retrievers apart: the name, plus what differs in the descriptions.

    ``bm25`` and ``bm25`` described as ``... k1=0.9 b=0.4 ...`` and ``... k1=1.5 b=0.75 ...`` become
    ``bm25 k1=0.9 b=0.4`` and ``bm25 k1=1.5 b=0.75``.
    """
    names = [r.name for r in results]
    if len(set(names)) == len(names):
        return names
    words = [r.description.split() for r in results]
    shared = set.intersection(*(set(w) for w in words)) if words else set()
    labels = [
        " ".join([name, *(w for w in description if w not in shared)])
        for name, description in zip(names, words, strict=True)
    ]
    if len(set(labels)) < len(labels):
        # One retriever over two chunkings is the usual case: the corpus file tells them apart.
        corpora = [Path(r.corpus_path).name if r.corpus_path else "" for r in results]
        if all(corpora) and len(set(corpora)) == len(corpora):
            labels = [f"{label} on {corpus}" for label, corpus in zip(labels, corpora, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return labels


def _check_no_overlap(first: EvaluationResult, second: EvaluationResult) -> None:
    """The same query in two results files of one retriever would count twice in every figure."""
    known = {(q.gold_set, q.query_id) for q in first.queries}
    for query in second.queries:
        if (query.gold_set, query.query_id) in known:
            raise InputError(
                f"query {query.query_id!r} of gold set {query.gold_set!r} is in two results files of the "
                f"same retriever ({first.source or 'the first'} and {second.source or 'the second'})",
                path=second.source,
                hint="give each results file once; files of one retriever must hold different gold sets",
            )


def _with_origins(result: EvaluationResult, forced: Mapping[str, str]) -> EvaluationResult:
    """``result`` with every query of the gold sets named in ``forced`` given that origin."""
    gold_sets = tuple(
        replace(g, queries=tuple(replace(q, origin=forced[g.name]) for q in g.queries))
        if g.name in forced
        else g
        for g in result.gold_sets
    )
    return replace(result, gold_sets=gold_sets)


@dataclass(frozen=True)
class _Where:
    """Where a record was read: the file and, for JSON Lines, the line (errors name both)."""

    path: str | None
    line: int | None = None

    def error(self, message: str, hint: str | None = _RESULTS_HINT) -> InputError:
        return InputError(message, path=self.path, line=self.line, hint=hint)


def _parse(data: Mapping[str, Any], path: str | None, forced: Mapping[str, str]) -> EvaluationResult:
    where = _Where(path)
    gold_sets = data.get("gold_sets")
    if not isinstance(gold_sets, list) or not gold_sets:
        raise where.error("not a realrecall results.json (no gold_sets)", "give the file evaluate wrote")
    retriever = data.get("retriever") or {}
    if not isinstance(retriever, Mapping):
        retriever = {"name": _text(retriever, '"retriever"', where)}
    corpus = data.get("corpus")
    if corpus is not None and not isinstance(corpus, Mapping):
        raise where.error('"corpus" must be an object')
    raw_metrics = data.get("metrics") or []
    if not isinstance(raw_metrics, list) or not all(isinstance(m, str) for m in raw_metrics):
        raise where.error('"metrics" must be a list of metric names')
    threshold = data.get("relevance_threshold", 1)
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise where.error(f"relevance_threshold must be an integer, got {threshold!r}")
    sets = tuple(_gold_set(raw, position, forced, where) for position, raw in enumerate(gold_sets))
    metrics = tuple(raw_metrics) or tuple(
        dict.fromkeys(m for g in sets for q in g.queries for m in q.metrics)
    )
    return EvaluationResult(
        retriever={
            "name": _text(retriever.get("name") or "retriever", "retriever name", where),
            "description": _text(retriever.get("description") or "", "retriever description", where),
        },
        corpus=None if corpus is None else _corpus(corpus, where),
        metrics=metrics,
        relevance_threshold=threshold,
        gold_sets=sets,
        created=str(data.get("created") or ""),
        warnings=_warnings(data.get("warnings"), where),
        version=str(data.get("realrecall_version") or ""),
        source=path,
        retriever_fingerprint=_retriever_fingerprint(data.get("fingerprints"), where),
        token_method=_optional_text(data.get("token_method"), "token_method", where),
    )


def _retriever_fingerprint(value: Any, where: _Where) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise where.error('"fingerprints" must be an object')
    retriever = value.get("retriever")
    if retriever is not None and not isinstance(retriever, Mapping):
        raise where.error('"fingerprints.retriever" must be an object')
    return retriever


def _corpus(corpus: Mapping[str, Any], where: _Where) -> dict[str, Any]:
    return {
        **corpus,
        "path": _optional_text(corpus.get("path"), "corpus path", where),
        "sha256": _optional_text(corpus.get("sha256"), "corpus sha256", where),
    }


def _gold_set(raw: Any, position: int, forced: Mapping[str, str], where: _Where) -> GoldSetResult:
    if not isinstance(raw, Mapping):
        raise where.error(f"gold set {position + 1} is not an object")
    name = _text(raw.get("name") or f"gold_set_{position}", f"name of gold set {position + 1}", where)
    # A results.json read only for its settings (review takes the queries from the per-query
    # file) may hold no per-query records; calibrate and compare refuse such a set.
    per_query = raw.get("per_query", [])
    records: Iterable[Mapping[str, Any]]
    if isinstance(per_query, Mapping):
        count, records = _column_records(per_query, name, where)
    elif isinstance(per_query, list) and all(isinstance(r, Mapping) for r in per_query):
        count, records = len(per_query), per_query  # one record per query: earlier files, to_dict()
    else:
        raise where.error(
            f'gold set {name!r} has no "per_query" records',
            "rerun evaluate; calibrate needs per-query values for its intervals",
        )
    origins = _counts(raw.get("origins") or {}, f"origins of gold set {name!r}", where)
    n_queries = raw.get("n_queries", count)
    if not _is_count(n_queries):
        raise where.error(f"n_queries of gold set {name!r} must be a count")
    only = next(iter(origins)) if len(origins) == 1 else None
    default_origin = only if only in ORIGINS else None
    queries: list[QueryResult] = []
    seen: set[str] = set()
    for record in records:
        query = _query(record, name, default_origin, forced.get(name), where, metrics_required=True)
        if query.query_id in seen:
            raise where.error(f"query {query.query_id!r} of gold set {name!r} appears twice")
        seen.add(query.query_id)
        queries.append(query)
    counts = {key: raw.get(key, 0) for key in ("missing_run", "no_relevant", "missing_passages")}
    for key, value in counts.items():
        if not _is_count(value):
            raise where.error(f"{key} of gold set {name!r} must be a count")
    return GoldSetResult(
        name=name,
        path=_optional_text(raw.get("path"), f"path of gold set {name!r}", where),
        sha256=_optional_text(raw.get("sha256"), f"sha256 of gold set {name!r}", where),
        modified=_optional_text(raw.get("modified"), f"modified of gold set {name!r}", where),
        origins=origins,
        overall=_overall(raw.get("overall"), n_queries, queries),
        slices=_slices(raw.get("slices")),
        queries=tuple(queries),
        missing_run=counts["missing_run"],
        no_relevant=counts["no_relevant"],
        missing_passages=counts["missing_passages"],
        gold_passages=_gold_passages(raw.get("gold_passages"), name, where),
        context_tokens=_context_tokens(raw.get("context_tokens"), name, where),
    )


def _column_records(
    table: Mapping[str, Any], name: str, where: _Where
) -> tuple[int, Iterator[Mapping[str, Any]]]:
    """How many queries a results.json table (:class:`PerQueryColumns`) holds, and their records, each
    made as it is read (a million at once would take about 1 GB); the table's shape is checked first."""
    what = f'"per_query" of gold set {name!r}'
    unknown = sorted(set(table) - {*PER_QUERY_COLUMNS, "metrics"})
    if unknown:
        raise where.error(f"{what} has an unknown column {unknown[0]!r}")
    core = {column: table[column] for column in PER_QUERY_COLUMNS if column in table}
    metrics = table.get("metrics")
    if "query_id" not in core or not isinstance(metrics, Mapping):
        raise where.error(f'{what} needs a "query_id" column and a "metrics" object of columns')
    lengths = {}
    for column, values in [*core.items(), *((f"metrics.{m}", v) for m, v in metrics.items())]:
        if not isinstance(values, list):
            raise where.error(f"{what}: column {column!r} must be a list")
        lengths[column] = len(values)
    n = lengths["query_id"]
    uneven = next((column for column, length in lengths.items() if length != n), None)
    if uneven is not None:
        raise where.error(
            f"{what}: column {uneven!r} has {lengths[uneven]} values for {n} query ids",
            "every column holds one value per query",
        )
    if "fields" in core and not all(isinstance(f, Mapping) or f is None for f in core["fields"]):
        raise where.error(f'{what}: each "fields" value must be an object')
    return n, _records_of_columns(core, {str(m): v for m, v in metrics.items()}, n)


def _records_of_columns(
    core: Mapping[str, list[Any]], metrics: Mapping[str, list[Any]], n: int
) -> Iterator[Mapping[str, Any]]:
    fields = core.get("fields") or repeat(None, n)
    others = [(name, column) for name, column in core.items() if name != "fields"]
    for index, own in enumerate(fields):
        record: dict[str, Any] = dict(own or {})
        record.update((name, column[index]) for name, column in others)
        # null is a metric the query lacks: a table has a column for every metric of any query.
        record["metrics"] = {
            name: column[index] for name, column in metrics.items() if column[index] is not None
        }
        yield record


def _context_tokens(raw: Any, name: str, where: _Where) -> dict[int, float] | None:
    """The ``context_tokens`` object of a gold set: ``{"10": mean tokens}`` (absent without a corpus)."""
    if raw is None:
        return None
    what = f"context_tokens of gold set {name!r}"
    if not isinstance(raw, Mapping):
        raise where.error(f"{what} must be an object")
    tokens = {}
    for key, value in raw.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()) or not _is_number(value):
            raise where.error(
                f"{what} maps cut-offs to mean token counts, got {_shown(key)}: {_shown(value)}"
            )
        tokens[int(key)] = float(value)
    return tokens


def _gold_passages(raw: Any, name: str, where: _Where) -> GoldPassages | None:
    """The ``gold_passages`` object of a gold set (absent in results of older versions)."""
    if raw is None:
        return None
    what = f"gold_passages of gold set {name!r}"
    if not isinstance(raw, Mapping):
        raise where.error(f"{what} must be an object")
    counts = {key: raw.get(key, 0) for key in _PASSAGE_COUNTS}
    for key, value in counts.items():
        if not _is_count(value):
            raise where.error(f"{key} in {what} must be a count")
    gold_from, coverage, lost = raw.get("gold_from", "ids"), raw.get("coverage"), raw.get("lost_queries", [])
    if not isinstance(gold_from, str):
        raise where.error(f"gold_from in {what} must be a string")
    if coverage is not None and (isinstance(coverage, bool) or not isinstance(coverage, int | float)):
        raise where.error(f"coverage in {what} must be a number")
    if not isinstance(lost, list) or not all(isinstance(query_id, str) for query_id in lost):
        raise where.error(f"lost_queries in {what} must be a list of query ids")
    return GoldPassages(gold_from=gold_from, coverage=coverage, lost_queries=tuple(lost), **counts)


def _overall(raw: Any, n_queries: int, queries: Sequence[QueryResult]) -> SliceResult:
    """The all-queries figures as written; recomputed from the per-query values when absent."""
    written = _slice(raw, None)
    if written is not None:
        return written
    names = dict.fromkeys(m for q in queries for m in q.metrics)
    means = {}
    for name in names:
        values = [q.metrics[name] for q in queries if name in q.metrics]
        means[name] = math.fsum(values) / len(values)
    return SliceResult(None, None, n_queries, means)


def _slices(raw: Any) -> tuple[SliceResult, ...]:
    if not isinstance(raw, list):
        return ()
    slices = (_slice(item, item.get("field") if isinstance(item, Mapping) else None) for item in raw)
    return tuple(s for s in slices if s is not None)


def _slice(raw: Any, field_name: Any) -> SliceResult | None:
    """A written slice, or None when it is not one (the figures are not read back by any stage)."""
    if not isinstance(raw, Mapping) or not _is_count(raw.get("n")):
        return None
    metrics = raw.get("metrics")
    if not isinstance(metrics, Mapping) or not all(_is_number(v) for v in metrics.values()):
        return None
    name = field_name if isinstance(field_name, str) else None
    return SliceResult(name, raw.get("value"), raw["n"], {str(k): float(v) for k, v in metrics.items()})


def _query(
    record: Mapping[str, Any],
    gold_set: str | None,
    default_origin: str | None,
    forced_origin: str | None,
    where: _Where,
    *,
    metrics_required: bool,
) -> QueryResult:
    raw_id = record.get("query_id")
    of_set = "" if gold_set is None else f" of gold set {gold_set!r}"
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
        raise where.error(f"a query{of_set} has no query_id (got {raw_id!r})")
    query_id = str(raw_id)
    name = f"query {query_id!r}{of_set}"
    origin = forced_origin or record.get("origin") or default_origin
    if origin is not None and origin not in ORIGINS:
        raise where.error(
            f"{name} has origin {origin!r}",
            f"name it: --origin {gold_set}=real (or synthetic), or evaluate with --origin",
        )
    gold, grades = _gold(record.get("gold", record.get("gold_ids")), name, where)
    top = record.get("top") or []
    if not isinstance(top, list):
        raise where.error(f'"top" of {name} must be a list of retrieved ids')
    return QueryResult(
        query_id=query_id,
        query=str(record.get("query") or ""),
        gold=gold,
        origin=origin,
        type=_optional_text(record.get("type"), f"type of {name}", where),
        language=_optional_text(record.get("language"), f"language of {name}", where),
        first_relevant_rank=_rank(record.get("first_relevant_rank"), name, where),
        top=tuple(str(pid) for pid in top),
        metrics=_metric_values(record.get("metrics"), name, where, required=metrics_required),
        fields={str(k): v for k, v in record.items() if k not in RESERVED_FIELDS},
        gold_set=gold_set,
        grades=grades,
    )


def _gold(value: Any, name: str, where: _Where) -> tuple[tuple[str, ...], dict[str, int]]:
    """The gold ids, and their grades when the record grades them (``{id: grade}``)."""
    if value is None:
        return (), {}
    if isinstance(value, list | tuple):
        return tuple(str(pid) for pid in value), {}
    if isinstance(value, Mapping):
        grades = {}
        for pid, grade in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise where.error(f"the grade of {pid!r} in {name} is {grade!r}, not a whole number")
            grades[str(pid)] = grade
        return tuple(grades), grades
    raise where.error(f'"gold" of {name} must be a list of ids or an object {{id: grade}}')


def _metric_values(raw: Any, name: str, where: _Where, *, required: bool) -> dict[str, float]:
    if raw is None and not required:
        return {}
    if not isinstance(raw, Mapping):
        raise where.error(f"{name} has no metrics object", None)
    values: dict[str, float] = {}
    for metric, value in raw.items():
        if value is None:
            continue  # not measured for this query: left out of that metric's figures
        if not _is_number(value) or not math.isfinite(value):
            # Dropping it would quietly shrink n and move the figure; say which value is wrong.
            raise where.error(
                f"{metric} of {name} is {_shown(value)}, not a number",
                "metric values are numbers (null when not measured); rerun evaluate",
            )
        if value not in (0, 1) and _is_binary(str(metric)):
            # Its interval is a proportion's (Wilson): any other value would be miscounted.
            raise where.error(f"{metric} of {name} is {_shown(value)}; {metric} is 0 or 1 per query")
        values[str(metric)] = float(value)
    return values


def _is_binary(metric: str) -> bool:
    # The metrics module loads numpy: imported only when a value is not 0 or 1, so reading results
    # (and the CLI's start-up, through curate) stays numpy-free.
    from realrecall.evaluate.metrics import is_binary

    return is_binary(metric)


def _rank(value: Any, name: str, where: _Where) -> int | None:
    """The first relevant rank: a whole number from 1, or null when nothing relevant was retrieved."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 1:
        raise where.error(f"first_relevant_rank of {name} must be a rank from 1 or null, got {value!r}")
    return int(value)


def _text(value: Any, what: str, where: _Where) -> str:
    if not isinstance(value, str):
        raise where.error(f"{what} must be a string, got {type(value).__name__}")
    return value


def _optional_text(value: Any, what: str, where: _Where) -> str | None:
    return None if value is None else _text(value, what, where)


def _counts(value: Any, what: str, where: _Where) -> dict[str, int]:
    if not isinstance(value, Mapping) or not all(_is_count(n) for n in value.values()):
        raise where.error(f"{what} must be an object of counts")
    return {str(k): int(v) for k, v in value.items()}


def _warnings(value: Any, where: _Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise where.error('"warnings" must be a list of strings', "give evaluate's results.json")
    return tuple(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value as JSON writes it (NaN, "high", true); repr for one that came from Python, not JSON."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)

"""The results model: what an evaluation produced, per gold set, per slice and per query.

Frozen dataclasses, and the operations calibrate, compare and review make on them (merging results
of one retriever, the slice fields, labels telling retrievers apart). ``io`` reads and writes them.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, overload

from realrecall.errors import InputError
from realrecall.evaluate.slicing import MAX_SLICE_VALUES, not_a_default_slice
from realrecall.gold import GOLD_COUNT

__all__ = [
    "MAX_SLICE_VALUES",
    "PER_QUERY_COLUMNS",
    "RESERVED_FIELDS",
    "EvaluationResult",
    "GoldPassages",
    "GoldSetResult",
    "JudgeLabelUse",
    "PerQueryColumns",
    "QueryRecords",
    "QueryResult",
    "ResultsSource",
    "SliceResult",
    "default_slice_fields",
    "distinct_labels",
    "generator_of",
    "merge_by_retriever",
    "query_record",
    "record_fields",
    "records_for",
    "records_of",
]


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
    ``gold_set``: the name of the gold set the query belongs to. ``type`` and ``fields["form"]`` are the
    record's own labels; :meth:`label` (and :meth:`field`) give the rules' for a query without them.
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
        """The value a slice of ``name`` groups by: a core field, a label or any gold-set field.

        A nested value (a list, an object) is given as its JSON text, so that it can be grouped.
        """
        if name == "type":
            value = self.label("type")
        elif name == "form":
            value = self.label("form")
        else:
            value = getattr(self, name) if name in _CORE_FIELDS else self.fields.get(name)
            if value is None and name == GOLD_COUNT:
                # Not a field of the record: evaluate counts it (GoldQuery.field), so count it here too,
                # or calibrate shows evaluate's gold_count slice as one "(missing)" row of every query.
                value = self._gold_count
        if value is None or isinstance(value, str | int | float | bool):
            return value
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    def label(self, name: Literal["type", "form"]) -> Any:
        """The query's ``type`` or ``form``: its own, else the one the rules read in its text.

        Strata and slices match only if every query has both, so a query without its own (a BEIR or
        TREC set's, an older synthetic set's) takes them from the rules real and synthetic questions
        are labelled by (``realrecall.labels``), when first asked for.
        """
        if name == "type":
            return self.type if self.type is not None else self._rules_type
        own = self.fields.get("form")
        return own if own is not None else self._rules_form

    @property
    def _gold_count(self) -> int:
        """The relevant gold passages (grade >= 1) the query needs, as ``GoldQuery.field`` counts them."""
        if self.grades:
            return sum(grade >= 1 for grade in self.grades.values())
        return len(self.gold)

    @cached_property
    def _rules_type(self) -> str:
        from realrecall.labels import default_labeller  # the rules only when a query is labelled

        return default_labeller().type_of(self.query)

    @cached_property
    def _rules_form(self) -> str:
        from realrecall.labels import default_labeller

        return default_labeller().form_of(self.query)

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


@dataclass(frozen=True)
class JudgeLabelUse:
    """How much of a gold set's scoring rests on a judge's labels (``realrecall.formats.judge_marks``).

    ``pairs`` of the ``judged_pairs`` scored were graded by a judge (``models``: pairs per model), on
    the queries ``query_ids`` (of ``n_queries`` scored). Written to results.json as the gold set's
    ``judge_labels`` only when a judge graded some pair; the reports' rules are
    ``realrecall.calibrate.judge_labels``.
    """

    pairs: int
    judged_pairs: int
    n_queries: int
    query_ids: tuple[str, ...]
    models: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "judged_pairs": self.judged_pairs,
            "queries": len(self.query_ids),
            "n_queries": self.n_queries,
            "models": dict(self.models),
            "query_ids": list(self.query_ids),
        }


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
    judge_labels: JudgeLabelUse | None = None
    """How many of the judged pairs scored a judge graded; None: none (or results of older versions)."""

    @property
    def n_queries(self) -> int:
        return self.overall.n

    def to_dict(self) -> dict[str, Any]:
        return {**self._outline(), "per_query": list(records_of(self.queries, with_top=False))}

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
            **({} if self.judge_labels is None else {"judge_labels": self.judge_labels.to_dict()}),
            "overall": {"n": self.overall.n, "metrics": dict(self.overall.metrics)},
            "slices": [s.to_dict() for s in self.slices],
        }


def records_of(queries: Sequence[QueryResult], *, with_top: bool) -> Iterator[dict[str, Any]]:
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
    engine: str | None = None
    """Where retrieval and scoring ran when not in this process (``ray``); None for the local engine."""

    @property
    def name(self) -> str:
        """The retriever's name (``bm25``, ``run``...)."""
        return self.retriever.get("name") or "retriever"

    @property
    def description(self) -> str:
        """The retriever's description, with its parameters."""
        return self.retriever.get("description") or ""

    @property
    def approximate(self) -> str | None:
        """Why the retriever's search is approximate (a vector store's HNSW or IVF index), or None when
        it is exact or not known to be approximate (a run file, a custom function)."""
        return self.retriever.get("approximate") or None

    @property
    def identity(self) -> tuple[str, str, str]:
        """Results of one identity are of one retriever (they merge): its name and description, and
        what they do not show, its fingerprint (a custom function's source hash, a store's index) and
        the corpus it searched. Rewritten code behind the same ``file.py:function``, or the same
        retriever over another corpus, is another system: merged, its real figure would be quoted
        beside the other's synthetic one as if they were one retriever's."""
        code = None if self.retriever_fingerprint is None else dict(self.retriever_fingerprint)
        what = {"retriever": code, "corpus": self.corpus_sha256}
        return (self.name, self.description, json.dumps(what, sort_keys=True, default=str))

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

    @property
    def sliced_by(self) -> tuple[str, ...]:
        """The fields evaluate sliced the gold sets by (its ``by``), in order; empty when none."""
        return tuple(dict.fromkeys(s.field for g in self.gold_sets for s in g.slices if s.field is not None))

    def slice_fields(self) -> tuple[str, ...]:
        """Every field a query has a plain value for (origin aside), type and language first."""
        names: dict[str, None] = {}
        for query in self.queries:
            names.update(
                (name, None)
                for name, value in (("type", query.type), ("language", query.language), *query.fields.items())
                if value is None or isinstance(value, str | int | float | bool)
            )
            if "form" not in query.fields:
                names["form"] = None  # the rules' form (``QueryResult.label``), not labelled here
        preferred = [name for name in ("type", "language") if name in names]
        return tuple(preferred + sorted(name for name in names if name not in preferred))

    def present_fields(self) -> tuple[str, ...]:
        """Every field some query gives a value for (origin included): what ``--by`` can name."""
        names: dict[str, None] = {}
        for query in self.queries:
            # Every query has a type and a form: its own, or the rules' (``QueryResult.label``).
            core = (n for n in ("origin", "type", "language") if n == "type" or getattr(query, n) is not None)
            names.update(dict.fromkeys(core))
            names.update((name, None) for name, value in query.fields.items() if value is not None)
            names["form"] = None
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
            **({} if self.engine is None else {"engine": self.engine}),
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


def records_for(records: Sequence[QueryResult], gold_set: str | None) -> tuple[QueryResult, ...]:
    """The records of one gold set (by ``gold_set``); all records when none of them names a gold set."""
    if gold_set is None:
        return tuple(records)
    chosen = tuple(r for r in records if r.gold_set == gold_set)
    return chosen if chosen or any(r.gold_set is not None for r in records) else tuple(records)


def merge_by_retriever(results: Iterable[EvaluationResult]) -> tuple[EvaluationResult, ...]:
    """Merge results of the same retriever (name and description), keeping first-seen order."""
    merged: dict[tuple[str, str, str], EvaluationResult] = {}
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
    """The fields to slice when none are named, and notes on those left out that may surprise.

    The fields ``evaluate`` sliced by (its ``by``) when it was given any; else every slice field but
    bookkeeping, one-valued and many-valued fields (the rules: ``realrecall.evaluate.slicing``).
    """
    if result.sliced_by:
        return result.sliced_by, ()
    fields, skipped = [], []
    queries = result.queries
    origins = [q.origin for q in queries]
    for name in result.slice_fields():
        reason = not_a_default_slice(name, [q.field(name) for q in queries], origins)
        if reason is None:
            fields.append(name)
        elif reason:
            skipped.append(reason)
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

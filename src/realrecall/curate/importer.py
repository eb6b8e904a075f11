"""Bootstrap a real gold set from a table a team already has: tickets, answered questions, click logs.

Each row pairs a question with a passage (by id, URL or title). Rows with the same question (or the
same id column value) merge into one query with several gold passages. Rows that name no passage of
the corpus are returned as ``unmatched`` with their row number, never dropped silently. For click
logs, a (question, passage) pair must reach ``min_clicks`` clicks, summed over its rows (each row
counts as one click when there is no clicks column; with a clicks column the minimum is at least 1,
since a pair nobody clicked is no evidence).

With the corpus, each query also records its gold chunks' text as evidence (document, text, grade,
``chunk_id``, offsets when the corpus gives them), so the imported set survives re-chunking.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus, load_corpus
from realrecall.curate.matching import AMBIGUOUS, MATCH_BY, Ambiguous, MatchBy, PassageMatcher
from realrecall.curate.normalise import normalise_question, stable_query_id
from realrecall.curate.tables import Table, read_table
from realrecall.curate.type_rules import label_query
from realrecall.errors import InputError
from realrecall.evidence import Evidence, chunk_evidence
from realrecall.files import write_jsonl_atomic, written_in_place
from realrecall.gold import MAX_GRADE, GoldQuery, write_gold
from realrecall.labels import TypeRules, load_type_rules
from realrecall.labels.language import LanguageDetector

__all__ = ["ImportResult", "ImportSpec", "UnmatchedRow", "import_gold"]


@dataclass(frozen=True)
class ImportSpec:
    """Which columns hold what, and how to resolve and filter rows."""

    question: str
    passage: str
    passage_by: MatchBy = "id"
    id_column: str | None = None
    type_column: str | None = None
    language_column: str | None = None
    clicks_column: str | None = None
    grade_column: str | None = None
    min_clicks: int | None = None
    ambiguous: Ambiguous = "report"
    languages: tuple[str, ...] | None = None
    type_rules: str | Path | None = None

    def __post_init__(self) -> None:
        if self.passage_by not in MATCH_BY:
            raise InputError(
                f"unknown --passage-by {self.passage_by!r}", hint=f"choose from {', '.join(MATCH_BY)}"
            )
        if self.ambiguous not in AMBIGUOUS:
            raise InputError(
                f"unknown --ambiguous {self.ambiguous!r}", hint=f"choose from {', '.join(AMBIGUOUS)}"
            )
        if self.min_clicks is not None and self.min_clicks < 1:
            raise InputError(f"--min-clicks must be at least 1, got {self.min_clicks}")


@dataclass(frozen=True)
class UnmatchedRow:
    """A row that gave no gold passage, and why."""

    row: int
    question: str
    passage: str
    reason: str

    def to_record(self) -> dict[str, Any]:
        return {"row": self.row, "question": self.question, "passage": self.passage, "reason": self.reason}


@dataclass(frozen=True)
class ImportResult:
    """The imported queries and an account of every row that did not make it."""

    queries: tuple[GoldQuery, ...]
    rows: int
    unmatched: tuple[UnmatchedRow, ...]
    below_min_clicks: tuple[UnmatchedRow, ...] = ()
    types: Mapping[str, int] = field(default_factory=dict)
    languages: Mapping[str | None, int] = field(default_factory=dict)
    output: str | None = None
    checked_against_corpus: bool = True

    @property
    def gold_ids(self) -> int:
        return sum(len(q.gold) for q in self.queries)


@dataclass
class _Draft:
    query_id: str
    question: str
    rows: list[int] = field(default_factory=list)
    clicks: dict[str, float] = field(default_factory=dict)
    pair_rows: dict[str, list[int]] = field(default_factory=dict)
    grades: dict[str, int] = field(default_factory=dict)
    type: str | None = None
    language: str | None = None


def import_gold(
    source: str | Path,
    spec: ImportSpec,
    *,
    corpus: Corpus | str | Path | None = None,
    output: str | Path | None = None,
    unmatched_output: str | Path | None = None,
) -> ImportResult:
    """Read ``source`` into a real gold set; write it (and the unmatched rows) when paths are given.

    Raises InputError, writing nothing, for a missing column or when no row matches at all.
    """
    if output is not None and Path(output).suffix != ".jsonl" and not written_in_place(output):
        raise InputError("the gold set is written as JSON Lines", path=output, hint="name it *.jsonl")
    table = read_table(source)
    _check_columns(table, spec)
    if spec.passage_by != "id" and corpus is None:
        raise InputError(f"--passage-by {spec.passage_by} needs the corpus", hint="pass --corpus")
    loaded = load_corpus(corpus) if isinstance(corpus, str | Path) else corpus
    rules = load_type_rules(spec.type_rules)
    matcher = PassageMatcher(loaded, spec.passage_by, spec.ambiguous)

    drafts, unmatched = _collect(table, spec, matcher)
    queries, below = _finish(drafts, spec, rules, table, loaded)
    if not queries:
        raise InputError(
            f"no usable row: {len(unmatched)} unmatched, {len(below)} below the click minimum",
            path=table.path,
            hint=_first_problem(unmatched + below),
        )
    result = ImportResult(
        queries=tuple(queries),
        rows=len(table.rows),
        unmatched=tuple(unmatched),
        below_min_clicks=tuple(below),
        types=dict(Counter(q.type for q in queries if q.type is not None)),
        languages=dict(Counter(q.language for q in queries)),
        output=None if output is None else str(output),
        checked_against_corpus=loaded is not None,
    )
    if unmatched_output is not None:
        write_jsonl_atomic(unmatched_output, (row.to_record() for row in unmatched + below))
    if output is not None:
        write_gold(output, queries)
    return result


def _check_columns(table: Table, spec: ImportSpec) -> None:
    for column, option in (
        (spec.question, "--question"),
        (spec.passage, "--passage"),
        (spec.id_column, "--id"),
        (spec.type_column, "--type"),
        (spec.language_column, "--language"),
        (spec.clicks_column, "--clicks"),
        (spec.grade_column, "--grade"),
    ):
        if column is not None:
            table.require(column, option)


def _collect(
    table: Table, spec: ImportSpec, matcher: PassageMatcher
) -> tuple[dict[str, _Draft], list[UnmatchedRow]]:
    drafts: dict[str, _Draft] = {}
    unmatched: list[UnmatchedRow] = []
    for number, row in table.rows:
        question = row.get(spec.question, "").strip()
        passage = row.get(spec.passage, "")
        if not question:
            unmatched.append(UnmatchedRow(number, question, passage, "empty question cell"))
            continue
        match = matcher.resolve(passage)
        if match.reason is not None:
            unmatched.append(UnmatchedRow(number, question, passage, match.reason))
            continue
        clicks = _clicks(row, spec, table.path, number)
        grade = _grade(row, spec, table.path, number)
        query_id = row.get(spec.id_column, "").strip() if spec.id_column else ""
        key = query_id or normalise_question(question)
        draft = drafts.get(key)
        if draft is None:
            draft = drafts[key] = _Draft(query_id or stable_query_id(question), question)
        draft.rows.append(number)
        if draft.type is None and spec.type_column:
            draft.type = row.get(spec.type_column, "").strip() or None
        if draft.language is None and spec.language_column:
            draft.language = row.get(spec.language_column, "").strip() or None
        for passage_id in match.ids:
            draft.clicks[passage_id] = draft.clicks.get(passage_id, 0.0) + clicks
            draft.pair_rows.setdefault(passage_id, []).append(number)
            # Rows naming the same passage twice keep the highest grade given to it.
            draft.grades[passage_id] = max(grade, draft.grades.get(passage_id, grade))
    return drafts, unmatched


def _clicks(row: Mapping[str, str], spec: ImportSpec, path: str, number: int) -> float:
    if spec.clicks_column is None:
        return 1.0
    raw = row.get(spec.clicks_column, "").strip()
    if not raw:  # an impression without a click is often logged with an empty cell
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise InputError(
            f"clicks value {raw!r} in column {spec.clicks_column!r} is not a number",
            path=path,
            line=number,
            hint="click counts must be numbers",
        ) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(
            f"clicks value {raw!r} in column {spec.clicks_column!r} is not a count",
            path=path,
            line=number,
            hint="click counts must be numbers of 0 or more",
        )
    return value


def _grade(row: Mapping[str, str], spec: ImportSpec, path: str, number: int) -> int:
    if spec.grade_column is None:
        return 1
    raw = row.get(spec.grade_column, "").strip()
    if not raw:
        return 1
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (1 <= value <= MAX_GRADE and value.is_integer()):
        raise InputError(
            f"grade {raw!r} in column {spec.grade_column!r} is not a whole number from 1 to {MAX_GRADE}",
            path=path,
            line=number,
            hint="use 1 for relevant and higher numbers for more relevant passages",
        )
    return int(value)


def _finish(
    drafts: Mapping[str, _Draft], spec: ImportSpec, rules: TypeRules, table: Table, corpus: Corpus | None
) -> tuple[list[GoldQuery], list[UnmatchedRow]]:
    detector: LanguageDetector | None = None
    queries: list[GoldQuery] = []
    below: list[UnmatchedRow] = []
    # With a clicks column, a pair nobody clicked is no evidence of relevance even without --min-clicks.
    minimum = spec.min_clicks if spec.min_clicks is not None else (1 if spec.clicks_column else None)
    for draft in drafts.values():
        gold = {}
        for passage_id, clicks in draft.clicks.items():
            if minimum is not None and clicks < minimum:
                reason = f"passage {passage_id!r} has {clicks:g} click(s), below the minimum of {minimum}"
                below.append(UnmatchedRow(draft.pair_rows[passage_id][0], draft.question, passage_id, reason))
            else:
                gold[passage_id] = draft.grades[passage_id]
        if not gold:
            continue
        # Bookkeeping under names of its own (never sliced by default): "source" is a user's field name.
        metadata: dict[str, Any] = {"imported_from": Path(table.path).name, "imported_rows": draft.rows}
        language = draft.language
        if language is None:
            detector = detector or LanguageDetector.for_languages(spec.languages)
            language, probability = detector.detect(draft.question)
            metadata["language_detected"] = round(probability, 3)
        # A type column wins; a missing type (with the rule that gave it, type_rule) and the form come
        # from the same rules as a synthetic question's.
        query = GoldQuery(
            query_id=draft.query_id,
            query=draft.question,
            gold=gold,
            origin="real",
            type=draft.type,
            language=language,
            metadata=metadata,
            evidence=_evidence(gold, corpus),
        )
        queries.append(label_query(query, rules))
    return queries, below


def _evidence(gold: Mapping[str, int], corpus: Corpus | None) -> tuple[Evidence, ...]:
    """The gold chunks' text, as evidence of their grades (none without a corpus)."""
    if corpus is None:
        return ()
    chunks = (corpus.get(passage_id) for passage_id in gold)
    found = (chunk_evidence(chunk, gold[chunk.id]) for chunk in chunks if chunk is not None)
    return tuple(item for item in found if item is not None)


def _first_problem(rows: Sequence[UnmatchedRow]) -> str:
    if not rows:
        return "the file has no rows with a question and a passage"
    first = rows[0]
    return f"first: row {first.row}: {first.reason}"

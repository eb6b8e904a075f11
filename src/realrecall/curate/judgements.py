"""Adding judged passages to a gold set, recording who added each, when and why.

Every change to a query's gold is appended to its ``gold_history`` (kept in the query's metadata, so
it round-trips through the JSONL gold file)::

    "gold_history": [{"passage_id": "en-sync-004", "grade": 1, "by": "ana", "at": "2026-12-02T18:40:00+00:00",
                      "why": "answers it too"}]

Grade 0 is kept as well: "judged, not relevant" spares the next reviewer the same passage.

With the corpus, each judged chunk's text is also recorded as the query's evidence (document, text,
grade, ``chunk_id``, offsets when the corpus gives them; ``realrecall.evidence.chunk_evidence``), so the
judgement survives re-chunking: an item taken from the same chunk is replaced, not repeated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from realrecall.corpus import Chunk, Corpus, load_corpus, parse_id
from realrecall.errors import InputError
from realrecall.evidence import chunk_evidence
from realrecall.files import AppendLog, iter_jsonl, written_in_place
from realrecall.gold import GoldQuery, GoldSet, check_grade, load_gold, write_gold

__all__ = [
    "AddResult",
    "Judgement",
    "JudgementLog",
    "Judgements",
    "add_judgements",
    "read_judgements",
    "record_history",
    "with_chunk_evidence",
]


@dataclass(frozen=True)
class Judgement:
    """A person's (or a tool's) grade for one passage of one query."""

    query_id: str
    passage_id: str
    grade: int
    by: str
    why: str | None = None
    at: str | None = None
    source: str | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "query_id": self.query_id,
            "passage_id": self.passage_id,
            "grade": self.grade,
            "by": self.by,
        }
        if self.why:
            record["why"] = self.why
        if self.at:
            record["at"] = self.at
        return record


@dataclass(frozen=True)
class Judgements:
    """The judgements of a file, and how many of its lines were left unjudged (``grade: null``)."""

    items: tuple[Judgement, ...]
    unjudged: int = 0


@dataclass(frozen=True)
class AddResult:
    """What changed: new gold ids, changed grades, judgements that changed nothing."""

    added: tuple[Judgement, ...]
    regraded: tuple[Judgement, ...]
    unchanged: tuple[Judgement, ...]
    output: str

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.regraded)


class JudgementLog:
    """A judgements file written one answer at a time (appended and fsynced), as a review goes.

    Quitting, a Ctrl-C or a crash loses at most the answer in flight, and ``judged`` lets the next
    review skip every (query, passage) pair the file already holds.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._log = AppendLog(self.path)

    def __enter__(self) -> JudgementLog:
        self._log.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._log.close()

    def judged(self) -> set[tuple[str, str]]:
        """The ``(query_id, passage_id)`` pairs already in the file."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return set()
        return {
            (str(r.get("query_id")), str(r.get("passage_id")))
            for _, r in iter_jsonl(self.path, what="judgement")
        }

    def record(self, judgement: Judgement) -> None:
        self._log.append(judgement.to_record())


def read_judgements(path: str | Path, *, default_by: str | None = None) -> Judgements:
    """Read a judgements JSONL file (``query_id, passage_id, grade, by?, why?, at?``).

    ``default_by`` names the judge of lines that name none; lines whose grade is null are counted
    as unjudged and skipped.
    """
    items = []
    unjudged = 0
    for number, record in iter_jsonl(path, what="judgement"):
        for key in ("query_id", "passage_id"):
            if record.get(key) is None:
                raise InputError(f'judgement has no "{key}"', path=path, line=number)
            parse_id(record[key], f'"{key}"', path=path, line=number)
        grade = record.get("grade")
        if grade is None:
            unjudged += 1
            continue
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(
                f"grade must be an integer, got {grade!r}",
                path=path,
                line=number,
                hint="1 = relevant, 0 = not relevant, null = not judged yet",
            )
        check_grade(grade, str(record["passage_id"]), path=path, line=number)
        by = record.get("by") or default_by
        if not isinstance(by, str) or not by:
            raise InputError('judgement names no judge ("by")', path=path, line=number, hint="pass --by NAME")
        why = record.get("why")
        at = record.get("at")
        items.append(
            Judgement(
                query_id=str(record["query_id"]),
                passage_id=str(record["passage_id"]),
                grade=grade,
                by=by,
                why=str(why) if why else None,
                at=str(at) if at else None,
                source=str(path),
                line=number,
            )
        )
    return Judgements(tuple(items), unjudged)


def add_judgements(
    gold_path: str | Path,
    judgements: Sequence[Judgement],
    *,
    corpus: Corpus | str | Path | None = None,
    output: str | Path | None = None,
    now: datetime | None = None,
) -> AddResult:
    """Apply judgements to a gold set and write it atomically (in place unless ``output`` is given).

    Every judgement is checked before anything is written: an unknown query id, or a passage id the
    corpus lacks (when a corpus is given), raises InputError naming the judgement. With a corpus, the
    judged chunks' text is recorded as evidence (see the module docstring).
    """
    gold = load_gold(gold_path)
    target = Path(output) if output is not None else Path(gold_path)
    if target.suffix != ".jsonl" and not written_in_place(target):
        raise InputError(
            "can only write a JSON Lines gold set",
            path=target,
            hint="pass --output FILE.jsonl to convert this gold set",
        )
    known = load_corpus(corpus) if isinstance(corpus, str | Path) else corpus
    for judgement in judgements:
        _check(judgement, gold_path, gold, known)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    updated: dict[str, GoldQuery] = {}
    added: list[Judgement] = []
    regraded: list[Judgement] = []
    unchanged: list[Judgement] = []
    for judgement in judgements:
        query = updated.get(judgement.query_id, gold[judgement.query_id])
        previous = query.gold.get(judgement.passage_id)
        if previous == judgement.grade:
            unchanged.append(judgement)
            continue
        (added if previous is None else regraded).append(judgement)
        dated = judgement if judgement.at else replace(judgement, at=stamp)
        updated[judgement.query_id] = record_history(query, [dated], corpus=known)
    if updated:
        write_gold(target, (updated.get(q.query_id, q) for q in gold))
    return AddResult(tuple(added), tuple(regraded), tuple(unchanged), str(target))


def record_history(
    query: GoldQuery, judgements: Iterable[Judgement], *, corpus: Corpus | None = None
) -> GoldQuery:
    """A copy of ``query`` with the judgements' grades set and appended to its ``gold_history``; with
    ``corpus``, each judged chunk's text recorded as evidence with its grade."""
    gold = dict(query.gold)
    history = list(_history(query.metadata))
    for judgement in judgements:
        gold[judgement.passage_id] = judgement.grade
        chunk = corpus.get(judgement.passage_id) if corpus is not None else None
        if chunk is not None:
            query = with_chunk_evidence(query, chunk, judgement.grade)
        entry = {"passage_id": judgement.passage_id, "grade": judgement.grade, "by": judgement.by}
        entry["at"] = judgement.at
        if judgement.why:
            entry["why"] = judgement.why
        history.append(entry)
    return replace(query, gold=gold, metadata={**query.metadata, "gold_history": history})


def with_chunk_evidence(query: GoldQuery, chunk: Chunk, grade: int) -> GoldQuery:
    """``query`` with ``chunk``'s text as evidence of ``grade``, in place of any item taken from it."""
    item = chunk_evidence(chunk, grade)
    if item is None:
        return query
    kept = tuple(existing for existing in query.evidence if existing.chunk_id != chunk.id)
    return replace(query, evidence=(*kept, item))


def _history(metadata: Mapping[str, Any]) -> list[Any]:
    history = metadata.get("gold_history", [])
    return list(history) if isinstance(history, list) else []


def _check(judgement: Judgement, gold_path: str | Path, gold: GoldSet, corpus: Corpus | None) -> None:
    # Name the judgements file and line when there is one; a judgement given on the command line has
    # only the gold file to point at.
    path = judgement.source or gold_path
    line = judgement.line if judgement.source else None
    # A judgement given in Python or on the command line has not been through read_judgements' checks.
    parse_id(judgement.passage_id, "passage id", path=path, line=line)
    check_grade(judgement.grade, judgement.passage_id, path=path, line=line)
    if judgement.query_id not in gold:
        raise InputError(
            f"unknown query id {judgement.query_id!r} (not in {Path(gold_path).name})",
            path=path,
            line=line,
            hint="check the id against the gold set",
        )
    if corpus is not None and judgement.passage_id not in corpus:
        raise InputError(
            f"unknown passage id {judgement.passage_id!r} (not in the corpus)",
            path=path,
            line=line,
            hint="check the id against the corpus",
        )

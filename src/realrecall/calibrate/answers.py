"""Which half of a RAG system to work on: evidence retrieved against answer right, per query.

With answer-correctness labels from an end-to-end evaluation (query id, correct true/false), each
query falls in one cell of a two-by-two grid, where "evidence retrieved" means a gold passage ranked
within the top k (``first_relevant_rank <= k``):

    evidence retrieved, answer right   Working
    evidence missing,   answer right   Lucky (the model knew, or the gold set missed a passage)
    evidence retrieved, answer wrong   Assembly problem (generation, prompt or context assembly)
    evidence missing,   answer wrong   Retrieval problem
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.evaluate.results import QueryResult
from realrecall.files import iter_jsonl, read_text_lines

__all__ = ["CELLS", "AnswerGrid", "answer_grid", "load_answers"]

CELLS = ("Working", "Lucky", "Assembly problem", "Retrieval problem")
_TRUE = {"true", "1", "yes", "y", "correct", "right"}
_FALSE = {"false", "0", "no", "n", "incorrect", "wrong"}


@dataclass(frozen=True)
class AnswerGrid:
    """Counts per cell, the per-query cells and the verdict."""

    k: int
    counts: Mapping[str, int]
    cells: Mapping[str, str]
    unmatched: tuple[str, ...]
    verdict: str

    @property
    def n(self) -> int:
        return sum(self.counts.values())


def load_answers(path: str | Path) -> dict[str, bool]:
    """Read answer labels: JSONL ``{"query_id", "correct"}`` or CSV with those two columns."""
    p = Path(path)
    labels: dict[str, bool] = {}
    if p.suffix.lower() == ".csv":
        lines = [line for _, line in read_text_lines(p)]
        reader = csv.DictReader(lines)
        if not reader.fieldnames or not {"query_id", "correct"} <= set(reader.fieldnames):
            raise InputError("CSV needs the columns query_id and correct", path=p, line=1)
        for number, row in enumerate(reader, start=2):
            labels[_query_id(row.get("query_id"), p, number)] = _boolean(row.get("correct"), p, number)
    else:
        for number, record in iter_jsonl(p, what="answer label"):
            labels[_query_id(record.get("query_id"), p, number)] = _boolean(record.get("correct"), p, number)
    if not labels:
        raise InputError("no answer labels found", path=p, hint="give one query_id,correct row per query")
    return labels


def answer_grid(records: Sequence[QueryResult], answers: Mapping[str, bool], *, k: int) -> AnswerGrid:
    """The grid over the queries that have an answer label (matched by query id)."""
    counts = dict.fromkeys(CELLS, 0)
    cells: dict[str, str] = {}
    for query in records:
        if query.query_id not in answers or query.query_id in cells:
            continue
        retrieved = query.first_relevant_rank is not None and query.first_relevant_rank <= k
        right = answers[query.query_id]
        cell = CELLS[(0 if right else 2) + (0 if retrieved else 1)]
        counts[cell] += 1
        cells[query.query_id] = cell
    unmatched = tuple(sorted(qid for qid in answers if qid not in cells))
    return AnswerGrid(k, counts, cells, unmatched, _verdict(counts, k))


def _verdict(counts: Mapping[str, int], k: int) -> str:
    assembly, retrieval = counts["Assembly problem"], counts["Retrieval problem"]
    wrong = assembly + retrieval
    if sum(counts.values()) == 0:
        return "no labelled query matched the results: check the query ids"
    if wrong == 0:
        return "every labelled answer is right: nothing to fix on these queries"
    if retrieval > assembly:
        return f"work on retrieval: {retrieval} of {wrong} wrong answers had no gold passage in the top {k}"
    if assembly > retrieval:
        return (
            f"work on answering (generation and context assembly): {assembly} of {wrong} wrong answers "
            f"had the evidence in the top {k}"
        )
    return (
        f"both halves: the {wrong} wrong answers split evenly between evidence missing from the top {k} "
        "and evidence there but unused"
    )


def _query_id(value: Any, path: Path, line: int) -> str:
    if value is None or str(value).strip() == "":
        raise InputError("missing query_id", path=path, line=line)
    return str(value).strip()


def _boolean(value: Any, path: Path, line: int) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(f"correct must be true or false, got {value!r}", path=path, line=line)

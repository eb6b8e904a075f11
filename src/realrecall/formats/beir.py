"""BEIR gold sets: ``qrels/<split>.tsv`` (query-id, corpus-id, score) and ``queries.jsonl``.

BEIR's ``corpus.jsonl`` is read by ``realrecall.formats.jsonl.read_corpus`` (``"_id"`` for ``"id"``).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import iter_jsonl, read_text_lines
from realrecall.formats.ids import text_id
from realrecall.formats.records import GoldRecord
from realrecall.formats.trec_qrels import Judgments
from realrecall.grades import text_grade

__all__ = ["read_gold", "read_queries"]


def read_gold(qrels_path: Path, queries_path: Path, origin: str | None) -> list[GoldRecord]:
    """The queries judged in a BEIR qrels file, with their text from ``queries.jsonl`` if it exists."""
    if not qrels_path.is_file():
        raise InputError("BEIR qrels file not found", path=qrels_path, hint="expected qrels/<split>.tsv")
    judgments = Judgments(qrels_path)
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
        query_id = text_id(row[0].strip(), "query-id", qrels_path, number, example='"q12"')
        passage_id = text_id(row[1].strip(), "corpus-id", qrels_path, number)
        grade = text_grade(row[2].strip(), passage_id, qrels_path, number)
        judgments.judge(query_id, passage_id, grade, number)
    if not judgments:
        raise InputError("empty qrels: no judgment found", path=qrels_path)
    texts = read_queries(queries_path) if queries_path.is_file() else {}
    return [
        GoldRecord(
            query_id=query_id,
            query=texts.get(query_id, ("", {}))[0],
            gold=gold,
            origin=origin,
            type=None,
            language=None,
            metadata=dict(texts.get(query_id, ("", {}))[1]),
        )
        for query_id, gold in judgments.items()
    ]


def read_queries(path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """BEIR's queries.jsonl: ``{query_id: (text, metadata)}``."""
    texts: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what="query"):
        raw_id = record.get("_id", record.get("query_id"))
        query_id = text_id(raw_id, '"_id"', path, number, example='"q12"')
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

"""JSON Lines (and the JSON corpus mapping): gold sets, corpora and runs.

- Gold set, one query per line: ``{"query_id", "query", "gold": {"<passage id>": grade, ...}}`` or
  ``"gold_ids": [...]`` (grade 1), and/or ``"evidence": [{"doc_id", "text"?, "grade"?, "start"?,
  "end"?, "chunk_id"?}, ...]`` (``realrecall.evidence.Evidence``), ``"origin": "real" | "synthetic"``,
  ``"type"?``, ``"language"?``;
  ``"provenance"?`` (what generate records, parsed into ``realrecall.provenance.Provenance``); every
  other field is kept in ``metadata``. A key given twice in one object is refused.
- Corpus, one chunk per line: ``{"id", "text", "title"?, "metadata"?}``; BEIR's ``corpus.jsonl``
  (``"_id"`` instead of ``"id"``) reads the same way. Where the chunk comes from (its document and
  character offsets) is read from the top level or ``metadata`` under the names in ``_ORIGIN_NAMES``.
  Or a JSON object ``{"<id>": "<text>", ...}``.
- Run: ``{"query_id", "ranked": ["id", ...]}`` (order kept), ``{"query_id", "ranked": [{"id",
  "score"}, ...]}`` or ``{"query_id", "scores": {"id": score}}``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping
from itertools import filterfalse
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.evidence import Evidence
from realrecall.files import TOO_DEEP, iter_jsonl, read_text_lines
from realrecall.formats.ids import parse_id, text_id
from realrecall.formats.judge_marks import JUDGED_BY, check_judged_by
from realrecall.formats.record_fields import NO_FIELDS, RecordFields
from realrecall.formats.records import ORIGINS, ChunkRecord, GoldRecord
from realrecall.grades import check_grade, plain_grades
from realrecall.provenance import Provenance

__all__ = ["iter_gold", "read_corpus", "read_corpus_mapping", "read_gold", "read_run"]

_KNOWN_FIELDS = (
    "query_id", "query", "gold", "gold_ids", "evidence", "origin", "type", "language", "provenance"
)  # fmt: skip


# -- gold sets --------------------------------------------------------------------------------------


def read_gold(path: Path, origin: str | None) -> list[GoldRecord]:
    """The queries of a JSON Lines gold set; ``origin`` stands in where a record states none."""
    return list(iter_gold(path, origin))


def iter_gold(
    path: Path, origin: str | None, judge_marks: dict[str, dict[str, str]] | None = None
) -> Iterator[GoldRecord]:
    """``read_gold`` one record at a time: a caller making its own objects never holds every record.

    ``judge_marks``, when given, receives each record's ``"judged_by"`` (``formats.judge_marks``).
    """
    seen: set[str] = set()  # line numbers are looked for again on a duplicate (a million took 70 MB)
    metadata = _Metadata()
    for number, record in iter_jsonl(path, what="query"):
        if "query_id" not in record:
            raise InputError(
                'query has no "query_id"', path=path, line=number, hint='add a unique "query_id"'
            )
        query_id = text_id(record["query_id"], '"query_id"', path, number, example='"q12"')
        if query_id in seen:
            raise InputError(
                f"duplicate query_id {query_id!r} ({_first_seen(path, query_id)})",
                path=path,
                line=number,
                hint="make query ids unique",
            )
        seen.add(query_id)
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
        evidence = _evidence(record, path, number)
        gold = _gold_from_record(record, path, number, has_evidence=bool(evidence))
        if JUDGED_BY in record:
            marked = check_judged_by(record[JUDGED_BY], gold, path, number)
            if judge_marks is not None and marked:
                judge_marks[query_id] = marked
        yield (
            GoldRecord(
                query_id=query_id,
                query=text,
                gold=gold,
                # Labels repeat across the records: one string object each, not one per record.
                origin=_label(record_origin),
                type=_label(record.get("type")),
                language=_label(record.get("language")),
                metadata=metadata.of(record),
                provenance=_provenance(record, path, number),
                evidence=evidence,
            )
        )


def _first_seen(path: Path, query_id: str) -> str:
    """Where the first record with this id is (read again: only a duplicate asks for it)."""
    for number, record in iter_jsonl(path, what="query"):
        if parse_id(record["query_id"], '"query_id"') == query_id:
            return f"first seen on line {number}"
    return "first seen earlier; the file changed while it was read"


class _Metadata:
    """The records' fields beyond the known ones, their names and repeated texts shared.

    JSON gives every record its own copy of every key and string: a million queries each holding
    ``"form": "question", "source": "tickets"`` kept four million strings (about 220 MB) where four
    do, and a dict each (184 bytes for three fields). Records with the same field names in the same
    order share one name table (``RecordFields``; up to ``_SHARED_VALUES`` shapes), and each text
    value of a field is kept once, until the field has had ``_SHARED_VALUES`` distinct values (an id
    per record is not worth remembering). Records with no other field share one empty mapping.
    """

    def __init__(self) -> None:
        self._shapes: dict[tuple[str, ...], dict[str, int]] = {}
        self._texts: dict[str, dict[str, str] | None] = {}  # per field; None once it had too many

    def of(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        if _KNOWN_FIELD_SET.issuperset(record):
            return NO_FIELDS
        names = tuple(filterfalse(_KNOWN_FIELD_SET.__contains__, record))
        positions = self._shapes.get(names)
        if positions is None:
            positions = {name: index for index, name in enumerate(names)}
            if len(self._shapes) < _SHARED_VALUES:  # more shapes than are worth remembering
                self._shapes[names] = positions
        values = []
        for name in names:
            value = record[name]
            values.append(self._shared_text(name, value) if type(value) is str else value)
        return RecordFields(positions, tuple(values))

    def _shared_text(self, name: str, value: str) -> str:
        texts = self._texts.get(name, _UNSEEN)
        if texts is _UNSEEN:
            texts = self._texts[name] = {}
        if texts is None:
            return value
        shared = texts.get(value)
        if shared is not None:
            return shared
        if len(texts) < _SHARED_VALUES:
            texts[value] = value
        else:
            self._texts[name] = None  # an id or a free text: its values are let go
        return value


_UNSEEN: dict[str, str] = {}  # a field whose texts _Metadata has not started keeping
_KNOWN_FIELD_SET = frozenset(_KNOWN_FIELDS)
_SHARED_VALUES = 1024


def _label(value: str | None) -> str | None:
    return None if value is None else sys.intern(value)


def _provenance(record: Mapping[str, Any], path: Path, line: int) -> Provenance | None:
    raw = record.get("provenance")
    return None if raw is None else Provenance.from_dict(raw, path=path, line=line)


def _evidence(record: Mapping[str, Any], path: Path, line: int) -> tuple[Evidence, ...]:
    raw = record.get("evidence")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError(
            '"evidence" must be a list of objects',
            path=path,
            line=line,
            hint='write "evidence": [{"doc_id": "D", "text": "the sentence(s) that answer"}]',
        )
    return tuple(Evidence.from_dict(item, path=path, line=line) for item in raw)


def _gold_from_record(
    record: Mapping[str, Any], path: Path, line: int, *, has_evidence: bool = False
) -> dict[str, int]:
    if has_evidence and "gold" not in record and "gold_ids" not in record:
        return {}  # anchored by its evidence alone
    if "gold" in record:
        raw = record["gold"]
        if not isinstance(raw, dict):
            raise InputError(
                '"gold" must be an object {"<passage id>": grade}',
                path=path,
                line=line,
                hint='or give "gold_ids": [...] for grade-1 passages',
            )
        if all(map(str.strip, raw)) and plain_grades(raw.values()):
            gold = raw  # the parsed object itself: every check below would pass (a million: 3 s less)
        else:
            gold = {
                text_id(pid, "passage id", path, line): check_grade(g, str(pid), path=path, line=line)
                for pid, g in raw.items()
            }
    elif "gold_ids" in record:
        raw_ids = record["gold_ids"]
        if not isinstance(raw_ids, list):
            raise InputError('"gold_ids" must be a list of passage ids', path=path, line=line)
        gold = {text_id(pid, "passage id", path, line): 1 for pid in raw_ids}
    else:
        raise InputError(
            'query has no "gold" or "gold_ids" (nor "evidence")',
            path=path,
            line=line,
            hint='name its passages, or give the text that answers it as "evidence"',
        )
    if not gold and not has_evidence:
        raise InputError(
            "empty gold: the query names no passage",
            path=path,
            line=line,
            hint='add at least one passage id or "evidence", or remove the query',
        )
    return gold


# -- corpora ----------------------------------------------------------------------------------------


def read_corpus(path: Path) -> list[ChunkRecord]:
    """The chunks of a JSON Lines corpus (BEIR's ``corpus.jsonl`` included), in file order."""
    chunks: list[ChunkRecord] = []
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what="chunk"):
        chunk = _chunk_from_record(record, path, number)
        chunk_id = chunk["id"]
        if chunk_id in first_line:
            raise InputError(
                f"duplicate chunk id {chunk_id!r} (first seen on line {first_line[chunk_id]})",
                path=path,
                line=number,
                hint="make chunk ids unique",
            )
        first_line[chunk_id] = number
        chunks.append(chunk)
    return chunks


def _chunk_from_record(record: Mapping[str, Any], path: Path, line: int) -> ChunkRecord:
    key = "id" if "id" in record else "_id"
    if record.get(key) is None:
        raise InputError('chunk has no "id" (or BEIR "_id")', path=path, line=line, hint='add an "id" field')
    chunk_id = parse_id(record[key], f'"{key}"', path=path, line=line)
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError('chunk has no "text" string', path=path, line=line, hint='add a "text" field')
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise InputError('"title" must be a string', path=path, line=line)
    metadata = record.get("metadata")
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, dict):
        raise InputError('"metadata" must be an object', path=path, line=line)
    # A literal, not ChunkRecord(...): the class call costs more, once per chunk of a large corpus.
    chunk: ChunkRecord = {"id": chunk_id, "text": text, "title": title, "metadata": metadata}
    if metadata or not _PLAIN_CHUNK_KEYS.issuperset(record):
        _add_origin(chunk, record, path, line)
    return chunk


_PLAIN_CHUNK_KEYS = frozenset(("id", "_id", "text", "title", "metadata"))

# Where a chunk comes from, under the names realrecall writes and those the frameworks write; the
# first name found wins, each looked up at the top level of the record, then in its "metadata".
# LangChain: add_start_index=True writes metadata "start_index" (-1 when it could not place the chunk),
# loaders write "source" (the file). LlamaIndex: nodes have start_char_idx/end_char_idx, and its vector
# stores write "doc_id", "document_id" and "ref_doc_id" into the metadata.
_ORIGIN_NAMES = {
    "doc_id": ("doc_id", "document_id", "ref_doc_id", "source"),
    "start": ("start", "start_index", "start_char_idx"),
    "end": ("end", "end_char_idx"),
}


def _add_origin(chunk: ChunkRecord, record: Mapping[str, Any], path: Path, line: int) -> None:
    """Set the chunk's document and offsets (``end`` defaults to ``start`` + the text's length)."""
    doc_id = _origin_value(record, chunk["metadata"], "doc_id")
    if doc_id is not None:
        if isinstance(doc_id, bool) or not isinstance(doc_id, str | int) or not str(doc_id).strip():
            raise InputError(
                f"the chunk's document id must be a non-empty string, got {doc_id!r}",
                path=path,
                line=line,
                hint=f'write "doc_id" as a string (read from: {", ".join(_ORIGIN_NAMES["doc_id"])})',
            )
        chunk["doc_id"] = str(doc_id)
    start = _offset(_origin_value(record, chunk["metadata"], "start"), "start", path, line)
    end = _offset(_origin_value(record, chunk["metadata"], "end"), "end", path, line)
    if start is None:
        return  # an end without a start says nothing usable
    end = start + len(chunk["text"]) if end is None else end
    if end < start:
        raise InputError(
            f"the chunk ends (offset {end}) before it starts (offset {start})",
            path=path,
            line=line,
            hint='"start" and "end" are character offsets of the chunk in its document, end exclusive',
        )
    chunk["start"], chunk["end"] = start, end


def _origin_value(record: Mapping[str, Any], metadata: Mapping[str, Any], what: str) -> Any:
    for name in _ORIGIN_NAMES[what]:
        if record.get(name) is not None:
            return record[name]
        if metadata.get(name) is not None:
            return metadata[name]
    return None


def _offset(value: Any, name: str, path: Path, line: int) -> int | None:
    if value is None or value == -1:  # -1: LangChain's "could not place this chunk"
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(
            f"the chunk's {name} offset must be a whole number >= 0, got {value!r}",
            path=path,
            line=line,
            hint="offsets are character positions of the chunk in its document's text",
        )
    return value


def read_corpus_mapping(path: Path) -> list[ChunkRecord]:
    """The chunks of a JSON object ``{"<id>": "<text>", ...}`` (the shape of many chunk dumps)."""
    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        # Pairs, not a dict: json.loads keeps the last of two equal keys, silently dropping a chunk.
        value = json.loads(text, object_pairs_hook=list)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    except RecursionError:
        raise InputError(f"malformed JSON ({TOO_DEEP})", path=path) from None
    if not isinstance(value, list) or not value or not all(isinstance(pair, tuple) for pair in value):
        raise InputError(
            "expected a non-empty JSON object {id: text}",
            path=path,
            hint="or give a JSON Lines corpus with one chunk per line",
        )
    chunks: list[ChunkRecord] = []
    seen: set[str] = set()
    for raw_id, chunk_text in value:
        chunk_id = parse_id(raw_id, "chunk id", path=path)
        if chunk_id in seen:
            raise InputError(f"duplicate chunk id {chunk_id!r}", path=path, hint="make chunk ids unique")
        seen.add(chunk_id)
        if not isinstance(chunk_text, str):
            raise InputError(
                f"text of chunk {chunk_id!r} is not a string",
                path=path,
                hint='write the corpus as {"<id>": "<text>", ...}',
            )
        chunks.append(ChunkRecord(id=chunk_id, text=chunk_text, title="", metadata={}))
    return chunks


# -- runs -------------------------------------------------------------------------------------------


def read_run(path: Path) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
    """Read a JSON Lines run: ``(ranked lists, score maps)``, exactly one of them non-empty."""
    scores: dict[str, dict[str, float]] = {}
    ranked: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    for number, record in iter_jsonl(path, what='{"query_id", "ranked"}'):
        qid = record.get("query_id")
        if not isinstance(qid, str) or not qid.strip():
            raise InputError('record has no string "query_id"', path=path, line=number, hint="add it")
        if qid in first_line:
            raise InputError(
                f"query {qid!r} appears twice (first on line {first_line[qid]})",
                path=path,
                line=number,
                hint="give one line per query",
            )
        first_line[qid] = number
        kind, value = _jsonl_entry(record, path, number)
        if kind == "ranked":
            ranked[qid] = value
        else:
            scores[qid] = value
    if ranked and scores:
        raise InputError(
            "the run mixes plain ranked lists and scored results",
            path=path,
            hint='give scores for every query, or plain "ranked" lists for every query',
        )
    return ranked, scores


def _jsonl_entry(record: Mapping[str, Any], path: Path, number: int) -> tuple[str, Any]:
    if "scores" in record:
        raw = record["scores"]
        if not isinstance(raw, dict):
            raise InputError('"scores" must be an object {"id": score}', path=path, line=number)
        return "scores", {
            _jsonl_id(pid, path, number): _jsonl_score(s, pid, path, number) for pid, s in raw.items()
        }
    if "ranked" not in record:
        raise InputError(
            'record has no "ranked" or "scores"',
            path=path,
            line=number,
            hint='add "ranked": ["id", ...] (best first) or "scores": {"id": score}',
        )
    raw = record["ranked"]
    if not isinstance(raw, list):
        raise InputError('"ranked" must be a list', path=path, line=number)
    if raw and all(isinstance(item, dict) for item in raw):
        per_query: dict[str, float] = {}
        for item in raw:
            pid = _jsonl_id(item.get("id"), path, number)
            if "score" not in item:
                raise InputError(
                    f'ranked entry {pid!r} has no "score"',
                    path=path,
                    line=number,
                    hint='give every entry a "score", or list plain ids',
                )
            if pid in per_query:
                raise InputError(f"passage {pid!r} appears twice", path=path, line=number)
            per_query[pid] = _jsonl_score(item["score"], pid, path, number)
        return "scores", per_query
    ids = [_jsonl_id(pid, path, number) for pid in raw]
    seen: set[str] = set()
    for pid in ids:
        if pid in seen:
            raise InputError(
                f"passage {pid!r} appears twice",
                path=path,
                line=number,
                hint="a ranked list names each passage once",
            )
        seen.add(pid)
    return "ranked", ids


def _jsonl_id(value: Any, path: Path, number: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(
            f"passage id {value!r} must be a non-empty string",
            path=path,
            line=number,
            hint='write ids as JSON strings, e.g. "p12"',
        )
    return value


def _jsonl_score(value: Any, pid: str, path: Path, number: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"score of {pid!r} is not a number: {value!r}", path=path, line=number)
    if isinstance(value, float) and math.isnan(value):
        raise InputError(f"score of {pid!r} is NaN", path=path, line=number, hint="give a real number")
    return float(value)

"""Which labels a judge gave: the mark a judge's label carries in each format, and its readers.

A grade an LLM judge gave (``realrecall judge``) is marked where the mark survives copying a file and
merging it with people's labels, so that evaluate can count what rests on a judge and the reports can
say so, whether or not anyone declares the files:

- TREC qrels: the iteration column (the 2nd field) holds ``judge:<model>`` (``judge:unknown`` when
  the model is not known), e.g. ``q7 judge:gpt-4o-mini p19 2``. trec_eval 10 ignores that field
  ("Iter is ignored", its qrels reader), and pytrec_eval, ir_measures and ranx read such a file as
  any other (tests/formats/test_judge_marks.py), so the figures stay trec_eval's. People's qrels
  concatenated with a judge's keep every line's mark.
- JSON Lines gold sets: a query's ``"judged_by"`` object maps each passage a judge graded to its mark,
  ``{"p19": "judge:gpt-4o-mini"}``; the passage's grade is in ``"gold"`` as usual.

A label without a mark is people's. A pair graded by an unmarked line and a marked one (the same
grade: two different grades for one pair are refused, as always) is people's: they agree with the
judge there. A model name's whitespace becomes ``_``, so the mark stays one field.

``read_qrels_marks`` looks for the mark at memchr speed first: a file without one (every plain qrels
file) costs one scan (0.012 s of CPU for a 64 MB file of 3M lines whose ids hold no colon, 0.04 s
when they do, against 1.9 s to load it) and no line is read again; the fast readers in ``trec_fast``
are not involved.
"""

from __future__ import annotations

import mmap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import read_text_lines
from realrecall.formats.token_chunks import c_split

__all__ = [
    "JUDGED_BY",
    "JUDGE_MARK_PREFIX",
    "UNKNOWN_MODEL",
    "JudgeMarks",
    "check_judged_by",
    "judge_mark",
    "mark_model",
    "read_qrels_marks",
]

JUDGE_MARK_PREFIX = "judge:"
"""Every judge mark starts so: ``judge:<model>``."""
UNKNOWN_MODEL = "unknown"
"""The model of a mark that names none."""
JUDGED_BY = "judged_by"
"""The JSON Lines gold-set field holding a query's judge marks (passage id -> mark)."""

JudgeMarks = Mapping[str, Mapping[str, str]]
"""Query id -> passage id -> the judge's model, for the pairs a judge graded."""


def judge_mark(model: str | None) -> str:
    """The mark of a label the judge ``model`` gave: ``judge:<model>``, one whitespace-free field."""
    name = "_".join((model or "").split()) or UNKNOWN_MODEL
    return JUDGE_MARK_PREFIX + name


def mark_model(mark: str) -> str | None:
    """The model a mark names (``unknown`` when it names none); None when ``mark`` is not a judge mark."""
    if not mark.startswith(JUDGE_MARK_PREFIX):
        return None
    return mark[len(JUDGE_MARK_PREFIX) :] or UNKNOWN_MODEL


def read_qrels_marks(path: Path) -> dict[str, dict[str, str]]:
    """The judge-graded pairs of a TREC qrels file (see the module doc); empty when it holds no mark.

    Read after the file's judgments were (a bad line has been reported already), with the exact
    reader's split: C whitespace, ``#`` comment lines skipped.
    """
    if not _holds(path, JUDGE_MARK_PREFIX.encode()):
        return {}
    marks: dict[str, dict[str, str]] = {}
    people: set[tuple[str, str]] = set()
    for _, line in read_text_lines(path):
        fields = c_split(line)
        if len(fields) < 4 or fields[0].startswith("#"):
            continue
        model = mark_model(fields[1])
        if model is None:
            people.add((fields[0], fields[2]))
        else:
            marks.setdefault(fields[0], {})[fields[2]] = model
    for query_id, passage_id in people:
        per_query = marks.get(query_id)
        if per_query is not None and per_query.pop(passage_id, None) is not None and not per_query:
            del marks[query_id]
    return marks


def check_judged_by(value: Any, gold: Mapping[str, int], path: Path, line: int) -> dict[str, str]:
    """A JSON Lines record's ``"judged_by"``: passage id -> model, each passage one of its ``gold``."""
    example = judge_mark("gpt-4o-mini")
    hint = f'"judged_by" maps each passage a judge graded to its mark, e.g. {{"p19": "{example}"}}'
    if not isinstance(value, Mapping):
        raise InputError('"judged_by" must be an object', path=path, line=line, hint=hint)
    models = {}
    for passage_id, mark in value.items():
        model = mark_model(mark) if isinstance(mark, str) else None
        if model is None:
            raise InputError(
                f'"judged_by" marks passage {passage_id!r} with {mark!r}, not a judge mark',
                path=path,
                line=line,
                hint=hint,
            )
        if passage_id not in gold:
            raise InputError(
                f'"judged_by" names passage {passage_id!r}, which "gold" does not grade',
                path=path,
                line=line,
                hint='give the judge\'s grade of every passage it marks in "gold"',
            )
        models[passage_id] = model
    return models


def _holds(path: Path, needle: bytes) -> bool:
    """Whether the file holds ``needle`` (one scan of the mapped file, no line made). A stream (a pipe,
    ``/dev/stdin``) has been read to its end by the reader already: it cannot be read again for marks."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            # The mark's ":" first: one memchr, which most qrels files (ids without a colon) end at
            # (0.003 s of CPU for 64 MB, against 0.03 s to search for the whole mark).
            return data.find(needle[-1:]) >= 0 and data.find(needle) >= 0

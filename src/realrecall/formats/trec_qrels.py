"""TREC qrels: ``query_id iteration passage_id grade`` per line, as trec_eval 10 reads them.

``#`` comment lines are allowed; TREC qrels carry no query text. The same judgment given twice is
harmless; two different grades for one passage of one query are refused (see ``Judgments``).
"""

from __future__ import annotations

from pathlib import Path

from realrecall.errors import InputError
from realrecall.files import read_text_lines
from realrecall.formats.grades import text_grade
from realrecall.formats.records import GoldRecord

__all__ = ["Judgments", "read_qrels"]


class Judgments(dict[str, dict[str, int]]):
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


def read_qrels(path: Path, origin: str | None) -> list[GoldRecord]:
    """The queries of a TREC qrels file, with no text, in the order they first appear."""
    judgments = Judgments(path)
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
        judgments.judge(fields[0], fields[2], text_grade(fields[3], fields[2], path, number), number)
    if not judgments:
        raise InputError(
            "empty qrels: no judgment found", path=path, hint="add lines 'query_id 0 passage_id grade'"
        )
    return [
        GoldRecord(query_id=q, query="", gold=g, origin=origin, type=None, language=None, metadata={})
        for q, g in judgments.items()
    ]

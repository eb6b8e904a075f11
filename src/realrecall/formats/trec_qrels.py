"""TREC qrels: ``query_id iteration passage_id grade`` per line, as trec_eval 10 reads them.

``#`` comment lines are allowed; TREC qrels carry no query text. The same judgment given twice is
harmless; two different grades for one passage of one query are refused (see ``Judgments``).

``read_judgments`` reads a file with a fast path (``realrecall.formats.trec_fast``: pyarrow's CSV
reader for a big file, chunks split by one C-level ``str.split`` each), which returns the same
judgments in the same order or declines the file, and then, for a declined file or with
``exact=True``, with ``read_qrels``: line by line, naming the line that is wrong.
"""

from __future__ import annotations

from pathlib import Path

from realrecall.errors import InputError
from realrecall.files import read_text_lines
from realrecall.formats import trec_fast
from realrecall.formats.token_chunks import c_split
from realrecall.grades import text_grade

__all__ = ["Judgments", "read_judgments", "read_qrels"]


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


def read_judgments(path: Path, *, exact: bool = False) -> dict[str, dict[str, int]]:
    """``{query_id: {passage_id: grade}}`` of a TREC qrels file, queries in the order they first appear:
    by a fast path, else (or with ``exact``) by ``read_qrels``; the same judgments either way."""
    judged = None if exact else trec_fast.read_qrels(path)
    return read_qrels(path) if judged is None else judged


def read_qrels(path: Path) -> Judgments:
    """The exact reader: line by line, as trec_eval 10 reads them, naming the line that is wrong."""
    judgments = Judgments(path)
    for number, line in read_text_lines(path):
        fields = c_split(line)  # C whitespace only, as trec_eval: U+00A0 and the like stay in an id
        if not fields or fields[0].startswith("#"):
            continue
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
    return judgments

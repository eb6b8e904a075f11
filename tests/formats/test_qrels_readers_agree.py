"""The quick qrels readers (chunked, columns) give what the exact line reader gives, on generated
files.

Either one takes a file and returns the same judgments in the same order, or it declines and the line
reader reads it. The files mix separators, short and long lines, odd ids and grades, comment lines
(a first field starting with ``#``, after whitespace too) and blank lines: what trec_eval skips, and
what it does not (a ``#`` inside an id, or starting a field other than the first).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.formats import trec_qrels
from realrecall.formats.trec_fast import chunks, columns

ids = st.sampled_from(["q1", "q2", "a", "b", "q1", "a", "x#", "#x", "d#1_100", "Ä", '"q"'])
grades = st.sampled_from(["1", "0", "2", "-1", "1", "+1", "007", "1.0", "x", "1_0", ""])
separators = st.sampled_from([" ", " ", " ", "  ", "\t", " \t "])


@st.composite
def lines(draw: st.DrawFn) -> str:
    fields = [draw(ids), "0", draw(ids), draw(grades)]
    fields += ["extra"] * draw(st.integers(0, 1))
    fields = [f for f in fields[: draw(st.sampled_from([4, 4, 4, 4, 5, 3]))] if f]
    text = fields[0]
    for field in fields[1:]:
        text += draw(separators) + field
    return draw(st.sampled_from(["", "", "", " ", "\t"])) + text + draw(st.sampled_from(["", "", " ", "\r"]))


skipped = st.sampled_from(["# header", "#", "  # q1 0 a 1", "\t#q 0 b 2 extra", "", " \t", "\r"])
files = st.lists(st.one_of(lines(), lines(), lines(), skipped), min_size=1, max_size=6).map(
    lambda rows: "\n".join(rows) + "\n"
)


def outcome(path: Path) -> tuple[str, object]:
    try:
        judged = trec_qrels.read_qrels(path)
    except InputError as error:
        return "error", error.line
    return "judged", [(query, list(per_query.items())) for query, per_query in judged.items()]


@given(files)
@settings(max_examples=300, deadline=None)
def test_the_quick_readers_agree_with_the_line_reader(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels.txt"
        path.write_text(text, encoding="utf-8")
        for read in (chunks.read_qrels_chunks, columns.read_qrels_columns):
            quick = read(path)
            if quick is not None:
                taken = [(query, list(judged.items())) for query, judged in quick.items()]
                assert outcome(path) == ("judged", taken)

"""Every reader of a TREC run gives what the exact line reader gives, on generated files.

The columnar reader (pyarrow's CSV reader; pandas' C parser, single-space or regex separator), the
chunked reader and the exact reader must agree on every file: the same queries, ranked lists and
scores, or an error on the same line. The files mix separators (runs of spaces, tabs, leading and
trailing spaces), short and long lines, odd ids and scores, comment and blank lines: the layouts
where a quicker parser could read fields differently."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.formats import trec_fast
from realrecall.formats.trec_fast import chunks as chunks_module
from realrecall.formats.trec_fast import columns as columns_module
from realrecall.runs import load_run
from support.trec_files import one_separator_files

# Mostly good lines, so that most files read (one bad line makes the whole file an error).
ids = st.sampled_from(["q1", "q2", "a", "b", "c", "q1", "q2", "a", "b", "d\xa0e", "x#", '"q"', "Ä", "#x"])
scores = st.sampled_from(["1", "2.5", "-1e-3", "0.5", "3", "-2", "0.25", "1e400", "high", "1_0", ""])
separators = st.sampled_from([" ", " ", " ", " ", " ", " ", "  ", "\t", " \t ", "   "])


@st.composite
def lines(draw: st.DrawFn) -> str:
    fields = [draw(ids), "Q0", draw(ids), draw(st.sampled_from(["1", "2", "x"])), draw(scores), "tag"]
    fields += ["extra"] * draw(st.integers(0, 1))
    fields = fields[: draw(st.sampled_from([6, 6, 6, 6, 6, 6, 7, 5]))]
    fields = [f for f in fields if f]  # an empty score is a missing field
    text = draw(separators).join(fields[:1])
    for field in fields[1:]:
        text += draw(separators) + field
    lead = draw(st.sampled_from(["", "", "", "", " ", "\t"]))
    trail = draw(st.sampled_from(["", "", "", "", " ", "\t", "\r"]))
    return lead + text + trail


# Lines trec_eval skips: comments (a first field starting with "#", after whitespace too, of any
# length), blank and whitespace-only lines.
skipped = st.sampled_from(
    ["# header", "#", "  # q1 Q0 a 1 1 tag", "\t#x Q0 b 2 2 tag extra", "", " \t", "\r"]
)
files = st.lists(st.one_of(lines(), lines(), lines(), skipped), min_size=1, max_size=6).map(
    lambda rows: "\n".join(rows) + "\n"
)


def outcome(read: object) -> tuple[str, object]:
    try:
        run = read()  # type: ignore[operator]
    except InputError as error:
        return "error", error.line
    return "run", (run.to_lists(), [run.scores(q) for q in run.query_ids])


def read_with(path: Path, *, columns: bool, chunks: bool) -> tuple[str, object]:
    """``load_run`` with the columnar and the chunked reader each on or off (off: it declines)."""
    saved = trec_fast.RUN_COLUMNS_MIN_BYTES, columns_module.read_run_columns, chunks_module.read_run_chunks
    trec_fast.RUN_COLUMNS_MIN_BYTES = 0  # the columnar path for every size
    if not columns:
        columns_module.read_run_columns = lambda path: None  # type: ignore[assignment]
    if not chunks:
        chunks_module.read_run_chunks = lambda path: None  # type: ignore[assignment]
    try:
        return outcome(lambda: load_run(path))
    finally:
        trec_fast.RUN_COLUMNS_MIN_BYTES, columns_module.read_run_columns, chunks_module.read_run_chunks = (
            saved
        )


@given(files)
@settings(max_examples=300, deadline=None)
def test_the_quick_readers_agree_with_the_exact_reader(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.txt"
        path.write_text(text, encoding="utf-8")
        exact = read_with(path, columns=False, chunks=False)
        assert read_with(path, columns=True, chunks=False) == exact
        assert read_with(path, columns=False, chunks=True) == exact


run_lines = st.tuples(ids, st.just("Q0"), ids, st.just("1"), scores, st.just("tag")).map(list)


@given(one_separator_files(run_lines, 6))
@settings(max_examples=300, deadline=None)
def test_the_readers_agree_on_files_with_one_separator_byte(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.txt"
        path.write_text(text, encoding="utf-8")
        assert read_with(path, columns=True, chunks=False) == read_with(path, columns=False, chunks=False)

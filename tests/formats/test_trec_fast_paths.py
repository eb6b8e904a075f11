"""Every TREC file reads the same through each fast path as through the exact reader.

``realrecall.formats.trec_fast`` holds the fast paths (Arrow columns, chunked splits); the one switch,
``exact=True`` on ``load_run`` and ``load_gold``, reads with the exact line readers alone. Each test
reads the same file with each reader (``support.trec_readers``) and compares everything a caller can
see: query order, ranked lists, scores to the bit, judgments in file order, or the line an error
names. The files: trec_eval's own test files and this project's edge cases (shared reference data),
and small files of the layouts a quicker parser could read differently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.formats import trec_fast
from realrecall.formats.trec_fast import chunks, columns
from realrecall.formats.trec_fast.columns import RunColumns
from realrecall.gold import load_gold
from realrecall.runs import Run, load_run
from support.trec_readers import READERS, choose

# Reference files, and the fast paths that take each (a fast path declines the others to the exact reader).
REFERENCE_RUNS = {
    "upstream/results.test": {"columns", "chunks"},
    "upstream/results.trunc": {"columns"},  # junk after the tag on 5 lines: chunks of mixed lengths
    "upstream/results.comment.test": {"columns", "chunks"},
    "edge-cases/edge.run": {"columns", "chunks"},
}
REFERENCE_QRELS = {
    "upstream/qrels.test": {"columns", "chunks"},
    "upstream/qrels.test.with-comments": {"chunks"},
    "upstream/qrels.rel_level": {"columns", "chunks"},
    "upstream/qrels.comment.test": {"columns", "chunks"},
    "edge-cases/edge.qrels": {"columns", "chunks"},
}

# Layouts of a run file a parser may split differently from trec_eval (C whitespace, LF line ends).
RUN_LAYOUTS = {
    "plain": "q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 -1e-3 t\n",
    "crlf": "q1 Q0 a 1 3.5 t\r\nq1 Q0 b 2 2 t\r\nq2 Q0 c 1 -2.5E+1 t\r\n",
    "tabs": "q1\tQ0\ta\t1\t3.5\tt\nq2\tQ0\tc\t1\t1\tt\n",
    "runs of whitespace": "  q1  Q0 a 1\t3.5 t  \nq1 Q0\t\tb 2 2 t\n\nq2 Q0 c 1 1 t\n",
    "bom": "\ufeffq1 Q0 a 1 3.5 t\nq2 Q0 c 1 1 t\n",
    "comments and # in ids": "# header\nq1 Q0 a#1 1 3.5 t\n  # q1 Q0 x 1 9 t\nq1 Q0 #b 2 2 t\n",
    "fields after the tag": "q1 Q0 a 1 3.5 t extra more\nq1 Q0 b 2 2 t\n",
    "a query split across the file": "q1 Q0 a 1 3 t\nq2 Q0 c 1 1 t\nq1 Q0 b 2 2 t\n",
    "ties and non-ASCII ids": "E8 Q0 d10 1 1 t\nE8 Q0 d9 2 1 t\nE8 Q0 a#1 3 1 t\nE8 Q0 \u00c41 4 1 t\n",
    "a no-break space inside an id": "q1 Q0 a\xa0b 1 1 t\nq1 Q0 c 2 0.5 t\n",
}
BAD_RUNS = {
    "five fields": ("q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2\n", 2),
    "a word for a score": ("q1 Q0 a 1 3.5 t\nq1 Q0 b 2 high t\n", 2),
    "a NaN score": ("q1 Q0 a 1 nan t\n", 1),
    "1_0 (Python reads it, atof does not)": ("q1 Q0 a 1 1_0 t\n", 1),
    "a result given twice": ("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\n", 3),
}
QRELS_LAYOUTS = {
    "plain": "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n",
    "crlf and tabs": "q1\t0\ta\t1\r\nq2\t0\tc\t-1\r\n",
    "comments and # in ids": "# header\nq1 0 a#1 1\n\t# q 0 b 2\nq2 0 #c 3\n",
    "a judgment given twice alike": "q1 0 a 1\nq1 0 a 1\nq2 0 c 1\n",
    "a query split across the file": "q1 0 a 1\nq2 0 c 1\nq1 0 b 2\n",
    "signed and padded grades": "q1 0 a +1\nq1 0 b 007\nq2 0 c -1\n",
}
BAD_QRELS = {
    "three fields": ("q1 0 a 1\nq1 0 b\n", 2),
    "a grade that is not a whole number": ("q1 0 a 1\nq1 0 b 1.0\n", 2),
    "two grades for one judgment": ("q1 0 a 1\nq1 0 a 2\n", 2),
}


@pytest.fixture(scope="module")
def trec_eval_data(reference_data: Path) -> Path:
    """trec_eval's test files and the edge cases (research licences: read in place, never copied)."""
    folder = reference_data / "trec_eval"
    if not folder.is_dir():
        pytest.skip(f"trec_eval parity data not found at {folder}")
    return folder


def _seen(run: Run) -> tuple[object, ...]:
    """Everything a caller reads of a run: query order, rankings, scores (compared to the bit)."""
    queries = run.query_ids
    return (
        queries,
        [run.ranked(q) for q in queries],
        [run.scores(q) for q in queries],
        run.ranked_many(queries, 3),
    )


def _judged(path: Path, *, exact: bool) -> list[tuple[str, list[tuple[str, int]]]]:
    return [(q.query_id, list(q.gold.items())) for q in load_gold(path, exact=exact)]


@pytest.mark.reference_data
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name", sorted(REFERENCE_RUNS))
def test_a_reference_run_reads_the_same_through_every_reader(
    trec_eval_data: Path, monkeypatch: pytest.MonkeyPatch, name: str, reader: str
) -> None:
    path = trec_eval_data / name
    expected = _seen(load_run(path, exact=True))
    exact = choose(reader, monkeypatch)
    assert _seen(load_run(path, exact=exact)) == expected
    if not exact:  # the fast path itself reads the file, or declines it
        taken = trec_fast.read_run(path)
        read_it = isinstance(taken, RunColumns) if reader == "columns" else taken is not None
        assert read_it == (reader in REFERENCE_RUNS[name])


@pytest.mark.reference_data
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name", sorted(REFERENCE_QRELS))
def test_reference_qrels_read_the_same_through_every_reader(
    trec_eval_data: Path, monkeypatch: pytest.MonkeyPatch, name: str, reader: str
) -> None:
    path = trec_eval_data / name
    expected = _judged(path, exact=True)
    exact = choose(reader, monkeypatch)
    assert _judged(path, exact=exact) == expected
    if not exact:  # the fast path itself reads the file, or declines it
        read = columns.read_qrels_columns if reader == "columns" else chunks.read_qrels_chunks
        assert (read(path) is not None) == (reader in REFERENCE_QRELS[name])


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("layout", sorted(RUN_LAYOUTS))
def test_a_run_of_any_layout_reads_the_same_through_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, reader: str
) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(RUN_LAYOUTS[layout].encode())
    expected = _seen(load_run(path, exact=True))
    assert _seen(load_run(path, exact=choose(reader, monkeypatch))) == expected


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("bad", sorted(BAD_RUNS))
def test_a_bad_run_names_the_same_line_through_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, reader: str
) -> None:
    text, line = BAD_RUNS[bad]
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_run(path, exact=choose(reader, monkeypatch))
    assert error.value.line == line


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("layout", sorted(QRELS_LAYOUTS))
def test_qrels_of_any_layout_read_the_same_through_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, reader: str
) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(QRELS_LAYOUTS[layout].encode())
    expected = _judged(path, exact=True)
    assert _judged(path, exact=choose(reader, monkeypatch)) == expected


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("bad", sorted(BAD_QRELS))
def test_bad_qrels_name_the_same_line_through_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, reader: str
) -> None:
    text, line = BAD_QRELS[bad]
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_gold(path, exact=choose(reader, monkeypatch))
    assert error.value.line == line


def test_the_exact_switch_reads_no_file_through_a_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path) -> None:
        raise AssertionError(f"a fast path read {path}")

    monkeypatch.setattr(trec_fast, "read_run", refuse)
    monkeypatch.setattr(trec_fast, "read_qrels", refuse)
    (tmp_path / "run.txt").write_text(RUN_LAYOUTS["plain"])
    (tmp_path / "qrels.txt").write_text(QRELS_LAYOUTS["plain"])
    assert load_run(tmp_path / "run.txt", exact=True).query_ids == ("q1", "q2")
    assert load_gold(tmp_path / "qrels.txt", exact=True).ids == ("q1", "q2")

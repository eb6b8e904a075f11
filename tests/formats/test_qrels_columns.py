"""TREC qrels read by pyarrow's CSV reader into dicts: the same judgments, in the same order, as the
line reader, or a decline (None) and the same result or one-line error from the other readers."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.errors import InputError
from realrecall.formats import trec_fast, trec_qrels
from realrecall.formats.trec_fast import columns
from support.trec_files import one_separator_files

pytest.importorskip("pyarrow")

PLAIN = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d -1\n"


def write(folder: Path, data: str | bytes) -> Path:
    path = folder / "qrels.txt"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def judged_in_order(judged: dict[str, dict[str, int]]) -> list[tuple[str, list[tuple[str, int]]]]:
    return [(query, list(per_query.items())) for query, per_query in judged.items()]


def exact(path: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    return judged_in_order(trec_qrels.read_qrels(path))


@pytest.mark.parametrize(
    "data",
    [
        PLAIN,
        PLAIN.replace("\n", "\r\n"),
        b"\xef\xbb\xbf" + PLAIN.encode(),
        PLAIN.rstrip("\n"),
        PLAIN.replace(" ", "\t"),
        "q1 0 a 007\nq1 0 b -0\nq1 0 c +1\n",
        "q\u00e9 0 p\u00e4ssage 1\n",
        "# a comment\n#q0 0 z 1\n" + PLAIN,  # the second is a comment as long as the lines
        "q1 0 a#1 1\nq2 0 #b 0\n",
        PLAIN.replace("\n", "\n\n"),
        PLAIN.replace("\n", " extra\n"),
    ],
    ids=[
        "plain",
        "crlf",
        "bom",
        "no-final-newline",
        "tabs",
        "leading-zeros-and-signs",
        "utf8-ids",
        "comments",
        "hash-in-ids",
        "blank-lines",
        "field-after-grade",
    ],
)
def test_plain_files_are_read_in_columns_as_the_line_reader_reads_them(tmp_path: Path, data: str) -> None:
    path = write(tmp_path, data)

    judged = columns.read_qrels_columns(path)

    assert judged is not None
    assert judged_in_order(judged) == exact(path)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("q1 0 a 1\nq2 0 c 2\nq1 0 b 1\n", "judged"),  # a query split across the file: joined
        ("q1 0 a 1\nq1 0 a 1\n", "judged"),  # a judgment given twice, harmless
        ("q1 0 a 1\nq1 0 a 2\n", "error"),  # ... or not
        ("q1 0 a 0x1\n", "error"),  # pyarrow's integers take hex, atol does not
        ("q1 0 a 1.0\n", "error"),
        ("q1 0 a 99999999999\n", "error"),  # past MAX_GRADE
        ("q1 0 a 1\nq1 0 b\n", "error"),  # a line short of fields
        ("q1 0 a 1 x\nq1 0 b 1\n", "judged"),  # lines of other lengths
        ("q1  0 a 1\n", "judged"),  # a run of spaces: pandas and the chunked reader's share
        (PLAIN.encode().replace(b" 0 b", b" \xff b"), "error"),  # not UTF-8
    ],
)
def test_what_it_cannot_read_exactly_is_declined_and_read_by_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: str | bytes, expected: str
) -> None:
    path = write(tmp_path, data)
    assert columns.read_qrels_columns(path) is None

    monkeypatch.setattr(trec_fast, "QRELS_COLUMNS_MIN_BYTES", 0)
    try:
        outcome = ("judged", judged_in_order(trec_qrels.read_judgments(path)))
    except InputError as error:
        outcome = ("error", error.line)
    assert outcome[0] == expected
    if expected == "judged":
        assert outcome[1] == exact(path)


def test_big_files_take_the_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    real = columns.read_qrels_columns
    monkeypatch.setattr(columns, "read_qrels_columns", lambda path: calls.append(path) or real(path))
    path = write(tmp_path, PLAIN)

    trec_qrels.read_judgments(path)
    assert calls == []  # small: the chunked reader, without importing pyarrow

    monkeypatch.setattr(trec_fast, "QRELS_COLUMNS_MIN_BYTES", 0)
    assert judged_in_order(trec_qrels.read_judgments(path)) == exact(path)
    assert calls == [path]


ids = st.sampled_from(["q1", "q2", "a", "b", "q1", "a", "x#", "#x", "d#1_100", "\u00c4", '"q"'])
grades = st.sampled_from(["1", "0", "2", "-1", "1", "+1", "007", "1.0", "x", "1_0", "0x1", ""])


@given(one_separator_files(st.tuples(ids, st.just("0"), ids, grades).map(list), 4))
@settings(max_examples=300, deadline=None)
def test_the_columns_agree_with_the_line_reader(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), text)
        judged = columns.read_qrels_columns(path)
        if judged is not None:
            assert judged_in_order(judged) == exact(path)

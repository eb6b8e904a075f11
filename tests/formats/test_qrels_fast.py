"""TREC qrels read in chunks by one C-level split each: the same judgments as the line reader.

Every file the chunked reader cannot take exactly declines (None) and the line reader reads it, so
``read_judgments`` gives the same result or the same one-line error either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.formats import token_chunks, trec_qrels
from realrecall.formats.trec_fast.chunks import read_qrels_chunks

PLAIN = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d -1\n"


def write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def exact(path: Path) -> dict[str, dict[str, int]]:
    return dict(trec_qrels.read_qrels(path))


def same_order(got: dict[str, dict[str, int]], expected: dict[str, dict[str, int]]) -> None:
    assert got == expected
    assert list(got) == list(expected)
    assert all(list(got[q]) == list(expected[q]) for q in got)


@pytest.mark.parametrize(
    "data",
    [
        PLAIN,
        PLAIN.replace("\n", "\r\n"),  # CRLF: the CR is whitespace to both readers
        b"\xef\xbb\xbf" + PLAIN.encode(),  # a BOM before the first line
        PLAIN.rstrip("\n"),  # no line end at the end of the file
        "q1 0 a 1\nq2 0 c 2\nq1 0 b 1\n",  # a query split across the file is joined
        "q1\t0\ta\t+1\nq1  0 b 007\n",  # tabs, runs of spaces, a sign, leading zeros
        "q\u00e9 0 p\u00e4ssage 1\n",  # UTF-8 ids
        "# a comment\n" + PLAIN,  # a line whose first field starts with '#' is skipped, as trec_eval does
        "#q0 0 z 1\n  # q0 0 y 1\n\t#\n" + PLAIN,  # comments of four fields, after whitespace, alone
        "q1 0 a#1 1\nq#2 0 #b 0\n",  # '#' anywhere else is part of an id
        PLAIN + "\n \t\n" + "q3 0 e 1\n",  # blank lines
        PLAIN.replace("\n", "\r\n# c\r\n\r\n"),  # comments and blank lines in a CRLF file
        PLAIN.replace("\n", " extra\n"),  # a field after the grade on every line, ignored
        PLAIN.replace("\n", " x y\n"),
    ],
)
def test_plain_files_take_the_chunked_reader_with_the_same_result(tmp_path, data):
    path = write(tmp_path, data)
    fast = read_qrels_chunks(path)
    assert fast is not None
    same_order(fast, exact(path))


@pytest.mark.parametrize(
    "data",
    [
        "q1 0 a 1\nq1 0 b 1 extra\n",  # lines of different lengths (the line reader ignores extra fields)
        "q1 0 a 1\nq1 0 a 1\n",  # the same judgment twice (harmless)
        "q1 0 a\x000 1\n",  # a NUL byte
        "q\xa01 0 d 1\n",  # U+00A0 and \x1f split for str.split, not for trec_eval's isspace
        "q1\x1f0 a b 1\n",
    ],
)
def test_files_it_cannot_take_exactly_are_declined_and_read_the_same(tmp_path, data):
    path = write(tmp_path, data)
    assert read_qrels_chunks(path) is None
    same_order(trec_qrels.read_judgments(path), exact(path))


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        ("q1 0 a 1\nq1 0 a 2\n", "graded 2 here and 1", 2),
        ("q1 0 a 1\nq1 0 b\n", "expected 4 fields", 2),
        ("q1 0 a 1\nq1 0 b 1_0\n", "is not an integer", 2),
        ("q1 0 a 1\nq1 0 b \u0661\n", "is not an integer", 2),  # an Arabic-Indic digit: int() takes it
        ("q1 0 a 1\nq1 0 b 1.0\n", "is not an integer", 2),
        ("q1 0 a 99999999999\n", "out of range", 1),
        (b"q1 0 a 1\nq1 0 \xff 1\n", "not valid UTF-8", 2),
        ("", "empty qrels", None),
        ("# only a comment\n\n", "empty qrels", None),
        ("\nq1 0 5\n", "expected 4 fields", 2),  # a blank line, then a short one: tokens of one line
        ("# a comment\nq1 0 a 1\nq1 0 b\n", "expected 4 fields", 3),
    ],
)
def test_bad_files_are_declined_and_the_line_reader_names_the_line(tmp_path, data, message, line):
    path = write(tmp_path, data)
    assert read_qrels_chunks(path) is None
    with pytest.raises(InputError, match=message) as caught:
        trec_qrels.read_judgments(path)
    assert caught.value.line == line


def test_a_missing_file_is_the_line_readers_error(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        trec_qrels.read_judgments(tmp_path / "nope.txt")


@pytest.mark.parametrize("comments", [False, True])
def test_a_file_larger_than_one_chunk_reads_the_same(tmp_path, monkeypatch, comments):
    monkeypatch.setattr(token_chunks, "CHUNK_BYTES", 64)
    data = "".join(
        f"q{i % 37} 0 p{i} {i % 4}\n" + ("# comment x\n\n" if comments and i % 7 == 0 else "")
        for i in range(2_000)
    )
    path = write(tmp_path, data)
    fast = read_qrels_chunks(path)
    assert fast is not None
    same_order(fast, exact(path))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("q\xa01 0 d 1\nq2 0 e\u20032 1\n", {"q\xa01": {"d": 1}, "q2": {"e\u20032": 1}}),
        ("q1\x1f0 a b 1\n", {"q1\x1f0": {"b": 1}}),
        ("q1\v0 a 1\n", {"q1": {"a": 1}}),  # VT is C whitespace
    ],
)
def test_fields_are_split_on_c_whitespace_only_as_trec_eval_does(tmp_path, data, expected):
    assert trec_qrels.read_judgments(write(tmp_path, data)) == expected


def test_an_id_holding_a_character_python_splits_on_is_one_field_not_two(tmp_path):
    # Split on Python's whitespace this line has 4 fields; trec_eval reads 3 and stops.
    with pytest.raises(InputError, match="expected 4 fields") as caught:
        trec_qrels.read_judgments(write(tmp_path, "q1 0 a 1\nq1\xa00 b 1\n"))
    assert caught.value.line == 2

"""Run files: TREC runs read as trec_eval 10 reads them, JSON Lines runs, and errors naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.formats import token_chunks, trec_runs
from realrecall.runs import Run, load_run

PLAIN = "q1 Q0 a 1 3.5 tag\nq1 Q0 b 2 2.0 tag\nq2 Q0 c 1 -1e-3 tag\nq2 Q0 d 2 -2.5E+1 tag\n"


def write(tmp_path: Path, text: str | bytes, name: str = "run.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_a_plain_trec_run_is_read_with_scores_as_float64(tmp_path: Path) -> None:
    run = load_run(write(tmp_path, PLAIN))

    assert run.name == "run"
    assert run.query_ids == ("q1", "q2")
    assert run.scores("q2") == {"c": -0.001, "d": -25.0}
    assert run.ranked("q1") == ("a", "b")


@pytest.mark.parametrize(
    "variant",
    [
        "# a comment line\n" + PLAIN,
        "   # an indented comment\n" + PLAIN,
        PLAIN.replace("\n", "\r\n"),
        PLAIN.replace(" tag\n", " tag extra junk fields\n"),
        PLAIN.replace("\n", "\n\n"),
        PLAIN.replace(" ", "\t"),
        PLAIN.rstrip("\n"),
        PLAIN.replace(" 1 3.5", " 99 3.5"),  # the rank column is ignored
    ],
    ids=[
        "comment",
        "indented-comment",
        "crlf",
        "junk-fields",
        "blank-lines",
        "tabs",
        "no-final-newline",
        "rank",
    ],
)
def test_variants_trec_eval_accepts_read_the_same(tmp_path: Path, variant: str) -> None:
    expected = load_run(write(tmp_path, PLAIN, "plain.txt"))

    run = load_run(write(tmp_path, variant))

    assert run.to_lists() == expected.to_lists()
    assert {q: run.scores(q) for q in run.query_ids} == {q: expected.scores(q) for q in expected.query_ids}


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    run = load_run(write(tmp_path, b"\xef\xbb\xbf" + PLAIN.encode()))

    assert run.query_ids == ("q1", "q2")


def test_hash_signs_inside_ids_and_non_ascii_ids_are_kept(tmp_path: Path) -> None:
    run = load_run(write(tmp_path, "q#1 Q0 a#1 1 1.0 t\nq#1 Q0 Ä1 2 1.0 t\n"))

    assert run.ranked("q#1") == ("Ä1", "a#1")


def test_a_query_split_across_the_file_is_joined(tmp_path: Path) -> None:
    run = load_run(write(tmp_path, "q1 Q0 a 1 3 t\nq2 Q0 c 1 1 t\nq1 Q0 b 2 2 t\n"))

    assert run.ranked("q1") == ("a", "b")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2.0\n", 2, "expected 6 fields"),
        ("q1 Q0 a 1 high t\n", 1, "score 'high' is not a number"),
        ("q1 Q0 a 1 1_0 t\n", 1, "score '1_0' is not a number"),
        ("q1 Q0 a 1 nan t\n", 1, "score is NaN"),
        (
            "# c\nq1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 a 2 0.5 t\n",
            4,
            r"passage 'a' appears twice for query 'q1' \(first on line 2\)",
        ),
        (b"q1 Q0 a 1 1 t\nq1 Q0 \xff 2 1 t\n", 2, "not valid UTF-8"),
    ],
    ids=["missing-field", "word-score", "underscore-score", "nan-score", "duplicate", "bad-utf8"],
)
def test_bad_trec_lines_name_the_file_and_line(
    tmp_path: Path, text: str | bytes, line: int, message: str
) -> None:
    path = write(tmp_path, text)

    with pytest.raises(InputError, match=message) as error:
        load_run(path)

    assert error.value.path == str(path)
    assert error.value.line == line
    assert str(error.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_run_is_an_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="empty run: no result line found"):
        load_run(write(tmp_path, text))


def test_a_missing_file_or_a_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_run(tmp_path / "absent.txt")
    with pytest.raises(InputError, match="is a folder"):
        load_run(tmp_path)


def jsonl(*records: object) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def test_jsonl_ranked_lists_keep_their_order(tmp_path: Path) -> None:
    run = load_run(write(tmp_path, jsonl({"query_id": "q1", "ranked": ["b", "a", "c"]}), "run.jsonl"))

    assert run.ordered
    assert run.ranked("q1") == ("b", "a", "c")


def test_jsonl_scored_entries_and_score_maps_are_ordered_like_trec(tmp_path: Path) -> None:
    text = jsonl(
        {"query_id": "q1", "ranked": [{"id": "a", "score": 1}, {"id": "b", "score": 2}]},
        {"query_id": "q2", "scores": {"x": 0.5, "y": 0.5}},
    )
    run = load_run(write(tmp_path, "\ufeff" + text.replace("\n", "\r\n"), "run.jsonl"))

    assert run.ranked("q1") == ("b", "a")
    assert run.ranked("q2") == ("y", "x")


@pytest.mark.parametrize(
    ("records", "line", "message"),
    [
        (['{"query_id": "q1", "ranked": ["a"]}', "{not json"], 2, "malformed JSON"),
        (['["a"]'], None, None),
        (['{"ranked": ["a"]}'], 1, 'record has no string "query_id"'),
        (['{"query_id": "q1"}'], 1, 'record has no "ranked" or "scores"'),
        (['{"query_id": "q1", "ranked": ["a", "a"]}'], 1, "passage 'a' appears twice"),
        (['{"query_id": "q1", "ranked": ["a", 3]}'], 1, "passage id 3 must be a non-empty string"),
        (['{"query_id": "q1", "ranked": [{"id": "a"}]}'], 1, "ranked entry 'a' has no \"score\""),
        (['{"query_id": "q1", "scores": {"a": "x"}}'], 1, "score of 'a' is not a number"),
        (['{"query_id": "q1", "ranked": ["a"]}', '{"query_id": "q1", "ranked": ["b"]}'], 2, "appears twice"),
        (['{"query_id": "q1", "ranked": ["a"]}', '{"query_id": "q2", "scores": {"b": 1}}'], None, "mixes"),
        (['{"query_id": "  ", "ranked": ["a"]}'], 1, 'record has no string "query_id"'),
        (['{"query_id": "q1", "ranked": ["a", " "]}'], 1, "passage id ' ' must be a non-empty string"),
        (['{"query_id": "q1", "scores": {"": 1.0}}'], 1, "passage id '' must be a non-empty string"),
        (
            ['{"query_id": "q1", "ranked": ["a"]}', '{"query_id": "q2", "scores": {"b": 2, "b": 1}}'],
            2,
            "key 'b' appears twice in one object",
        ),
    ],
    ids=[
        "malformed",
        "not-object",
        "no-id",
        "no-ranked",
        "dup",
        "int-id",
        "no-score",
        "bad-score",
        "dup-q",
        "mixed",
        "blank-query-id",
        "blank-passage-id",
        "empty-score-key",
        "repeated-score-key",
    ],
)
def test_bad_jsonl_runs_name_the_line(
    tmp_path: Path, records: list[str], line: int | None, message: str | None
) -> None:
    path = write(tmp_path, "\n".join(records) + "\n", "run.jsonl")

    with pytest.raises(InputError, match=message or "expected a JSON object") as error:
        load_run(path)

    assert error.value.path == str(path)
    if line is not None:
        assert error.value.line == line


def test_from_lists_keeps_order_and_from_scores_copies_the_input() -> None:
    scores = {"q": {"a": 1.0, "b": 2.0}}
    run = Run.from_scores(scores, name="mine")
    scores["q"]["c"] = 9.0

    assert run.name == "mine"
    assert run.ranked("q") == ("b", "a")
    assert Run.from_lists({"q": ["z", "a", "m"]}).ranked("q") == ("z", "a", "m")
    assert run.ranked("absent") == ()
    assert "q" in run
    assert "absent" not in run
    assert len(run) == 1


def test_top_cuts_each_query_like_trec_eval_minus_m() -> None:
    run = Run.from_scores({"q": {"a": 1.0, "b": 3.0, "c": 2.0}, "r": {"x": 1.0}})

    assert run.top(2).to_lists() == {"q": ["b", "c"], "r": ["x"]}
    assert Run.from_lists({"q": ["c", "a", "b"]}).top(1).to_lists() == {"q": ["c"]}
    with pytest.raises(InputError, match="cannot cut a run at 0"):
        run.top(0)


@pytest.mark.parametrize("chunk_bytes", [64, 1 << 22])
def test_the_fast_and_exact_readers_agree(tmp_path: Path, monkeypatch, chunk_bytes: int) -> None:
    # Small chunks end inside a query, so the fast reader must carry a query over to the next chunk.
    monkeypatch.setattr(token_chunks, "CHUNK_BYTES", chunk_bytes)
    lines = [f"q{i // 50} Q0 p{i % 50} {i} {((i * 7919) % 1000) / 7!r} t\n" for i in range(5_000)]
    plain = write(tmp_path, "".join(lines), "plain.txt")
    # Comment and blank lines, here and there, are dropped by the fast reader as trec_eval skips them.
    commented = write(
        tmp_path,
        "# header\n"
        + "".join(line + ("  # note\n\n" if i % 97 == 0 else "") for i, line in enumerate(lines)),
        "commented.txt",
    )
    # Fields after the tag, on every line, are ignored as trec_eval ignores them.
    extra = write(tmp_path, "".join(line.replace(" t\n", " t extra 7\n") for line in lines), "extra.txt")

    fast, fast_commented, fast_extra = load_run(plain), load_run(commented), load_run(extra)
    exact = Run._build(trec_runs.read_run(plain), name="exact", ordered=False)

    for run in (fast, fast_commented, fast_extra):
        assert run._positional
        assert run.to_lists() == exact.to_lists()
        assert [run.scores(q) for q in run.query_ids] == [exact.scores(q) for q in exact.query_ids]

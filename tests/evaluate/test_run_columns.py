"""Big TREC runs read by pandas' C parser into columns: the same runs and scores as the exact reader.

``COLUMNS_MIN_BYTES`` is set to 0 so these small files take the columnar path; every file it cannot
read exactly as trec_eval does must fall through to the other readers (same result, same error).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall import score
from realrecall.bulk import bulk_mode
from realrecall.errors import InputError
from realrecall.formats import trec_fast, trec_runs
from realrecall.formats.trec_fast import columns
from realrecall.runs import Run, load_run

pytest.importorskip("pyarrow")

PLAIN = "q1 Q0 a 1 3.5 tag\nq1 Q0 b 2 2.0 tag\nq2 Q0 c 1 -1e-3 tag\nq2 Q0 d 2 -2.5E+1 tag\n"


@pytest.fixture(autouse=True)
def columns_for_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec_fast, "RUN_COLUMNS_MIN_BYTES", 0)


def write(tmp_path: Path, data: str | bytes, name: str = "run.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def exact(path: Path) -> Run:
    return Run._build(trec_runs.read_run(path), name=path.stem, ordered=False)


def same_run(run: Run, expected: Run) -> None:
    assert run.query_ids == expected.query_ids
    assert run.to_lists() == expected.to_lists()
    assert [run.scores(q) for q in run.query_ids] == [expected.scores(q) for q in expected.query_ids]


def test_a_plain_file_is_read_into_columns(tmp_path: Path) -> None:
    path = write(tmp_path, PLAIN)

    run = load_run(path)

    assert run._columns is not None
    assert run._positional
    same_run(run, exact(path))
    assert run.ranked("q2") == ("c", "d")
    assert list(run.passage_ids("q1")) == ["a", "b"]
    assert run.top(1).to_lists() == {"q1": ["a"], "q2": ["c"]}


@pytest.mark.parametrize(
    "variant",
    [
        PLAIN.replace("\n", "\r\n"),
        PLAIN.replace(" tag\n", " tag extra junk fields\n"),
        PLAIN.replace("\n", "\n\n  \n"),
        PLAIN.replace(" ", "\t"),
        PLAIN.replace(" Q0 ", " \t Q0  "),
        "  " + PLAIN.replace("\n", "\n\t"),
        PLAIN.rstrip("\n"),
        "\ufeff" + PLAIN,
        PLAIN.replace(" tag\n", " tag \r\n"),
        "q1 Q0 a 1 1 t\nq2 Q0 c 1 1 t\nq1 Q0 b 2 2 t\n",
        'q"1 Q0 "a 1 inf t\nq"1 Q0 b" 2 -Infinity t\nNA Q0 null 1 1. t\n001 Q0 002 1 .5 N/A\n',
        "q\xa01 Q0 \x1ca 1 1 t\nq\xa01 Q0 Ä 1 1 t\n",
        PLAIN.replace(" Q0 ", "  Q0   "),
        " " + PLAIN.replace("\nq2", "\n   q2"),
        PLAIN.replace(" tag\n", " tag \n"),
        PLAIN.replace(" tag\n", " tag x\n"),
        PLAIN.replace("q1 Q0 a 1 3.5 tag\n", "q1 Q0 a 1 3.5 tag x y z\n").replace(
            " d 2 -2.5E+1 tag", " d 2 -2.5E+1 tag w"
        ),
        "# a header line\n" + PLAIN,
        PLAIN.replace("q2", "q#2").replace(" c ", " c#1_100 "),
        "\ufeff# header\n" + PLAIN.replace("\nq2", "\n  # q2 Q0 z 1 9 tag\n\t#\nq2"),
        PLAIN.replace(" a ", " #a "),
        PLAIN.replace("\n", "\r\n#c\r\n"),
    ],
    ids=[
        "crlf",
        "junk-fields",
        "blank-lines",
        "tabs",
        "mixed-whitespace",
        "leading-whitespace",
        "no-final-newline",
        "bom",
        "space-before-crlf",
        "split-query",
        "quotes-words-numbers",
        "non-c-whitespace-in-ids",
        "runs-of-spaces",
        "leading-spaces",
        "space-before-lf",
        "extra-field-on-every-line",
        "ragged-extra-fields",
        "comment-line",
        "hash-in-ids",
        "comments-after-bom-and-whitespace",
        "id-starting-with-hash",
        "comments-in-crlf",
    ],
)
def test_variants_the_c_parser_takes_read_as_the_exact_reader_does(tmp_path: Path, variant: str) -> None:
    path = write(tmp_path, variant)

    run = load_run(path)

    same_run(run, exact(path))
    # Every variant stays in C, extra fields after the tag included (trec_eval ignores them).
    assert run._columns is not None


@pytest.mark.parametrize(
    "text",
    [
        PLAIN.replace("q1 Q0 a", "q1\vQ0 a"),
        PLAIN.replace("q1 Q0 a", "q1 Q0\fa"),
        PLAIN.replace("q1 Q0 a", "q1\rQ0 a"),
        PLAIN.replace("q1 Q0 a", "q1\0x Q0 a"),
    ],
    ids=["vertical-tab", "form-feed", "lone-cr", "nul"],
)
def test_bytes_the_c_parser_reads_differently_send_the_file_elsewhere(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)

    assert columns.read_run_columns(path) is None
    same_run(load_run(path), exact(path))


@pytest.mark.parametrize(
    "text",
    [
        "\xa0 Q0 a 1 1 t\nq2 Q0 b 1 1 t\n",
        "q1 Q0 a 1 1 t\n\u3000 Q0 b 1 1 t\n",
        "q1 Q0 a 1 1 t\n\x1f Q0 b 1 1 t\n",
    ],
    ids=["no-break-space", "ideographic-space", "unit-separator"],
)
def test_a_query_id_python_reads_as_blank_sends_the_file_elsewhere(tmp_path: Path, text: str) -> None:
    # trec_eval reads these bytes as an id, Python's strip as blank: the exact reader decides.
    path = write(tmp_path, text)

    assert columns.read_run_columns(path) is None
    same_run(load_run(path), exact(path))


def test_query_ids_whose_fingerprints_are_equal_are_compared_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Distinct fingerprints tell distinct ids; equal ones (a collision, forced here) are compared as text.
    from realrecall.formats.trec_fast.arrow import strings

    assert columns._distinct(strings(["q1", "q2", "q10"]))
    assert not columns._distinct(strings(["q1", "q2", "q1"]))
    monkeypatch.setattr(columns, "fingerprints", lambda ids: np.zeros(len(ids), dtype=np.uint64))
    assert columns._distinct(strings(["q1", "q2", "q10"]))
    assert not columns._distinct(strings(["q1", "q2", "q1"]))
    assert not columns._any_blank(strings(["q1", "Ä", "a b"]))
    assert columns._any_blank(strings(["q1", "\u2003"]))


COMMENTED = (
    "\ufeff# header\n"
    + PLAIN.replace("\nq2", "\n  # q2 Q0 z 1 9 tag\n\n\t#\nq2").replace(" c ", " c#1 ").replace(" d ", " #d ")
    + "#\n"
)


def comments_by_line(text: str) -> list[int]:
    """Lines whose first field starts with "#", as trec_eval's reader tells them (the oracle)."""
    return [
        n
        for n, line in enumerate(text.lstrip("\ufeff").split("\n"))
        if line.split()[:1] and line.split()[0][0] == "#"
    ]


@pytest.mark.parametrize("block", [1, 2, 7, 64, 1 << 24])
def test_comment_lines_are_found_across_scan_blocks(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(columns, "_SCAN_BYTES", block)

    found = columns.comment_lines(COMMENTED.encode())

    assert found == comments_by_line(COMMENTED) == [0, 3, 5, 7, 9, 11]


@given(
    st.lists(
        st.sampled_from(["q1 Q0 a 1 1 t", "# c", "  # x", "\t#", "#q Q0 b", "q#1 Q0 #b 1 1 t#", "", " "])
    ),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 3, 8, 64]),
)
@settings(max_examples=200, deadline=None)
def test_comment_lines_match_a_split_of_every_line(
    lines: list[str], crlf: bool, bom: bool, block: int
) -> None:
    text = ("\ufeff" if bom else "") + "".join(line + ("\r\n" if crlf else "\n") for line in lines)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "_SCAN_BYTES", block)
        assert columns.comment_lines(text.encode()) == comments_by_line(text)


@pytest.mark.parametrize("cap", ["_MAX_COMMENT_LINES", "_MAX_LOOKBACKS"])
def test_past_its_caps_the_comment_scan_hands_the_file_to_the_chunked_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str
) -> None:
    path = write(tmp_path, COMMENTED)
    assert columns.read_run_columns(path) is not None
    monkeypatch.setattr(columns, cap, 1)

    assert columns.read_run_columns(path) is None
    run = load_run(path)
    assert run._positional  # the chunked reader, not the exact one
    same_run(run, exact(path))


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2.0\n", 2, "expected 6 fields"),
        ("q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2.0 \r\n", 2, "expected 6 fields"),
        # Runs of spaces are one separator: these lines have five fields, not six with an empty one.
        ("q1 Q0 a 1 3.5 t\nq1  Q0 b 2 2.0\n", 2, "expected 6 fields"),
        ("q1 Q0 a 1 3.5 t\nq1 Q0 b  2.0 t\n", 2, "expected 6 fields"),
        ("q1 Q0 a 1 high t\n", 1, "score 'high' is not a number"),
        ("q1 Q0 a 1 1_0 t\n", 1, "score '1_0' is not a number"),
        ("q1 Q0 a 1 0x10 t\n", 1, "score '0x10' is not a number"),
        ("q1 Q0 a 1 nan t\n", 1, "score is NaN"),
        ("q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 a 2 0.5 t\n", 3, r"passage 'a' appears twice for query 'q1'"),
        ("q1 Q0 a 1 1 t\nq1 Q0 a 2 0.5 t\n", 2, r"passage 'a' appears twice for query 'q1'"),
        (b"q1 Q0 a 1 1 t\nq1 Q0 \xff 2 1 t\n", 2, "not valid UTF-8"),
        # A blank line, then a line a field short: as many tokens as one good line, still an error.
        ("\nq1 Q0 q1 1 1\n", 2, "expected 6 fields"),
        ("# comment\nq1 Q0 a 1 1 t\nq1 Q0 b 2 2\n", 3, "expected 6 fields"),
    ],
    ids=[
        "missing-field",
        "missing-field-crlf",
        "missing-field-double-space",
        "missing-rank-double-space",
        "word",
        "underscore",
        "hex",
        "nan",
        "split-duplicate",
        "duplicate",
        "bad-utf8",
        "blank-then-short",
        "comment-then-short",
    ],
)
def test_bad_lines_still_name_the_line(tmp_path: Path, text: str | bytes, line: int, message: str) -> None:
    path = write(tmp_path, text)

    with pytest.raises(InputError, match=message) as error:
        load_run(path)

    assert error.value.line == line


@given(st.lists(st.text(alphabet="ab#\xe90", max_size=40), min_size=1, max_size=60), st.integers(0, 60))
@settings(max_examples=200, deadline=None)
def test_a_fingerprint_depends_on_the_id_alone(ids: list[str], cut: int) -> None:
    # Alone, an id takes the whole-array steps; among shorter ones, the steps by index.
    import pyarrow as pa

    whole = columns.fingerprints(pa.array(ids)).tolist()
    parts = [pa.array(ids[:cut], type=pa.string()), pa.array(ids[cut:], type=pa.string())]
    split = columns.fingerprints(pa.chunked_array(parts)).tolist()
    alone = [int(columns.fingerprints(pa.array([id_]))[0]) for id_ in ids]

    assert whole == split == alone
    assert len(set(whole)) == len(set(ids))  # 64 bits: a collision here would be a bug, not chance


def test_equal_fingerprints_in_one_query_send_the_file_to_the_exact_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every id hashes alike: distinct ids look like duplicates, so the columns are declined.
    monkeypatch.setattr(columns, "fingerprints", lambda ids: np.zeros(len(ids), dtype=np.uint64))
    path = write(tmp_path, PLAIN)

    assert columns.read_run_columns(path) is None
    same_run(load_run(path), exact(path))


def test_a_judged_id_whose_fingerprint_collides_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ids hash by their first letter: 'a2' (judged, not retrieved) collides with 'a1' (retrieved).
    def by_first_letter(ids: object) -> np.ndarray:
        return np.array([ord(text[0]) for text in ids.to_pylist()], dtype=np.uint64)  # type: ignore[attr-defined]

    monkeypatch.setattr(columns, "fingerprints", by_first_letter)
    path = write(tmp_path, "q1 Q0 a1 1 2 t\nq1 Q0 b1 2 1 t\n")
    run = load_run(path)
    assert run._columns is not None

    assert score({"q1": {"a2": 1}}, run, ["recall@10", "mrr@10"]) == {"recall@10": 0.0, "mrr@10": 0.0}
    assert score({"q1": {"b1": 1}}, run, ["recall@10", "mrr@10"]) == {"recall@10": 1.0, "mrr@10": 0.5}


def test_scores_from_columns_equal_scores_from_dicts(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    lines, qrels = [], {}
    for q in range(300):
        depth = int(rng.integers(1, 60))
        ids = rng.choice(500, size=depth, replace=False)
        # Few distinct scores: ties are broken by passage id as trec_eval does.
        scores = rng.integers(0, 5, size=depth) / 4
        lines += [f"q{q} Q0 p{i} 0 {s!r} t\n" for i, s in zip(ids.tolist(), scores.tolist(), strict=True)]
        judged = rng.choice(500, size=int(rng.integers(1, 8)), replace=False)
        qrels[f"q{q}"] = {f"p{i}": int(rng.integers(0, 3)) for i in judged.tolist()}
    qrels["absent"] = {"p1": 1}
    path = write(tmp_path, "".join(lines))
    metrics = ["recall@5", "recall@100", "mrr@10", "ndcg@10", "precision@3"]

    columns = load_run(path)

    assert columns._columns is not None
    assert score(qrels, columns, metrics) == score(qrels, exact(path), metrics)


def test_ranked_many_equals_ranked_query_by_query(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    lines = []
    for q in range(200):
        depth = int(rng.integers(1, 40))
        ids = rng.choice(300, size=depth, replace=False)
        # Half the queries have tied scores, which are ordered by id.
        scores = rng.integers(0, 4, size=depth) / 2 if q % 2 else rng.random(depth)
        lines += [f"q{q} Q0 p{i} 0 {s!r} t\n" for i, s in zip(ids.tolist(), scores.tolist(), strict=True)]
    run = load_run(write(tmp_path, "".join(lines)))
    asked = [f"q{q}" for q in range(0, 205, 3)] + ["absent"]

    assert run._columns is not None
    for depth in (1, 5, 64):
        assert run.ranked_many(asked, depth) == [tuple(run.ranked(q)[:depth]) for q in asked]


@pytest.mark.parametrize("columnar", [True, False])
def test_scoring_a_block_of_queries_at_a_time_gives_the_same_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columnar: bool
) -> None:
    from realrecall.evaluate import scoring

    rng = np.random.default_rng(11)
    lines, qrels = [], {}
    for q in range(50):
        ids = rng.choice(200, size=int(rng.integers(1, 30)), replace=False)
        scores = rng.integers(0, 4, size=len(ids)) / 2  # ties, broken by id
        lines += [f"q{q} Q0 p{i} 0 {s!r} t\n" for i, s in zip(ids.tolist(), scores.tolist(), strict=True)]
        qrels[f"q{q}"] = {
            f"p{i}": int(rng.integers(0, 3)) for i in rng.choice(200, 4, replace=False).tolist()
        }
    qrels.update({"absent": {"p1": 1}, "q7": {"p1": 0}})
    path = write(tmp_path, "".join(lines))
    run = load_run(path) if columnar else exact(path)
    assert (run._columns is not None) is columnar
    metrics = ["recall@5", "mrr@10", "ndcg@10", "precision@3", "passage_recall@20"]
    whole = scoring.score_queries(qrels, run, metrics)

    monkeypatch.setattr(scoring, "_QUERY_BLOCK", 7)  # 8 blocks, the last one short
    blocks = scoring.score_queries(qrels, run, metrics)

    assert {m: v.tolist() for m, v in blocks.values.items()} == {
        m: v.tolist() for m, v in whole.values.items()
    }
    assert blocks.first_relevant_rank.tolist() == whole.first_relevant_rank.tolist()
    assert (blocks.missing_run, blocks.no_relevant) == (whole.missing_run, whole.no_relevant)
    assert blocks.missing_run == ("absent",)
    assert "q7" in blocks.no_relevant
    assert blocks.gold_order is not None
    assert whole.gold_order is not None
    assert blocks.gold_order.tolist() == whole.gold_order.tolist()


def test_the_parsers_memory_goes_back_before_each_next_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given back only at the end, the parser's freed buffers stacked on the peak of reading the run.
    calls: list[str] = []
    for name in ("give_back_memory", "_group_by_query", "fingerprints"):
        real = getattr(columns, name)
        monkeypatch.setattr(columns, name, lambda *a, _n=name, _f=real: calls.append(_n) or _f(*a))

    assert load_run(write(tmp_path, PLAIN))._columns is not None
    assert calls == [
        "give_back_memory",
        "_group_by_query",
        "fingerprints",  # of the query ids, within the grouping: are they distinct
        "give_back_memory",
        "fingerprints",
        "give_back_memory",
    ]


def parsers_tried(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the parsers ``read_run_columns`` tries, in order: "arrow", "space" or "whitespace"."""
    calls: list[str] = []
    arrow, pandas = columns._parse_arrow, columns._parse
    monkeypatch.setattr(
        columns,
        "_parse_arrow",
        lambda path, layout: calls.append("arrow") or arrow(path, layout),
    )
    monkeypatch.setattr(
        columns,
        "_parse",
        lambda path, spaces_only, skip: (
            calls.append("space" if spaces_only else "whitespace")
            or pandas(path, spaces_only=spaces_only, skip=skip)
        ),
    )
    return calls


@pytest.mark.parametrize(
    ("text", "parsers"),
    [
        (PLAIN, ["arrow"]),
        (PLAIN.replace(" ", "\t"), ["arrow"]),  # tabs in a file with no space
        (PLAIN.replace(" tag\n", " tag \n"), ["space"]),  # an empty field after the tag, ignored
        (PLAIN.replace(" tag\n", " tag x\n"), ["arrow"]),  # a field after the tag on every line
        ("# a header\n#\n" + PLAIN.replace("\nq2", "\n\n# q2\r\nq2"), ["arrow"]),  # other lengths
        ("#q1 Q0 z 1 9 tag\n" + PLAIN, ["arrow"]),  # a comment as long as the lines, dropped after
        ("# a b c d e\n" + PLAIN, ["arrow", "space"]),  # ... whose score field is a word
        (PLAIN.replace(" tag\n", " tag x\n", 1), ["arrow", "space"]),  # one line longer
        (PLAIN.replace(" Q0 ", "  Q0  "), ["space"]),
        (" " + PLAIN, ["space"]),  # a line starting with its separator
        (PLAIN.replace("\nq2", "\n  \nq2", 1), ["space", "whitespace"]),  # a line of spaces
        (PLAIN.replace(" Q0 ", "\tQ0\t"), ["whitespace"]),
    ],
    ids=[
        "single-spaces",
        "single-tabs",
        "trailing-spaces",
        "field-after-tag",
        "comments-and-blank-lines",
        "comment-of-six-fields",
        "comment-with-a-word-for-score",
        "ragged",
        "runs-of-spaces",
        "leading-space",
        "line-of-spaces",
        "tabs-and-spaces",
    ],
)
def test_each_file_goes_to_the_quickest_parser_that_reads_it_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, parsers: list[str]
) -> None:
    # pyarrow takes one separator byte between fields; pandas' single-space separator takes runs of
    # spaces, and its whitespace pattern anything else.
    calls = parsers_tried(monkeypatch)

    run = load_run(write(tmp_path, text))

    assert calls == parsers
    assert run._columns is not None
    same_run(run, exact(tmp_path / "run.txt"))


def test_a_file_that_is_not_utf8_goes_to_the_reader_that_names_its_line(tmp_path: Path) -> None:
    # The C parsers check only the fields they keep; the exact reader checks every byte.
    path = write(tmp_path, PLAIN.encode().replace(b" Q0 b", b" Q\xff0 b"))

    assert columns.read_run_columns(path) is None
    with pytest.raises(InputError, match="not valid UTF-8") as error:
        load_run(path)
    assert error.value.line == 2


def test_the_reader_runs_on_small_pages_in_bulk_mode_and_puts_numpy_s_hint_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # numpy's huge-page hint made the reader's fresh arrays slow to touch (see realrecall.bulk); the
    # hint is the whole process's, so it is switched only where the caller opted in.
    hint = np._core.multiarray._get_madvise_hugepage
    seen: list[bool] = []
    real = columns._parse_arrow
    monkeypatch.setattr(
        columns,
        "_parse_arrow",
        lambda path, layout: seen.append(hint()) or real(path, layout),
    )
    before = hint()

    assert load_run(write(tmp_path, PLAIN))._columns is not None
    with bulk_mode():
        assert load_run(write(tmp_path, PLAIN))._columns is not None

    assert seen == [before, False]
    assert hint() == before


def test_scoring_a_columnar_run_makes_no_python_string_per_query(tmp_path: Path) -> None:
    # Rows are found in the Arrow column of query ids; the id -> row dict is built only if asked for.
    path = write(tmp_path, PLAIN)
    run = load_run(path)

    values = score({"q2": {"d": 1}, "q9": {"a": 1}, "q1": {"b": 1}}, run, ["mrr", "recall@1"])

    assert run._row_index is None
    assert run._rows_of(["q2", "q9", "q1"]).tolist() == [1, -1, 0]
    assert values == score({"q2": {"d": 1}, "q9": {"a": 1}, "q1": {"b": 1}}, exact(path), ["mrr", "recall@1"])
    assert run.query_ids == ("q1", "q2")
    assert run._row_index == {"q1": 0, "q2": 1}

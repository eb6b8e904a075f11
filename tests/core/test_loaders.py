"""Every loader reads real-world files and rejects bad ones with one line naming file, line and fix."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.gold import GoldQuery, load_gold, write_gold


def write(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


GOOD_QUERY = {"query_id": "q1", "query": "how do I reset it", "gold": {"p1": 1}, "origin": "real"}


def test_gold_jsonl_keeps_every_field_and_unknown_metadata(tmp_path):
    record = {
        **GOOD_QUERY,
        "type": "conceptual",
        "language": "en",
        "source": "ticket",
        "gold": {"p1": 2, "p2": 0},
    }
    gold = load_gold(write(tmp_path / "g.jsonl", jsonl(record)))
    (query,) = gold.queries
    assert query == GoldQuery(
        "q1", "how do I reset it", {"p1": 2, "p2": 0}, "real", "conceptual", "en", {"source": "ticket"}
    )
    assert query.relevant() == {"p1"}
    assert query.to_record() == record


def test_gold_ids_list_means_grade_one(tmp_path):
    record = {"query_id": 7, "query": "x", "gold_ids": ["a", "b"]}
    (query,) = load_gold(write(tmp_path / "g.jsonl", jsonl(record))).queries
    assert query.query_id == "7"
    assert query.gold == {"a": 1, "b": 1}


def test_bom_and_crlf_are_read_like_plain_utf8(tmp_path):
    text = "\ufeff" + jsonl(GOOD_QUERY, {**GOOD_QUERY, "query_id": "q2"}).replace("\n", "\r\n")
    gold = load_gold(write(tmp_path / "g.jsonl", text))
    assert [q.query_id for q in gold] == ["q1", "q2"]
    assert gold["q2"].query == "how do I reset it"


def test_blank_lines_are_skipped_and_line_numbers_stay_true(tmp_path):
    path = write(tmp_path / "g.jsonl", jsonl(GOOD_QUERY) + "\n\n" + '{"query_id": "q2", "query": "y"}\n')
    with pytest.raises(InputError) as info:
        load_gold(path)
    assert str(info.value).startswith(f"{path}:4: ")
    assert "gold" in str(info.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "empty file: no query found"),
        ("\n  \n", "empty file: no query found"),
        ('{"query_id": "q1", "query": "x", "gold": {"p1": 1}\n', "1: malformed JSON"),
        ("[1, 2]\n", "1: expected a JSON object, got list"),
        (jsonl(GOOD_QUERY, GOOD_QUERY), "2: duplicate query_id 'q1' (first seen on line 1)"),
        (
            jsonl(*({**GOOD_QUERY, "query_id": query_id} for query_id in (7, "q2", "7"))),
            "3: duplicate query_id '7' (first seen on line 1)",  # an integer id is its text
        ),
        (jsonl({**GOOD_QUERY, "gold": {}}), "1: empty gold: the query names no passage"),
        (jsonl({**GOOD_QUERY, "gold_ids": []} | {"gold": {}}), "1: empty gold"),
        (jsonl({k: v for k, v in GOOD_QUERY.items() if k != "gold"}), '1: query has no "gold" or "gold_ids"'),
        (jsonl({**GOOD_QUERY, "gold": {"p1": "yes"}}), "grade of passage 'p1' must be an integer"),
        (jsonl({**GOOD_QUERY, "origin": "llm"}), "1: unknown origin 'llm'"),
        (jsonl({**GOOD_QUERY, "query": ""}), '1: query has no "query" text'),
        (jsonl({k: v for k, v in GOOD_QUERY.items() if k != "query_id"}), '1: query has no "query_id"'),
    ],
)
def test_bad_gold_files_get_one_clear_line(tmp_path, content, expected):
    path = write(tmp_path / "gold.jsonl", content)
    with pytest.raises(InputError) as info:
        load_gold(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert expected in message
    assert "\n" not in message
    assert info.value.exit_code == 2


def test_non_utf8_file_is_named_with_a_fix(tmp_path):
    text = json.dumps({**GOOD_QUERY, "query": "Größe"}, ensure_ascii=False) + "\n"
    path = write(tmp_path / "g.jsonl", text, encoding="latin-1")
    expected = r"g.jsonl:1: not valid UTF-8 \(byte 0xf6 at column \d+\); save the file as UTF-8"
    with pytest.raises(InputError, match=expected):
        load_gold(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_gold(tmp_path / "nope.jsonl")


def test_trec_qrels_with_comments_and_hash_in_ids(tmp_path):
    text = "# judged by NIST\n301 0 CR#93E-1860 0\n301 0 FBIS3-10082 1\n\n302 0 d1 -1\n"
    gold = load_gold(write(tmp_path / "qrels.txt", text), origin="real")
    assert gold.qrels() == {"301": {"CR#93E-1860": 0, "FBIS3-10082": 1}, "302": {"d1": -1}}
    assert gold.origins() == {"real"}
    assert gold["302"].relevant() == frozenset()


def test_trec_qrels_short_line_names_the_format(tmp_path):
    path = write(tmp_path / "qrels.txt", "301 0 d1 1\n301 d2 1\n")
    with pytest.raises(InputError, match=r"qrels.txt:2: expected 4 fields"):
        load_gold(path)


def test_beir_folder_and_qrels_file_give_the_same_set(tmp_path):
    (tmp_path / "qrels").mkdir()
    write(tmp_path / "queries.jsonl", jsonl({"_id": "1", "text": "what is x", "metadata": {}}))
    write(tmp_path / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t2\n")
    by_folder = load_gold(tmp_path)
    by_file = load_gold(tmp_path / "qrels" / "test.tsv")
    assert by_folder.qrels() == by_file.qrels() == {"1": {"d1": 1, "d2": 2}}
    assert by_folder["1"].query == "what is x"


def test_write_gold_round_trips(tmp_path):
    gold = load_gold(
        write(tmp_path / "g.jsonl", jsonl(GOOD_QUERY, {**GOOD_QUERY, "query_id": "q2", "type": "lookup"}))
    )
    out = tmp_path / "out" / "copy.jsonl"
    assert write_gold(out, gold.queries) == 2
    assert load_gold(out).queries == gold.queries


def test_missing_passages_are_listed_for_a_warning(tmp_path):
    gold = load_gold(write(tmp_path / "g.jsonl", jsonl({**GOOD_QUERY, "gold": {"p1": 1, "p9": 1, "p0": 0}})))
    assert gold.missing_passages(["p1"]) == [("q1", "p9")]


def test_corpus_jsonl_beir_and_mapping(tmp_path):
    beir = load_corpus(write(tmp_path / "c.jsonl", jsonl({"_id": "d1", "title": "T", "text": "body"})))
    assert beir["d1"].searchable_text() == "T\nbody"
    mapping = load_corpus(write(tmp_path / "c.json", json.dumps({"a": "one", "b": "two"})))
    assert mapping.ids == ("a", "b")
    assert "b" in mapping
    assert mapping["a"].content_hash != mapping["b"].content_hash


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            jsonl({"id": "a", "text": "x"}, {"id": "a", "text": "y"}),
            "2: duplicate chunk id 'a' (first seen on line 1)",
        ),
        (jsonl({"text": "x"}), '1: chunk has no "id"'),
        (jsonl({"id": "a"}), '1: chunk has no "text" string'),
        (jsonl({"id": "a", "text": "x", "metadata": []}), '1: "metadata" must be an object'),
        ("", "empty file: no chunk found"),
        (
            '{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "text": "z"}\n',
            "2: key 'text' appears twice in one object",
        ),
    ],
)
def test_bad_corpus_files_get_one_clear_line(tmp_path, content, expected):
    path = write(tmp_path / "corpus.jsonl", content)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)


def test_reference_corpora_load(reference_data):
    scifact = load_gold(reference_data / "scifact")
    assert len(scifact) == 300
    assert not scifact.missing_passages(load_corpus(reference_data / "scifact" / "corpus.jsonl").ids)
    assert len(load_corpus(reference_data / "chroma-docs" / "chroma_docs.json")) == 216


def gold_line(grade_text: str) -> str:
    """A gold record whose grade is written verbatim (JSON's NaN and Infinity cannot come from dumps)."""
    return '{"query_id": "q2", "query": "how do I reset it", "gold": {"p1": ' + grade_text + "}}\n"


@pytest.mark.parametrize(
    ("grade", "shown"),
    [
        ("NaN", "got NaN"),
        ("Infinity", "got Infinity"),
        ("-Infinity", "got -Infinity"),
        ("1e400", "got Infinity"),
        ("1.5", "got 1.5"),
        ("true", "got true"),
        ('"1"', 'got "1"'),
        ("null", "got null"),
        ("1e30", "out of range"),
        ("123456789012345678901234567890", "out of range"),
        ("-2147483648", "out of range"),
    ],
)
def test_a_grade_that_is_not_a_small_integer_is_one_line_naming_file_line_and_fix(tmp_path, grade, shown):
    path = write(tmp_path / "gold.jsonl", jsonl(GOOD_QUERY) + gold_line(grade))
    with pytest.raises(InputError) as info:
        load_gold(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: grade of passage 'p1' ")
    assert shown in message
    assert "use 1 for relevant" in message
    assert "\n" not in message


def test_one_bad_grade_among_plain_ones_is_named(tmp_path):
    # Plain records skip the per-grade checks; one odd grade sends the record through them.
    record = {**GOOD_QUERY, "gold": {"p0": 2, "p1": True, "p2": 1}}
    with pytest.raises(InputError, match=r"gold.jsonl:1: grade of passage 'p1' must be an integer, got true"):
        load_gold(write(tmp_path / "gold.jsonl", jsonl(record)))
    record = {**GOOD_QUERY, "gold": {"p0": 2, "p1": 1.0, "p2": -2147483647}}
    assert load_gold(write(tmp_path / "ok.jsonl", jsonl(record))).qrels() == {
        GOOD_QUERY["query_id"]: {"p0": 2, "p1": 1, "p2": -2147483647}
    }


def test_integer_valued_float_grades_and_the_largest_grade_are_read(tmp_path):
    path = write(tmp_path / "gold.jsonl", gold_line("2.0").replace("q2", "a") + gold_line("2147483647"))
    assert load_gold(path).qrels() == {"a": {"p1": 2}, "q2": {"p1": 2147483647}}


@pytest.mark.parametrize(
    ("grade", "expected"),
    [
        ("nan", "grade 'nan' of passage 'd1' is not an integer"),
        ("inf", "grade 'inf' of passage 'd1' is not an integer"),
        ("1.0", "grade '1.0' of passage 'd1' is not an integer"),
        ("1_0", "grade '1_0' of passage 'd1' is not an integer"),
        ("\u0661", "is not an integer"),
        ("99999999999999999999999", "grade of passage 'd1' is out of range"),
    ],
)
def test_bad_trec_and_beir_grades_are_one_line_with_the_fix(tmp_path, grade, expected):
    qrels = write(tmp_path / "qrels.txt", f"301 0 d0 1\n301 0 d1 {grade}\n")
    with pytest.raises(InputError, match=rf"qrels.txt:2: .*{expected}.*; .*use 1 for relevant"):
        load_gold(qrels)
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    write(tmp_path / "beir" / "queries.jsonl", jsonl({"_id": "301", "text": "what is x"}))
    write(tmp_path / "beir" / "qrels" / "test.tsv", f"query-id\tcorpus-id\tscore\n301\td1\t{grade}\n")
    with pytest.raises(InputError, match=rf"test.tsv:2: .*{expected}"):
        load_gold(tmp_path / "beir")


def test_a_qrels_judgment_graded_twice_differently_is_refused_and_a_repeat_is_not(tmp_path):
    repeated = load_gold(write(tmp_path / "same.txt", "1 0 d1 1\n1 0 d2 0\n1 0 d1 1\n"))
    assert repeated.qrels() == {"1": {"d1": 1, "d2": 0}}
    path = write(tmp_path / "qrels.txt", "1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n")
    with pytest.raises(
        InputError, match=r"qrels.txt:3: passage 'd1' of query '1' is graded 2 here and 1 on line 1"
    ):
        load_gold(path)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"query_id": "  ", "query": "x", "gold": {"p1": 1}}, '1: "query_id" must be a non-empty string'),
        ({"query_id": "", "query": "x", "gold": {"p1": 1}}, "got an empty string"),
        ({"query_id": 1.5, "query": "x", "gold": {"p1": 1}}, "got float 1.5"),
        ({"query_id": "q", "query": "x", "gold": {" ": 1}}, "1: passage id must be a non-empty string"),
        ({"query_id": "q", "query": "x", "gold": {"p1": 1, "\t": 2}}, "1: passage id must be a non-empty"),
        ({"query_id": "q", "query": "x", "gold_ids": [""]}, "1: passage id must be a non-empty string"),
    ],
)
def test_empty_or_blank_ids_in_a_gold_set_are_refused(tmp_path, record, expected):
    path = write(tmp_path / "gold.jsonl", jsonl(record))
    with pytest.raises(InputError) as info:
        load_gold(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)
    assert "write ids as non-empty strings" in str(info.value)


def test_beir_queries_with_bad_ids_text_or_metadata_are_named(tmp_path):
    (tmp_path / "qrels").mkdir()
    write(tmp_path / "qrels" / "test.tsv", "1\td1\t1\n")
    cases = [
        ({"_id": " ", "text": "x"}, '1: "_id" must be a non-empty string'),
        ({"_id": "1", "text": None}, '1: "text" must be a string'),
        ({"_id": "1", "text": "x", "metadata": [1]}, '1: "metadata" must be an object'),
    ]
    for record, expected in cases:
        write(tmp_path / "queries.jsonl", jsonl(record))
        with pytest.raises(InputError, match=expected):
            load_gold(tmp_path)
    write(tmp_path / "queries.jsonl", jsonl({"_id": "1", "text": "x"}, {"_id": "1", "text": "y"}))
    with pytest.raises(InputError, match=r"queries.jsonl:2: duplicate query id '1' \(first seen on line 1\)"):
        load_gold(tmp_path)
    write(tmp_path / "qrels" / "test.tsv", " \td1\t1\n")
    with pytest.raises(InputError, match=r"test\.tsv:1: query-id must be a non-empty string"):
        load_gold(tmp_path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (jsonl({"id": "", "text": "x"}), '1: "id" must be a non-empty string, got an empty string'),
        (jsonl({"id": " \t", "text": "x"}), '1: "id" must be a non-empty string, got an empty string'),
        (jsonl({"id": 1.5, "text": "x"}), '1: "id" must be a non-empty string, got float 1.5'),
        (jsonl({"id": True, "text": "x"}), '1: "id" must be a non-empty string, got bool True'),
        (jsonl({"id": "a", "text": "x"}, {"_id": "", "text": "x"}), '2: "_id" must be a non-empty string'),
    ],
)
def test_empty_blank_or_float_chunk_ids_are_refused_with_file_line_and_fix(tmp_path, content, expected):
    path = write(tmp_path / "corpus.jsonl", content)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert str(info.value).startswith(f"{path}:")
    assert expected in str(info.value)
    assert 'write ids as non-empty strings, e.g. "doc1-chunk3"' in str(info.value)


def test_integer_chunk_ids_read_as_text(tmp_path):
    assert load_corpus(write(tmp_path / "c.jsonl", jsonl({"id": 7, "text": "x"}))).ids == ("7",)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"": "text"}', "chunk id must be a non-empty string, got an empty string"),
        ('{"  ": "text"}', "chunk id must be a non-empty string"),
        ('{"a": "one", "a": "two"}', "duplicate chunk id 'a'"),
        ('{"a": {"text": "x"}}', "text of chunk 'a' is not a string"),
        ("{}", "expected a non-empty JSON object"),
        ('[["a", "x"]]', "expected a non-empty JSON object"),
    ],
)
def test_a_json_object_corpus_is_checked_like_json_lines(tmp_path, content, expected):
    path = write(tmp_path / "corpus.json", content)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('{"query_id": "q2", "query": "x", "gold": {"p1": 1, "p1": 0}}', "p1"),
        ('{"query_id": "q2", "query": "x", "query": "y", "gold": {"p1": 1}}', "query"),
    ],
)
def test_a_key_given_twice_in_a_gold_line_is_refused_not_last_one_wins(tmp_path, line, key):
    path = write(tmp_path / "gold.jsonl", jsonl(GOOD_QUERY) + line + "\n")
    with pytest.raises(InputError) as info:
        load_gold(path)
    assert str(info.value) == (
        f"{path}:2: key {key!r} appears twice in one object; JSON keeps only the last one: give each passage "
        "(and field) once"
    )


def test_a_set_is_bare_when_no_query_has_fields_evidence_or_provenance(tmp_path):
    # TREC qrels are bare as read (load_gold says so without looking); any other set is looked at.
    from realrecall.evidence import Evidence
    from realrecall.gold import GoldSet

    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 p1 1\nq1 0 p2 0\nq2 0 p3 2\n")
    loaded = load_gold(path)
    assert loaded.bare is True
    assert GoldSet(loaded.queries).bare is True  # found by looking: the same
    plain = GoldQuery("q3", "text", {"p": 1}, "real", "lookup", "en")
    assert GoldSet((plain,)).bare is True
    assert GoldSet((plain, GoldQuery("q4", "", {"p": 1}, metadata={"team": "a"}))).bare is False
    assert GoldSet((plain, GoldQuery("q4", "", {}, evidence=(Evidence("D", "t"),)))).bare is False
    jsonl = tmp_path / "gold.jsonl"
    jsonl.write_text('{"query_id": "q1", "query": "x", "gold": {"p": 1}, "ticket": 7}\n')
    assert load_gold(jsonl).bare is False


@pytest.mark.parametrize("origin", ["real", None])
def test_a_trec_qrels_query_is_made_as_the_constructor_makes_it(tmp_path, origin):
    # load_gold makes qrels queries without GoldQuery.__post_init__ (the reader checked the grades):
    # every field must still be what the constructor gives, including ones added later.
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 p1 1\nq1 0 p2 0\nq2 0 p3 2\n")
    loaded = load_gold(path, origin=origin)
    assert [query.query_id for query in loaded] == ["q1", "q2"]
    for query in loaded:
        built = GoldQuery(query.query_id, "", dict(query.gold), origin)
        assert query == built
        for field in dataclasses.fields(GoldQuery):
            mine, theirs = getattr(query, field.name), getattr(built, field.name)
            assert mine == theirs, field.name
            assert type(mine) is type(theirs), field.name
    assert loaded["q1"].gold == {"p1": 1, "p2": 0}

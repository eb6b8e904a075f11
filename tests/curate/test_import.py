"""`realrecall gold import`: tables (CSV, JSONL, Parquet) into a real gold set, nothing dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from realrecall.curate import ImportSpec, import_gold, read_table, stable_query_id
from realrecall.errors import InputError
from realrecall.gold import load_gold

COLUMNS = ("ticket", "question", "doc", "clicks")
TICKETS = [
    dict(zip(COLUMNS, row, strict=True))
    for row in [
        ("T1", "How are sync conflicts resolved?", "en-sync-001", "3"),
        ("T2", "how are  sync conflicts resolved? ", "en-release-034", "1"),
        ("T3", "Where is the default of sync.interval_ms?", "en-config-001", "5"),
        ("T4", "How do I restore a backup?", "en-gone-999", "2"),
        ("T5", "", "en-backup-002", "1"),
        ("T6", "Wie werden Konflikte bei der Synchronisierung gelöst?", "de-sync-001", "4"),
    ]
]


def write_table(path: Path, rows: list[dict[str, str]]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def spec(**changes: object) -> ImportSpec:
    return ImportSpec(question="question", passage="doc", **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_each_table_format_imports_the_same_gold_set(tmp_path: Path, corpus_file: Path, suffix: str) -> None:
    source = write_table(tmp_path / f"tickets{suffix}", TICKETS)
    result = import_gold(
        source, spec(languages=("en", "de")), corpus=corpus_file, output=tmp_path / "g.jsonl"
    )

    gold = load_gold(tmp_path / "g.jsonl")
    conflicts = gold[stable_query_id("How are sync conflicts resolved?")]
    assert dict(conflicts.gold) == {"en-sync-001": 1, "en-release-034": 1}
    assert conflicts.origin == "real"
    assert conflicts.metadata["imported_from"] == source.name
    assert len(gold) == 3
    assert {q.origin for q in gold} == {"real"}
    assert len(result.unmatched) == 2


def test_rows_of_one_question_merge_into_several_gold_ids_and_keep_their_row_numbers(
    tmp_path: Path, corpus_file: Path
) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    result = import_gold(source, spec(), corpus=corpus_file)
    merged = next(q for q in result.queries if len(q.gold) == 2)
    # Spreadsheet rows: header is row 1, so the first two records are rows 2 and 3.
    assert merged.metadata["imported_rows"] == [2, 3]
    assert merged.query == "How are sync conflicts resolved?"


def test_unmatched_rows_are_reported_with_row_numbers_and_written_to_a_file(
    tmp_path: Path, corpus_file: Path
) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    unmatched = tmp_path / "unmatched.jsonl"
    result = import_gold(source, spec(), corpus=corpus_file, unmatched_output=unmatched)

    assert [(r.row, r.reason) for r in result.unmatched] == [
        (5, "no chunk with id 'en-gone-999'"),
        (6, "empty question cell"),
    ]
    written = [json.loads(line) for line in unmatched.read_text().splitlines()]
    assert [r["row"] for r in written] == [5, 6]
    assert written[0]["question"] == "How do I restore a backup?"


def test_query_ids_are_stable_across_imports_and_can_come_from_a_column(
    tmp_path: Path, corpus_file: Path
) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    first = import_gold(source, spec(), corpus=corpus_file)
    second = import_gold(source, spec(), corpus=corpus_file)
    assert [q.query_id for q in first.queries] == [q.query_id for q in second.queries]

    by_ticket = import_gold(source, spec(id_column="ticket"), corpus=corpus_file)
    assert [q.query_id for q in by_ticket.queries] == ["T1", "T2", "T3", "T6"]


def test_passages_given_by_url_match_in_normal_form(tmp_path: Path, corpus_file: Path) -> None:
    rows = [
        {"q": "How are conflicts resolved?", "link": "http://www.docs.example.com/sync/conflicts/?utm_source=mail"},
        {"q": "What changed in 3.4 for conflicts?", "link": "https://DOCS.example.com/releases/3.4#conflicts"},
        {"q": "Where are the offline docs?", "link": "https://docs.example.com/sync/offline#queue"},
        {"q": "What is on the missing page?", "link": "https://docs.example.com/nowhere"},
    ]  # fmt: skip
    source = write_table(tmp_path / "links.csv", rows)
    result = import_gold(
        source, ImportSpec(question="q", passage="link", passage_by="url"), corpus=corpus_file
    )
    assert [list(q.gold) for q in result.queries] == [["en-sync-001"], ["en-release-034"], ["en-sync-002"]]
    assert [r.row for r in result.unmatched] == [5]
    assert "no chunk with url" in result.unmatched[0].reason


def test_a_url_naming_several_chunks_is_reported_unless_asked_to_take_them(
    tmp_path: Path, corpus_file: Path
) -> None:
    rows = [{"q": "How do backups work?", "link": "https://docs.example.com/admin/backups"}]
    source = write_table(
        tmp_path / "links.csv", [*rows, {"q": "x", "link": "https://docs.example.com/sync/offline"}]
    )
    reported = import_gold(
        source, ImportSpec(question="q", passage="link", passage_by="url"), corpus=corpus_file
    )
    assert "matches 2 chunks (en-backup-001, en-backup-002)" in reported.unmatched[0].reason

    taken = import_gold(
        source,
        ImportSpec(question="q", passage="link", passage_by="url", ambiguous="all"),
        corpus=corpus_file,
    )
    assert set(taken.queries[0].gold) == {"en-backup-001", "en-backup-002"}


def test_passages_given_by_title_match_without_case_or_punctuation(tmp_path: Path, corpus_file: Path) -> None:
    rows = [
        {"q": "How often do clients poll?", "page": "configuration: sync interval"},
        {"q": "Konflikte?", "page": "Synchronisierung > Konflikte"},
    ]
    source = write_table(tmp_path / "titles.jsonl", rows)
    result = import_gold(
        source, ImportSpec(question="q", passage="page", passage_by="title"), corpus=corpus_file
    )
    assert [list(q.gold) for q in result.queries] == [["en-config-001"], ["de-sync-001"]]


def test_click_logs_keep_pairs_reaching_the_minimum_summed_over_rows(
    tmp_path: Path, corpus_file: Path
) -> None:
    rows = [
        {"query": "sync conflicts", "clicked": "en-sync-001", "n": "2"},
        {"query": "sync conflicts", "clicked": "en-sync-001", "n": "1"},
        {"query": "sync conflicts", "clicked": "en-sync-002", "n": "1"},
        {"query": "backup restore", "clicked": "en-backup-002", "n": "1"},
    ]
    source = write_table(tmp_path / "clicks.csv", rows)
    result = import_gold(
        source,
        ImportSpec(question="query", passage="clicked", clicks_column="n", min_clicks=3),
        corpus=corpus_file,
    )
    assert [dict(q.gold) for q in result.queries] == [{"en-sync-001": 1}]
    assert sorted(r.row for r in result.below_min_clicks) == [4, 5]

    # Without a clicks column each row is one click.
    rows_as_clicks = import_gold(
        source, ImportSpec(question="query", passage="clicked", min_clicks=2), corpus=corpus_file
    )
    assert [dict(q.gold) for q in rows_as_clicks.queries] == [{"en-sync-001": 1}]


def test_language_is_detected_when_no_column_gives_it(tmp_path: Path, corpus_file: Path) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    result = import_gold(source, spec(), corpus=corpus_file)
    languages = {q.query: q.language for q in result.queries}
    assert languages["Wie werden Konflikte bei der Synchronisierung gelöst?"] == "de"
    assert languages["How are sync conflicts resolved?"] == "en"
    assert all("language_detected" in q.metadata for q in result.queries)


def test_language_and_type_columns_win_over_detection_and_rules(tmp_path: Path, corpus_file: Path) -> None:
    rows = [{"q": "How are sync conflicts resolved?", "doc": "en-sync-001", "lang": "fr", "kind": "howto"}]
    source = write_table(tmp_path / "t.csv", rows)
    result = import_gold(
        source,
        ImportSpec(question="q", passage="doc", language_column="lang", type_column="kind"),
        corpus=corpus_file,
    )
    query = result.queries[0]
    assert (query.language, query.type) == ("fr", "howto")
    assert "language_detected" not in query.metadata
    assert "type_rule" not in query.metadata
    assert query.field("form") == "question"


def test_imported_queries_get_type_and_form_from_the_rules(tmp_path: Path, corpus_file: Path) -> None:
    rows = [
        {"q": "sync conflict resolution", "doc": "en-sync-001"},
        {"q": "How are sync conflicts resolved?", "doc": "en-sync-001"},
    ]
    result = import_gold(write_table(tmp_path / "t.csv", rows), ImportSpec(question="q", passage="doc"))
    labels = {q.query: (q.type, q.metadata["type_rule"], q.field("form")) for q in result.queries}
    assert labels == {
        "sync conflict resolution": ("conceptual", "default", "keywords"),
        "How are sync conflicts resolved?": ("conceptual", "default", "question"),
    }
    assert all("form" in q.to_record() for q in result.queries)


def test_a_table_without_a_named_column_is_refused_naming_the_available_ones(
    tmp_path: Path, corpus_file: Path
) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    with pytest.raises(InputError, match=r"no column 'body' \(available: ticket, question, doc, clicks\)"):
        import_gold(source, ImportSpec(question="body", passage="doc"), corpus=corpus_file)


@pytest.mark.parametrize("bad", ["many", "nan", "inf", "-1"])
def test_non_numeric_clicks_name_the_row(tmp_path: Path, corpus_file: Path, bad: str) -> None:
    rows = [{"q": "a question", "doc": "en-sync-001", "n": bad}]
    source = write_table(tmp_path / "t.csv", rows)
    with pytest.raises(InputError, match=rf"t\.csv:2: clicks value '{bad}'"):
        import_gold(source, ImportSpec(question="q", passage="doc", clicks_column="n"), corpus=corpus_file)


def test_cli_import_writes_the_set_and_reports_unmatched_rows(tmp_path: Path, corpus_file: Path, cli) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    output = tmp_path / "real.jsonl"
    result = cli(
        "gold", "import", source, "--question", "question", "--passage", "doc", "--corpus", corpus_file,
        "--output", output, "--unmatched", tmp_path / "unmatched.jsonl", "--languages", "en,de",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "imported 3 queries (4 gold ids) from 6 rows" in result.stdout
    assert "row 5: no chunk with id 'en-gone-999'" in result.stderr
    assert "row 6: empty question cell" in result.stderr
    assert len(load_gold(output)) == 3


def test_cli_import_with_a_missing_column_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, corpus_file: Path, cli
) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    output = tmp_path / "real.jsonl"
    result = cli("gold", "import", source, "--question", "body", "--passage", "doc", "--output", output)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "no column 'body' (available: ticket, question, doc, clicks)" in result.stderr
    assert not output.exists()


def test_cli_import_where_no_row_matches_exits_2_and_writes_nothing(
    tmp_path: Path, corpus_file: Path, cli
) -> None:
    source = write_table(tmp_path / "t.csv", [{"q": "a", "doc": "nope-1"}, {"q": "b", "doc": "nope-2"}])
    output = tmp_path / "real.jsonl"
    result = cli("gold", "import", source, "--question", "q", "--passage", "doc", "--corpus", corpus_file,
                 "--output", output)  # fmt: skip
    assert result.returncode == 2
    assert "no usable row: 2 unmatched" in result.stderr
    assert "first: row 2: no chunk with id 'nope-1'" in result.stderr
    assert not output.exists()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("t.xlsx", "x", "unknown table format '.xlsx'"),
        ("t.csv", "", "empty file"),
        ("t.parquet", "not parquet", "cannot read as parquet"),
    ],
)
def test_unreadable_tables_are_refused_with_the_file_named(
    tmp_path: Path, corpus_file: Path, cli, name: str, content: str, message: str
) -> None:
    source = tmp_path / name
    source.write_text(content)
    result = cli(
        "gold", "import", source, "--question", "q", "--passage", "d", "--output", tmp_path / "o.jsonl"
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert name in result.stderr


def test_a_semicolon_separated_export_with_quoted_cells_reads_by_spreadsheet_row(tmp_path: Path) -> None:
    source = tmp_path / "export.csv"
    source.write_text('frage;seite\n"Wie geht das; bitte?";en-1\n\n"zwei\nZeilen";en-2\n', encoding="utf-8")
    table = read_table(source)
    assert table.columns == ("frage", "seite")
    assert [(n, dict(r)) for n, r in table.rows] == [
        (2, {"frage": "Wie geht das; bitte?", "seite": "en-1"}),
        (4, {"frage": "zwei\nZeilen", "seite": "en-2"}),
    ]


def test_a_row_with_more_cells_than_the_header_is_refused_naming_the_row(tmp_path: Path) -> None:
    source = tmp_path / "export.csv"
    source.write_text("q,doc\nfine,en-1\nnot, quoted,en-2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"export\.csv:3: row has 3 cells, the header has 2"):
        read_table(source)


def test_cli_import_by_id_without_a_corpus_warns_that_ids_were_not_checked(tmp_path: Path, cli) -> None:
    source = write_table(tmp_path / "t.csv", [{"q": "a question", "doc": "any-id"}])
    result = cli(
        "gold", "import", source, "--question", "q", "--passage", "doc", "--output", tmp_path / "g.jsonl"
    )
    assert result.returncode == 0, result.stderr
    assert "passage ids were not checked" in result.stderr
    assert dict(load_gold(tmp_path / "g.jsonl").queries[0].gold) == {"any-id": 1}


def test_cli_import_by_url_without_a_corpus_exits_2(tmp_path: Path, cli) -> None:
    source = write_table(tmp_path / "t.csv", [{"q": "a question", "doc": "https://x.example/a"}])
    result = cli("gold", "import", source, "--question", "q", "--passage", "doc", "--passage-by", "url",
                 "--output", tmp_path / "g.jsonl")  # fmt: skip
    assert result.returncode == 2
    assert "--passage-by url needs the corpus; pass --corpus" in result.stderr
    assert not (tmp_path / "g.jsonl").exists()


def test_cli_import_with_an_unknown_passage_by_lists_the_choices(tmp_path: Path, cli) -> None:
    source = write_table(tmp_path / "t.csv", [{"q": "a question", "doc": "x"}])
    result = cli("gold", "import", source, "--question", "q", "--passage", "doc", "--passage-by", "link",
                 "--output", tmp_path / "g.jsonl")  # fmt: skip
    assert result.returncode == 2
    assert "unknown --passage-by 'link'; choose from id, url, title" in result.stderr


def test_parquet_numbers_and_missing_cells_read_as_text(tmp_path: Path, corpus_file: Path) -> None:
    frame = pd.DataFrame(
        {
            "q": ["sync conflicts", None, "sync conflicts"],
            "doc": ["en-sync-001", "en-sync-002", "en-sync-001"],
            "n": [2, 7, 1],
        }
    )
    source = tmp_path / "clicks.parquet"
    frame.to_parquet(source, index=False)
    result = import_gold(
        source, ImportSpec(question="q", passage="doc", clicks_column="n", min_clicks=3), corpus=corpus_file
    )
    assert [dict(q.gold) for q in result.queries] == [{"en-sync-001": 1}]
    assert [(r.row, r.reason) for r in result.unmatched] == [(2, "empty question cell")]


def test_an_output_that_is_not_jsonl_is_refused_before_reading(tmp_path: Path, corpus_file: Path) -> None:
    source = write_table(tmp_path / "tickets.csv", TICKETS)
    with pytest.raises(
        InputError, match=r"gold\.tsv: the gold set is written as JSON Lines; name it \*\.jsonl"
    ):
        import_gold(source, spec(), corpus=corpus_file, output=tmp_path / "gold.tsv")
    assert not (tmp_path / "gold.tsv").exists()


def test_with_a_clicks_column_a_pair_nobody_clicked_is_not_gold(tmp_path: Path, corpus_file: Path) -> None:
    rows = [
        {"query": "sync conflicts", "shown": "en-sync-001", "n": "1"},
        {"query": "sync conflicts", "shown": "en-sync-002", "n": "0"},
        {"query": "sync conflicts", "shown": "en-backup-001", "n": ""},
    ]
    source = write_table(tmp_path / "log.csv", rows)
    result = import_gold(
        source, ImportSpec(question="query", passage="shown", clicks_column="n"), corpus=corpus_file
    )
    assert [dict(q.gold) for q in result.queries] == [{"en-sync-001": 1}]
    assert [r.row for r in result.below_min_clicks] == [3, 4]


def test_a_grade_column_gives_graded_gold_keeping_the_highest_grade_of_a_pair(
    tmp_path: Path, corpus_file: Path
) -> None:
    rows = [
        {"q": "sync conflicts", "doc": "en-sync-001", "g": "2"},
        {"q": "sync conflicts", "doc": "en-release-034", "g": ""},
        {"q": "sync conflicts", "doc": "en-sync-001", "g": "1"},
    ]
    source = write_table(tmp_path / "graded.csv", rows)
    result = import_gold(
        source, ImportSpec(question="q", passage="doc", grade_column="g"), corpus=corpus_file
    )
    assert dict(result.queries[0].gold) == {"en-sync-001": 2, "en-release-034": 1}


@pytest.mark.parametrize("bad", ["0", "1.5", "high", "nan", "inf", "1e30"])
def test_a_grade_that_is_not_a_whole_number_of_at_least_one_names_the_row(
    tmp_path: Path, corpus_file: Path, bad: str
) -> None:
    source = write_table(tmp_path / "graded.csv", [{"q": "a question", "doc": "en-sync-001", "g": bad}])
    with pytest.raises(
        InputError, match=rf"graded\.csv:2: grade '{bad}' in column 'g' is not a whole number"
    ):
        import_gold(source, ImportSpec(question="q", passage="doc", grade_column="g"), corpus=corpus_file)

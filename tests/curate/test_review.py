"""`realrecall gold review` and `gold add`: misses listed for a person, judgements added with history."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from realrecall.curate import (
    Judgement,
    JudgementLog,
    add_judgements,
    find_misses,
    pending,
    read_judgements,
    write_judgement_template,
)
from realrecall.errors import InputError
from realrecall.gold import load_gold

NOW = datetime(2026, 12, 2, 18, 40, tzinfo=UTC)


def test_misses_are_queries_without_a_relevant_passage_in_the_top_k(
    results_file: Path, per_query_file: Path
) -> None:
    review = find_misses(results_file, per_query_file)

    assert review.k == 1  # the headline metric's: recall@1, the first evaluated (no recall@10)
    assert (review.n_queries, review.n_misses) == (3, 2)
    assert [m.query_id for m in review.misses] == ["q1", "q3"]
    first = review.misses[0]
    assert [p.id for p in first.gold] == ["en-sync-001"]
    assert first.gold[0].text.startswith("When two devices edit the same note")
    assert [(h.rank, h.passage.id) for h in first.retrieved] == [
        (1, "en-release-034"),
        (2, "en-sync-002"),
        (3, "de-sync-001"),
    ]
    assert first.retrieved[1].passage.title == "Sync > Offline mode"


def test_the_default_cutoff_is_the_headline_metrics_not_the_largest(
    results_file: Path, per_query_file: Path
) -> None:
    results = json.loads(results_file.read_text())
    results["metrics"] = ["recall@1", "recall@2", "recall@10", "recall@50", "mrr@50"]
    results_file.write_text(json.dumps(results))
    review = find_misses(results_file, per_query_file)
    assert (review.k, review.metric) == (10, "recall@10")
    results["metrics"] = ["mrr@3", "recall@1", "recall@2"]
    results_file.write_text(json.dumps(results))
    assert find_misses(results_file, per_query_file).k == 3  # mrr@3 leads: its cut-off


def test_only_real_queries_are_reviewed_unless_asked(
    results_file: Path, per_query_file: Path, tmp_path: Path, cli
) -> None:
    real_records = [json.loads(line) for line in per_query_file.read_text().splitlines()]
    synthetic = [
        {**record, "query_id": f"s{n}", "origin": "synthetic", "top": ["x", "y", "z"]}
        for n, record in enumerate(real_records)
    ]
    per_query = tmp_path / "mixed.jsonl"
    per_query.write_text("".join(json.dumps(r) + "\n" for r in [*real_records, *synthetic]))
    real = find_misses(results_file, per_query, k=3)
    assert (real.n_queries, real.n_misses, real.origin) == (3, 2, "real")
    assert {m.query_id for m in real.misses} == {"q1", "q3"}
    assert find_misses(results_file, per_query, k=3, origin="synthetic").n_misses == 3
    assert find_misses(results_file, per_query, k=3, origin=None).n_queries == 6

    result = cli("gold", "review", results_file, "--per-query", per_query, "--k", "3")
    assert result.returncode == 0, result.stderr
    assert "2 of 3 real queries miss at k=3" in result.stdout
    assert "Query: " + real_records[0]["query"] in result.stdout
    every = cli("gold", "review", results_file, "--per-query", per_query, "--k", "3", "--origin", "all")
    assert "5 of 6 queries miss at k=3" in every.stdout
    only_synthetic = tmp_path / "synthetic.jsonl"
    only_synthetic.write_text("".join(json.dumps(r) + "\n" for r in synthetic))
    refused = cli("gold", "review", results_file, "--per-query", only_synthetic)
    assert refused.returncode == 2
    assert refused.err_lines == [
        f"error: {only_synthetic}: no real query among the 3 reviewed (synthetic 3); "
        "choose the queries with --origin (synthetic, or all)"
    ]


def test_a_smaller_k_and_a_limit_change_what_is_listed(results_file: Path, per_query_file: Path) -> None:
    at_one = find_misses(results_file, per_query_file, k=1)
    assert at_one.n_misses == 2
    limited = find_misses(results_file, per_query_file, limit=1, show=2)
    assert (len(limited.misses), limited.n_misses) == (1, 2)
    assert len(limited.misses[0].retrieved) == 2


def test_a_passage_already_judged_not_relevant_is_marked(results_file: Path, tmp_path: Path) -> None:
    record = {"query_id": "q9", "query": "q", "gold": {"a": 1, "en-sync-002": 0}, "top": ["en-sync-002", "x"]}
    per_query = tmp_path / "pq.jsonl"
    per_query.write_text(json.dumps(record) + "\n")
    miss = find_misses(results_file, per_query).misses[0]
    assert [(h.passage.id, h.judged, h.passage.found) for h in miss.retrieved] == [
        ("en-sync-002", 0, True),
        ("x", None, False),
    ]


def test_a_per_query_file_without_top_lists_is_refused(results_file: Path, tmp_path: Path) -> None:
    per_query = tmp_path / "pq.jsonl"
    per_query.write_text('{"query_id": "q1", "gold": ["a"]}\n')
    with pytest.raises(InputError, match=r'pq\.jsonl:1: record has no "top" list'):
        find_misses(results_file, per_query)


def test_cli_review_prints_query_gold_and_retrieved_passages(
    results_file: Path, per_query_file: Path, cli
) -> None:
    result = cli("gold", "review", results_file, "--per-query", per_query_file)
    assert result.returncode == 0, result.stderr
    assert "Query: What happens when two devices edit the same note?" in result.stdout
    assert "en-sync-001  Sync > Conflicts — When two devices edit" in result.stdout
    assert " 1  en-release-034  Sync > Conflicts — When two devices" in result.stdout
    assert "2 of 3 real queries miss at k=1" in result.stdout


def test_add_records_who_when_and_why_and_writes_in_place(gold_file: Path, corpus_file: Path) -> None:
    judgement = Judgement("q3", "en-backup-001", 1, "ana", "restore is described there too")
    result = add_judgements(gold_file, [judgement], corpus=corpus_file, now=NOW)

    assert [j.passage_id for j in result.added] == ["en-backup-001"]
    query = load_gold(gold_file)["q3"]
    assert dict(query.gold) == {"en-backup-002": 1, "en-backup-001": 1}
    assert query.metadata["gold_history"] == [
        {
            "passage_id": "en-backup-001",
            "grade": 1,
            "by": "ana",
            "at": "2026-12-02T18:40:00+00:00",
            "why": "restore is described there too",
        }
    ]
    untouched = load_gold(gold_file)["q1"]
    assert (dict(untouched.gold), dict(untouched.metadata)) == ({"en-sync-001": 1}, {})


def test_adding_the_same_grade_again_changes_nothing(gold_file: Path) -> None:
    before = gold_file.read_bytes()
    result = add_judgements(gold_file, [Judgement("q1", "en-sync-001", 1, "ana")], now=NOW)
    assert (len(result.unchanged), result.changed) == (1, 0)
    assert gold_file.read_bytes() == before


def test_a_regrade_is_appended_to_the_history(gold_file: Path) -> None:
    add_judgements(gold_file, [Judgement("q1", "en-sync-002", 1, "ana")], now=NOW)
    result = add_judgements(
        gold_file, [Judgement("q1", "en-sync-002", 0, "ben", "only about queues")], now=NOW
    )
    assert len(result.regraded) == 1
    history = load_gold(gold_file)["q1"].metadata["gold_history"]
    assert [(h["by"], h["grade"]) for h in history] == [("ana", 1), ("ben", 0)]


def test_an_unknown_query_id_in_a_judgements_file_names_its_line_and_writes_nothing(
    gold_file: Path, tmp_path: Path
) -> None:
    judgements = tmp_path / "j.jsonl"
    judgements.write_text(
        '{"query_id": "q1", "passage_id": "en-sync-002", "grade": 1, "by": "ana"}\n'
        '{"query_id": "q404", "passage_id": "en-sync-002", "grade": 1, "by": "ana"}\n'
    )
    before = gold_file.read_bytes()
    with pytest.raises(InputError, match=r"j\.jsonl:2: unknown query id 'q404'"):
        add_judgements(gold_file, read_judgements(judgements).items)
    assert gold_file.read_bytes() == before


@pytest.mark.parametrize(
    ("judgement", "message"),
    [
        (Judgement("q1", "en-sync-002", 10**20, "ana"), "grade of passage 'en-sync-002' is out of range"),
        (Judgement("q1", "en-sync-002", True, "ana"), "grade of passage 'en-sync-002' must be an integer"),  # type: ignore[arg-type]
        (Judgement("q1", " ", 1, "ana"), "passage id must be a non-empty string"),
    ],
)
def test_a_judgement_the_gold_set_could_not_read_back_is_refused_and_nothing_written(
    gold_file: Path, judgement: Judgement, message: str
) -> None:
    before = gold_file.read_bytes()
    with pytest.raises(InputError, match=message):
        add_judgements(gold_file, [judgement], now=NOW)
    assert gold_file.read_bytes() == before


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query_id": "q1", "passage_id": "a", "grade": 99999999999999999999, "by": "ana"}', "out of range"),
        ('{"query_id": "q1", "passage_id": "", "grade": 1, "by": "ana"}', '"passage_id" must be a non-empty'),
        ('{"query_id": 1.5, "passage_id": "a", "grade": 1, "by": "ana"}', '"query_id" must be a non-empty'),
        ('{"passage_id": "a", "grade": 1, "by": "ana"}', 'judgement has no "query_id"'),
    ],
)
def test_a_bad_judgements_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    judgements = tmp_path / "j.jsonl"
    judgements.write_text(line + "\n")
    with pytest.raises(InputError, match=rf"j\.jsonl:1: .*{re.escape(message)}"):
        read_judgements(judgements)


def test_judgement_lines_left_null_are_skipped_and_counted(tmp_path: Path) -> None:
    judgements = tmp_path / "j.jsonl"
    judgements.write_text(
        '{"query_id": "q1", "passage_id": "a", "grade": null, "by": null}\n'
        '{"query_id": "q1", "passage_id": "b", "grade": 1}\n'
    )
    read = read_judgements(judgements, default_by="cli-user")
    assert read.unjudged == 1
    assert [(j.passage_id, j.by) for j in read.items] == [("b", "cli-user")]


def test_cli_add_one_passage(gold_file: Path, corpus_file: Path, cli) -> None:
    result = cli("gold", "add", gold_file, "q3", "en-backup-001", "--by", "ana", "--why", "same steps",
                 "--corpus", corpus_file)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "added 1 gold id(s)" in result.stdout
    history = load_gold(gold_file)["q3"].metadata["gold_history"]
    assert (history[0]["by"], history[0]["why"]) == ("ana", "same steps")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("q404", "en-sync-002"), "unknown query id 'q404'"),
        (("q1", "en-nowhere"), "unknown passage id 'en-nowhere' (not in the corpus)"),
        (("q1",), "nothing to add"),
    ],
)
def test_cli_add_with_unknown_ids_exits_2_and_leaves_the_set_unchanged(
    gold_file: Path, corpus_file: Path, cli, args: tuple[str, ...], message: str
) -> None:
    before = gold_file.read_bytes()
    result = cli("gold", "add", gold_file, *args, "--corpus", corpus_file)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert gold_file.read_bytes() == before


def test_review_template_filled_in_and_added_round_trips(
    results_file: Path, per_query_file: Path, gold_file: Path, corpus_file: Path, tmp_path: Path, cli
) -> None:
    template = tmp_path / "judgements.jsonl"
    reviewed = cli("gold", "review", results_file, "--per-query", per_query_file, "--judgements", template)
    assert reviewed.returncode == 0, reviewed.stderr
    lines = [json.loads(line) for line in template.read_text().splitlines()]
    assert [(r["query_id"], r["passage_id"], r["grade"]) for r in lines][:2] == [
        ("q1", "en-release-034", None),
        ("q1", "en-sync-002", None),
    ]
    lines[0].update(grade=1, why="same text as the gold passage")
    lines[1].update(grade=0)
    template.write_text("".join(json.dumps(r) + "\n" for r in lines))

    added = cli("gold", "add", gold_file, "--judgements", template, "--by", "ana", "--corpus", corpus_file)
    assert added.returncode == 0, added.stderr
    assert "added 2 gold id(s)" in added.stdout
    assert "line(s) still have grade null" in added.stderr

    query = load_gold(gold_file)["q1"]
    assert dict(query.gold) == {"en-sync-001": 1, "en-release-034": 1, "en-sync-002": 0}
    assert [(h["passage_id"], h["by"], h.get("why")) for h in query.metadata["gold_history"]] == [
        ("en-release-034", "ana", "same text as the gold passage"),
        ("en-sync-002", "ana", None),
    ]


def test_a_template_never_replaces_recorded_judgements_but_replaces_an_unfilled_template(
    results_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    review = find_misses(results_file, per_query_file)
    template = tmp_path / "judgements.jsonl"
    assert write_judgement_template(template, review) > 0
    assert write_judgement_template(template, review) > 0  # an unfilled template: rewritten
    filled = '{"query_id": "q1", "passage_id": "en-sync-002", "grade": 1, "by": "ana"}\n'
    template.write_text(template.read_text() + filled)
    with pytest.raises(InputError, match=r"judgements\.jsonl: holds 1 judgement\(s\) already"):
        write_judgement_template(template, review)
    assert template.read_text().endswith(filled)
    other = tmp_path / "notes.jsonl"
    other.write_text("my own notes, not JSON\n")
    with pytest.raises(InputError, match=r"notes\.jsonl: exists and is not a judgement template"):
        write_judgement_template(other, review)
    assert other.read_text() == "my own notes, not JSON\n"


def test_review_against_the_current_gold_set_counts_passages_added_since(
    results_file: Path, per_query_file: Path, gold_file: Path
) -> None:
    add_judgements(gold_file, [Judgement("q1", "en-release-034", 1, "ana")], now=NOW)
    review = find_misses(results_file, per_query_file, gold=gold_file)
    assert [m.query_id for m in review.misses] == ["q3"]


def test_cli_review_of_a_file_that_is_not_results_json_exits_2_with_one_line(
    per_query_file: Path, tmp_path: Path, cli
) -> None:
    not_results = tmp_path / "results.json"
    not_results.write_text('{"metrics": []}')
    result = cli(
        "gold", "review", not_results, "--per-query", per_query_file, "--judgements", tmp_path / "j.jsonl"
    )
    assert result.returncode == 2
    assert "not a realrecall results.json (no gold_sets)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "j.jsonl").exists()


def test_gold_ids_listed_by_evaluate_count_as_relevant_whatever_the_threshold(
    results_file: Path, tmp_path: Path
) -> None:
    results = json.loads(results_file.read_text())
    results["relevance_threshold"] = 2
    results_file.write_text(json.dumps(results))
    per_query = tmp_path / "pq.jsonl"
    per_query.write_text(
        json.dumps({"query_id": "listed", "gold": ["en-sync-001"], "top": ["en-sync-001"]}) + "\n"
        + json.dumps({"query_id": "graded", "gold": {"en-sync-001": 1}, "top": ["en-sync-001"]}) + "\n"
    )  # fmt: skip
    review = find_misses(results_file, per_query)
    assert [m.query_id for m in review.misses] == ["graded"]


def test_a_miss_shows_where_its_gold_passage_ranked_below_the_cutoff(
    results_file: Path, tmp_path: Path
) -> None:
    record = {"query_id": "q1", "gold": ["g"], "first_relevant_rank": None, "top": ["a", "b", "c", "g"]}
    per_query = tmp_path / "pq.jsonl"
    per_query.write_text(json.dumps(record) + "\n")
    [miss] = find_misses(results_file, per_query, k=3).misses
    assert miss.first_relevant_rank == 4


def test_pending_leaves_out_what_the_judgement_log_already_holds(
    results_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    review = find_misses(results_file, per_query_file)
    with JudgementLog(tmp_path / "j.jsonl") as log:
        log.record(Judgement("q1", "en-release-034", 1, "ana"))
        log.record(Judgement("q1", "en-sync-002", 0, "ana"))
        log.record(Judgement("q1", "de-sync-001", 0, "ana"))
        log.record(Judgement("q3", "en-backup-001", 1, "ana"))
        left = pending(review, log.judged())
    assert [(miss.query_id, [h.passage.id for h in hits]) for miss, hits in left] == [
        ("q3", ["en-sync-002", "en-config-001"])
    ]
    assert len(read_judgements(tmp_path / "j.jsonl").items) == 4


def test_review_can_mark_a_retrieved_near_duplicate_of_the_gold_passage(
    results_file: Path, per_query_file: Path, cli
) -> None:
    review = find_misses(results_file, per_query_file, duplicates=0.8)
    first = review.misses[0].retrieved[0]
    assert first.passage.id == "en-release-034"
    assert first.duplicate_of is not None
    assert first.duplicate_of[0] == "en-sync-001"
    assert all(h.duplicate_of is None for h in review.misses[0].retrieved[1:])

    result = cli("gold", "review", results_file, "--per-query", per_query_file, "--duplicates", "0.8")
    assert result.returncode == 0, result.stderr
    assert "(near-duplicate of gold en-sync-001, Jaccard 0.92)" in result.stdout

"""Near-duplicate passages (MinHash LSH over word shingles) and `gold expand` / `gold dupes`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.curate import expand_gold, find_near_duplicates, shingles
from realrecall.errors import InputError
from realrecall.gold import load_gold

NOW = datetime(2026, 12, 2, 18, 40, tzinfo=UTC)


def test_shingles_are_word_n_grams_of_the_case_folded_text() -> None:
    assert shingles("Sync, the NOTES now", 3) == {"sync the notes", "the notes now"}
    assert shingles("two words", 3) == {"two words"}
    assert shingles("  ", 3) == frozenset()


def test_the_copied_passage_and_only_it_is_found(corpus_file: Path) -> None:
    found = find_near_duplicates(load_corpus(corpus_file), threshold=0.8)
    assert [(p.a, p.b) for p in found.pairs] == [("en-sync-001", "en-release-034")]
    assert 0.8 <= found.pairs[0].similarity < 1.0
    assert found.clusters == (("en-sync-001", "en-release-034"),)
    assert found.neighbours("en-release-034") == {"en-sync-001": found.pairs[0].similarity}


def test_clusters_join_chains_while_neighbours_stay_direct() -> None:
    base = " ".join(f"word{i}" for i in range(40))
    chunks = (
        Chunk("a", base),
        Chunk("b", base + " extra1 extra2 extra3 extra4"),
        Chunk("c", base + " extra1 extra2 extra3 extra4 more1 more2 more3 more4"),
        Chunk("d", "something else entirely with other words"),
    )
    found = find_near_duplicates(Corpus(chunks), threshold=0.85)
    assert found.clusters == (("a", "b", "c"),)
    assert set(found.neighbours("b")) == {"a", "c"}


def test_the_result_is_the_same_on_every_run(corpus_file: Path) -> None:
    corpus = load_corpus(corpus_file)
    assert find_near_duplicates(corpus, threshold=0.5) == find_near_duplicates(corpus, threshold=0.5)


def test_a_threshold_outside_zero_to_one_is_refused(corpus_file: Path) -> None:
    with pytest.raises(InputError, match="threshold must be in"):
        find_near_duplicates(load_corpus(corpus_file), threshold=1.5)


def test_expand_adds_near_duplicates_with_history_and_counts_the_misses_removed(
    gold_file: Path, corpus_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    output = tmp_path / "expanded.jsonl"
    result = expand_gold(gold_file, corpus_file, output=output, per_query=per_query_file, now=NOW)

    assert dict(result.added) == {"q1": ("en-release-034",)}
    assert (result.evaluated, result.misses_before, result.misses_after) == (3, 2, 1)
    assert result.recovered == ("q1",)
    query = load_gold(output)["q1"]
    assert dict(query.gold) == {"en-sync-001": 1, "en-release-034": 1}
    [entry] = query.metadata["gold_history"]
    assert (entry["passage_id"], entry["by"], entry["at"]) == (
        "en-release-034",
        "expand",
        "2026-12-02T18:40:00+00:00",
    )
    assert entry["why"].startswith("near-duplicate of en-sync-001 (jaccard 0.9")
    assert load_gold(gold_file)["q1"].gold == {"en-sync-001": 1}  # the input is left as it was


def test_expand_leaves_a_passage_a_reviewer_judged_not_relevant(corpus_file: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"query_id": "q1", "query": "q", "gold": {"en-sync-001": 1, "en-release-034": 0}})
    )
    result = expand_gold(gold, corpus_file, output=tmp_path / "out.jsonl")
    assert result.n_added == 0
    assert load_gold(tmp_path / "out.jsonl")["q1"].gold == {"en-sync-001": 1, "en-release-034": 0}


def test_cli_expand_reports_the_misses_removed(
    gold_file: Path, corpus_file: Path, per_query_file: Path, tmp_path: Path, cli
) -> None:
    output = tmp_path / "expanded.jsonl"
    result = cli("gold", "expand", gold_file, "--corpus", corpus_file, "--output", output,
                 "--per-query", per_query_file, "--threshold", "0.8")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "added 1 near-duplicate gold id(s) to 1 queries" in result.stdout
    assert "misses in the retrieved lists: 2 -> 1 of 3 queries (1 removed: q1)" in result.stdout
    assert output.is_file()


def test_cli_expand_to_a_non_jsonl_output_exits_2_and_writes_nothing(
    gold_file: Path, corpus_file: Path, tmp_path: Path, cli
) -> None:
    output = tmp_path / "expanded.tsv"
    result = cli("gold", "expand", gold_file, "--corpus", corpus_file, "--output", output)
    assert result.returncode == 2
    assert "written as JSON Lines" in result.stderr
    assert not output.exists()


def test_cli_dupes_lists_clusters(corpus_file: Path, cli) -> None:
    result = cli("gold", "dupes", "--corpus", corpus_file)
    assert result.returncode == 0, result.stderr
    assert "cluster 1: 2 passages" in result.stdout
    assert "en-sync-001  Sync > Conflicts" in result.stdout
    assert "en-release-034  Sync > Conflicts" in result.stdout
    assert "1 cluster(s), 1 pair(s) at Jaccard >= 0.8 over 3-word shingles in 7 passages" in result.stdout


def test_expand_counts_only_its_own_gold_sets_records_in_a_shared_per_query_file(
    gold_file: Path, corpus_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    records = [json.loads(line) for line in per_query_file.read_text().splitlines()]
    # The same query ids evaluated for another gold set, where q1 and q3 were hits.
    other = [{**r, "gold_set": "synthetic", "top": [*r["gold"]]} for r in records]
    mine = [{**r, "gold_set": "gold"} for r in records]
    shared = tmp_path / "shared.jsonl"
    shared.write_text("".join(json.dumps(r) + "\n" for r in mine + other))

    result = expand_gold(gold_file, corpus_file, output=tmp_path / "x.jsonl", per_query=shared)
    assert (result.evaluated, result.misses_before, result.misses_after) == (3, 2, 1)


def test_cli_dupes_writes_clusters_with_their_pairs(corpus_file: Path, tmp_path: Path, cli) -> None:
    output = tmp_path / "clusters.jsonl"
    result = cli("gold", "dupes", "--corpus", corpus_file, "--output", output)
    assert result.returncode == 0, result.stderr
    [record] = [json.loads(line) for line in output.read_text().splitlines()]
    assert record["cluster"] == 1
    assert record["ids"] == ["en-sync-001", "en-release-034"]
    assert [(p["a"], p["b"]) for p in record["pairs"]] == [("en-sync-001", "en-release-034")]


def test_expand_with_per_query_records_of_no_query_of_the_set_is_refused_not_zero_of_zero(
    gold_file: Path, corpus_file: Path, per_query_file: Path, tmp_path: Path
) -> None:
    records = [json.loads(line) for line in per_query_file.read_text().splitlines()]
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({**r, "gold_set": "synthetic"}) + "\n" for r in records))
    output = tmp_path / "x.jsonl"
    with pytest.raises(
        InputError, match=r"other\.jsonl: no per-query record is of gold set 'nope'.*synthetic"
    ):
        expand_gold(gold_file, corpus_file, output=output, per_query=other, gold_set="nope")
    assert not output.exists()

"""Bit-for-bit parity with trec_eval 10.0 on its own test files and our edge cases.

Each expected file was printed by trec_eval with ``%.17g``, which round-trips to the exact double, so
per-query and ``all`` values are compared with ``==``. Flags map to our API like this:
- ``-c`` (missing queries score 0, mean over every qrels query) is our default;
- without ``-c`` trec_eval 10 averages over the queries in the run (it stops if a qrels query is
  missing), so the gold set is restricted to the run's queries;
- ``-M k`` cuts the run: ``Run.top(k)``; ``recip_rank`` under ``-M k`` alone is our ``mrr@k``;
- ``-l 2`` is ``relevance_threshold=2``.
Each case is read through each fast path and through the exact reader (``support.trec_readers``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from realrecall.evaluate.scoring import score_queries
from realrecall.gold import load_gold
from realrecall.runs import load_run
from support.trec_readers import READERS, choose

pytestmark = pytest.mark.reference_data

# trec_eval measure name -> our metric name (cut-offs carried over).
_FAMILIES = {"success": "recall", "recall": "passage_recall", "ndcg_cut": "ndcg", "P": "precision"}


def our_metric(measure: str) -> str | None:
    if measure == "recip_rank":
        return "mrr"
    if measure == "ndcg":
        return "ndcg"
    family, _, k = measure.rpartition("_")
    return f"{_FAMILIES[family]}@{k}" if family in _FAMILIES and k.isdigit() else None


# (expected output, qrels, run, -c, -M, -l, recip_rank read as mrr@k)
CASES = [
    (
        "derived/te10.qrels.test__results.test.txt",
        "upstream/qrels.test",
        "upstream/results.test",
        False,
        None,
        1,
    ),
    (
        "derived/te10.qrels.test__results.trunc__c.txt",
        "upstream/qrels.test",
        "upstream/results.trunc",
        True,
        None,
        1,
    ),
    (
        "derived/te10.qrels.test__results.trunc__c_M100.txt",
        "upstream/qrels.test",
        "upstream/results.trunc",
        True,
        100,
        1,
    ),
    (
        "derived/te10.qrels.rel_level__results.test__l2.txt",
        "upstream/qrels.rel_level",
        "upstream/results.test",
        False,
        None,
        2,
    ),
    (
        "derived/te10.qrels.comment.test__results.comment.test.txt",
        "upstream/qrels.comment.test",
        "upstream/results.comment.test",
        False,
        None,
        1,
    ),
    (
        "derived/te10.qrels.test__results.test__M10.txt",
        "upstream/qrels.test",
        "upstream/results.test",
        False,
        10,
        1,
    ),
    ("edge-cases/te10.edge__c.txt", "edge-cases/edge.qrels", "edge-cases/edge.run", True, None, 1),
    ("edge-cases/te10.edge__c_l2.txt", "edge-cases/edge.qrels", "edge-cases/edge.run", True, None, 2),
    ("edge-cases/te10.edge__c_M2.txt", "edge-cases/edge.qrels", "edge-cases/edge.run", True, 2, 1),
]

# recip_rank with -M10 only: our mrr@10 on the uncut run.
MRR_AT_10_CASES = [
    (
        "derived/te10.qrels.comment.test__results.comment.test__M10.txt",
        "upstream/qrels.comment.test",
        "upstream/results.comment.test",
        False,
        1,
    ),
    (
        "derived/te10.qrels.rel_level__results.test__l2_M10.txt",
        "upstream/qrels.rel_level",
        "upstream/results.test",
        False,
        2,
    ),
    ("edge-cases/te10.edge__c_M10.txt", "edge-cases/edge.qrels", "edge-cases/edge.run", True, 1),
    ("edge-cases/te10.edge__c_l2_M10.txt", "edge-cases/edge.qrels", "edge-cases/edge.run", True, 2),
]


def _compare(expected: dict[tuple[str, str], str], metrics: dict[str, str], scores) -> int:
    """Assert every expected value equals ours exactly; return how many values were compared."""
    position = {qid: i for i, qid in enumerate(scores.query_ids)}
    compared = 0
    for ours, measure in metrics.items():
        for (name, qid), printed in expected.items():
            if name != measure:
                continue
            value = scores.mean(ours) if qid == "all" else float(scores.values[ours][position[qid]])
            assert value == float(printed), f"{measure} {qid}: trec_eval {printed}, ours {value!r}"
            compared += 1
    return compared


def _gold(data: Path, qrels: str, run, complete: bool, exact: bool) -> dict[str, dict[str, int]]:
    gold = load_gold(data / qrels, exact=exact).qrels()
    return gold if complete else {qid: judged for qid, judged in gold.items() if qid in run}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("expected", "qrels", "run", "complete", "depth", "level"), CASES)
def test_every_measure_equals_trec_eval_10_bit_for_bit(
    trec_eval_data: Path,
    read_trec_eval_output,
    monkeypatch: pytest.MonkeyPatch,
    reader: str,
    expected: str,
    qrels: str,
    run: str,
    complete: bool,
    depth: int | None,
    level: int,
) -> None:
    exact = choose(reader, monkeypatch)  # each fast path and the exact reader give the same figures
    the_run = load_run(trec_eval_data / run, exact=exact)
    if depth is not None:
        the_run = the_run.top(depth)
    printed = read_trec_eval_output(trec_eval_data / expected)
    metrics = {ours: name for name, _ in printed if (ours := our_metric(name))}
    gold = _gold(trec_eval_data, qrels, the_run, complete, exact)
    scores = score_queries(gold, the_run, list(metrics), relevance_threshold=level)

    compared = _compare(printed, metrics, scores)

    assert compared == sum(1 for name, _ in printed if name in metrics.values())
    assert compared > 10
    assert len(scores.query_ids) == int(printed[("num_q", "all")])


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("expected", "qrels", "run", "complete", "level"), MRR_AT_10_CASES)
def test_mrr_at_10_equals_recip_rank_with_the_run_cut_at_10(
    trec_eval_data: Path,
    read_trec_eval_output,
    monkeypatch: pytest.MonkeyPatch,
    reader: str,
    expected: str,
    qrels: str,
    run: str,
    complete: bool,
    level: int,
) -> None:
    exact = choose(reader, monkeypatch)
    the_run = load_run(trec_eval_data / run, exact=exact)
    printed = read_trec_eval_output(trec_eval_data / expected)
    gold = _gold(trec_eval_data, qrels, the_run, complete, exact)
    scores = score_queries(gold, the_run, ["mrr@10"], relevance_threshold=level)

    compared = _compare(printed, {"mrr@10": "recip_rank"}, scores)

    assert compared == sum(1 for name, _ in printed if name == "recip_rank")
    assert compared > 1


def test_edge_case_behaviours_named_in_the_readme(trec_eval_data: Path) -> None:
    gold = load_gold(trec_eval_data / "edge-cases" / "edge.qrels")
    run = load_run(trec_eval_data / "edge-cases" / "edge.run")
    scores = score_queries(gold, run, ["mrr", "recall@1", "ndcg@10"])
    mrr = dict(zip(scores.query_ids, scores.values["mrr"].tolist(), strict=True))

    assert mrr["E1"] == 1 / 3  # 3-way tie: the relevant doc has the smallest id, so it ranks last
    assert mrr["E2"] == 1.0  # 1.000000001 > 1.0 as doubles
    assert mrr["E8"] == 1.0  # bytewise: "Ä1" (0xC3...) sorts after every ASCII id, so it ranks first
    assert scores.missing_run == ("E4",)
    assert "E5" not in scores.query_ids  # in the run, not in the gold set: ignored
    assert scores.no_relevant == ("E3",)  # only grade-0 judgments
    assert run.ranked("E8") == ("Ä1", "d9", "d10", "a#1")
    assert run.ranked("E11") == ("z2", "z1", "zq")


def test_the_first_relevant_rank_is_counted_in_the_whole_run(trec_eval_data: Path) -> None:
    gold = load_gold(trec_eval_data / "edge-cases" / "edge.qrels")
    run = load_run(trec_eval_data / "edge-cases" / "edge.run")

    scores = score_queries(gold, run, ["mrr@1"])
    first = dict(zip(scores.query_ids, scores.first_relevant_rank.tolist(), strict=True))

    assert first == {
        "E1": 3,
        "E10": 3,
        "E11": 1,
        "E2": 1,
        "E3": 0,
        "E4": 0,
        "E6": 2,
        "E7": 3,
        "E8": 1,
        "E9": 1,
    }


@pytest.mark.parametrize(("expected", "qrels", "run", "complete", "depth", "level"), CASES)
def test_complete_at_k_is_one_exactly_where_trec_evals_recall_k_is_one(
    trec_eval_data: Path,
    read_trec_eval_output,
    expected: str,
    qrels: str,
    run: str,
    complete: bool,
    depth: int | None,
    level: int,
) -> None:
    the_run = load_run(trec_eval_data / run, exact=True)
    if depth is not None:
        the_run = the_run.top(depth)
    printed = read_trec_eval_output(trec_eval_data / expected)
    recall = {name: qid for name, qid in printed if name.startswith("recall_") and qid != "all"}
    if not recall:
        pytest.skip(f"{expected} prints no recall_k")
    metrics = {f"complete@{name.removeprefix('recall_')}": name for name in dict.fromkeys(recall)}
    gold = _gold(trec_eval_data, qrels, the_run, complete, exact=True)
    scores = score_queries(gold, the_run, list(metrics), relevance_threshold=level)
    position = {qid: i for i, qid in enumerate(scores.query_ids)}

    compared = 0
    for ours, measure in metrics.items():
        for (name, qid), value in printed.items():
            if name == measure and qid != "all":
                expected_value = float(float(value) == 1.0)
                assert float(scores.values[ours][position[qid]]) == expected_value, f"{ours} {qid}"
                compared += 1

    assert compared == sum(1 for name, qid in printed if name in metrics.values() and qid != "all")
    assert compared > 10

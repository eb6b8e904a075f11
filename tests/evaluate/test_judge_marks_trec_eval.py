"""A qrels file whose lines carry judge marks (the iteration column, ``formats.judge_marks``) scores
bit for bit as trec_eval 10 printed for the same file unmarked: the mark changes what is counted as a
judge's, never a figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluate.test_metrics_trec_eval import our_metric
from realrecall.evaluate.scoring import score_queries
from realrecall.gold import load_gold
from realrecall.runs import load_run
from support.trec_readers import READERS, choose

pytestmark = pytest.mark.reference_data


def _marked_copy(source: Path, target: Path, every: int) -> int:
    """``source`` with every ``every``-th judgment line marked as a judge's; how many were marked."""
    lines, marked = [], 0
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines()):
        fields = line.split()
        if len(fields) >= 4 and not fields[0].startswith("#") and number % every == 0:
            fields[1] = "judge:gpt-4o-mini" if number % 2 else "judge:llama-3"
            line, marked = " ".join(fields), marked + 1
        lines.append(line)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return marked


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("expected", "qrels", "run", "level"),
    [
        ("derived/te10.qrels.test__results.test.txt", "upstream/qrels.test", "upstream/results.test", 1),
        (
            "derived/te10.qrels.rel_level__results.test__l2.txt",
            "upstream/qrels.rel_level",
            "upstream/results.test",
            2,
        ),
        (
            "derived/te10.qrels.comment.test__results.comment.test.txt",
            "upstream/qrels.comment.test",
            "upstream/results.comment.test",
            1,
        ),
    ],
)
def test_a_qrels_file_with_judge_marks_scores_as_trec_eval_10_printed_it_unmarked(
    trec_eval_data: Path,
    read_trec_eval_output,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    reader: str,
    expected: str,
    qrels: str,
    run: str,
    level: int,
) -> None:
    exact = choose(reader, monkeypatch)
    marked_path = tmp_path / "marked.qrels"
    marked = _marked_copy(trec_eval_data / qrels, marked_path, every=3)
    gold = load_gold(marked_path, exact=exact)
    the_run = load_run(trec_eval_data / run, exact=exact)
    printed = read_trec_eval_output(trec_eval_data / expected)
    metrics = {ours: name for name, _ in printed if (ours := our_metric(name))}
    scores = score_queries(gold.qrels(), the_run, list(metrics), relevance_threshold=level)

    position = {qid: i for i, qid in enumerate(scores.query_ids)}
    compared = 0
    for ours, measure in metrics.items():
        for (name, qid), value in printed.items():
            if name == measure:
                ours_value = scores.mean(ours) if qid == "all" else float(scores.values[ours][position[qid]])
                assert ours_value == float(value), f"{measure} {qid}"
                compared += 1
    assert compared > 10
    assert sum(map(len, gold.judged_by_judge().values())) == marked > 100

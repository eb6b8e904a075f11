"""Prediction-powered inference checked on data it was not built on (issue 32, "How it is checked").

``judge ppi`` was built against TREC DL 2023 (GPT-4 and NIST labels of the same pairs). Here a fake
judge with known error rates grades Cranfield: eight BM25 settings retrieve the top 10 for its 225
questions; the judge grades every pair people judged (one grade too high 30% of the time, a random
grade 15%) and every pooled passage people never judged (relevant 15% of the time, where people's
missing grade counts as 0). Scored with its labels every system comes out too high; PPI with people's
labels on m random questions must remove that and cover the all-human figure about 95% of the time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from realrecall.calibrate.ppi import prediction_powered
from realrecall.calibrate.query_scores import QueryScores
from realrecall.corpus import load_corpus
from realrecall.evaluate.retrievers.bm25 import BM25Retriever
from realrecall.evaluate.scoring import score_queries
from realrecall.gold import load_gold
from realrecall.runs import Run

SETTINGS: tuple[dict[str, Any], ...] = (
    {},
    {"k1": 1.2, "b": 0.75},
    {"k1": 0.3, "b": 0.1},
    {"k1": 2.0, "b": 1.0},
    {"stemmer": None},
    {"stopwords": None},
    {"method": "robertson", "k1": 1.5, "b": 0.9},
    {"k1": 0.9, "b": 0.0, "stemmer": None},
)


def _fake_judge(
    human: dict[str, dict[str, int]], runs: list[dict[str, list[str]]], rng: np.random.Generator
) -> dict[str, dict[str, int]]:
    judge: dict[str, dict[str, int]] = {}
    for qid, grades in human.items():
        mine: dict[str, int] = {}
        for passage, grade in grades.items():
            u = rng.random()
            mine[passage] = min(grade + 1, 4) if u < 0.3 else int(rng.integers(0, 5)) if u < 0.45 else grade
        for run in runs:
            for passage in run[qid]:
                if passage not in mine:
                    mine[passage] = int(rng.integers(1, 4)) if rng.random() < 0.15 else 0
        judge[qid] = mine
    return judge


@pytest.fixture(scope="module")
def cranfield_scores(reference_data: Path) -> tuple[QueryScores, np.ndarray]:
    """nDCG@10 per system and question under the judge's labels (all 225), and under people's."""
    folder = reference_data / "cranfield"
    corpus = load_corpus(folder / "corpus.jsonl")
    gold = load_gold(folder)
    ids = [q.query_id for q in gold]
    texts = [q.query for q in gold]
    runs = [dict(zip(ids, BM25Retriever(corpus, **s).search(texts, 10), strict=True)) for s in SETTINGS]
    human = {q.query_id: dict(q.gold) for q in gold}
    judge = _fake_judge(human, runs, np.random.default_rng(32))

    def table(labels: dict[str, dict[str, int]]) -> np.ndarray:
        return np.array(
            [score_queries(labels, Run.from_lists(run), ["ndcg@10"]).values["ndcg@10"] for run in runs]
        )

    systems = tuple(f"bm25-{i}" for i in range(len(runs)))
    return QueryScores("ndcg@10", systems, tuple(ids), table(judge)), table(human)


@pytest.mark.slow
@pytest.mark.reference_data
def test_a_fake_judge_on_cranfield_is_corrected_to_nominal_coverage(
    cranfield_scores: tuple[QueryScores, np.ndarray],
) -> None:
    judge, human = cranfield_scores
    truth = human.mean(axis=1)
    # The judge alone is too high for every system (by 0.04 to 0.06 nDCG@10 with these error rates).
    assert np.all(judge.means - truth > 0.03)
    rng = np.random.default_rng(2026)
    # Measured over 1,000 draws: 0.926 / 0.950 / 0.950 at m = 20 / 40 / 80; 300 draws move each by ~0.01.
    for m, lowest in ((20, 0.90), (40, 0.92), (80, 0.92)):
        covered, errors = [], []
        for _ in range(300):
            chosen = rng.choice(len(judge.query_ids), m, replace=False)
            labelled = QueryScores(
                "ndcg@10", judge.systems, tuple(judge.query_ids[j] for j in chosen), human[:, chosen]
            )
            report = prediction_powered(judge, labelled)
            lows = np.array([s.ci.low for s in report.systems])
            highs = np.array([s.ci.high for s in report.systems])
            covered.append(np.mean((lows <= truth) & (truth <= highs)))
            errors.append(np.mean([s.estimate for s in report.systems] - truth))
        assert lowest <= float(np.mean(covered)) <= 0.98, m
        assert abs(float(np.mean(errors))) < 0.005, m

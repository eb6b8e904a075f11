"""Corpus-growth study (issue 30): does the calibrated figure for traffic WITHOUT real questions hold?

    .venv/bin/python benchmarks/study_growth.py                          # SciFact and Cranfield, 100 splits
    .venv/bin/python benchmarks/study_growth.py --corpora cranfield --splits 20 --retrievers bm25

On public data nobody here wrote (BEIR SciFact test: 300 claims; Cranfield: 225 questions), from
``shared/reference-data`` beside the checkout:

1. the documents are clustered into ``--topics`` topics (k-means on their TF-IDF vectors, seeded); every
   question, real or synthetic, takes the topic of its first gold document;
2. an extractive synthetic set (offline, no model) from a sample of the chunks;
3. each retriever is evaluated once on both sets;
4. ``--splits`` times, a random ``--new`` share of the topics is "new" (documents that arrived after the
   real set was collected): their real questions are held out. The calibrated estimate
   (``calibrated_estimate``, as ``calibrate --calibrate-by topic`` computes it) sees the real questions
   of the other topics and every synthetic question, with the real traffic shares of the topics as
   weights (``--stratum-weight``, known here from the whole real set). Its figure for the traffic
   without real questions (``predicted``) is checked against the real recall@10 of the held-out
   questions: covered by the 95% interval or not, and its absolute error beside the error of simply
   quoting the measured topics' real mean.

Every split is a new partition (not one fixed old/new split, whose interval width would be a constant
any coverage target could be met by raising).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realrecall.calibrate.calibrated_estimate import calibrated_estimate
from realrecall.evaluate import EvaluationResult, QueryResult, evaluate
from realrecall.evaluate.retrievers.options import RunSettings
from study_calibration import Data, build, find_reference_data, load_data

METRIC = "recall@10"
NOW = datetime(2026, 12, 4, tzinfo=UTC)


def topics_of(data: Data, count: int, seed: int) -> dict[str, int]:
    """Each document's topic: k-means over TF-IDF vectors of its title and text."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    chunks = list(data.corpus)
    vectors = TfidfVectorizer(stop_words="english", max_features=20_000, sublinear_tf=True).fit_transform(
        [f"{c.title or ''} {c.text}" for c in chunks]
    )
    labels = KMeans(n_clusters=count, n_init=4, random_state=seed).fit_predict(vectors)
    return {c.id: int(label) for c, label in zip(chunks, labels, strict=True)}


def with_topic(result: EvaluationResult, topic: dict[str, int]) -> EvaluationResult:
    def tagged(q: QueryResult) -> QueryResult:
        # The first in the gold set's own order: ``relevant()`` is a frozenset, whose order changes with
        # every process's string hashing, and so did the topic of a question with several gold documents.
        judged = q.relevant()
        relevant = [p for p in q.gold if p in judged and p in topic]
        return replace(q, fields={**q.fields, "topic": f"t{topic[relevant[0]]}" if relevant else "none"})

    return replace(
        result,
        gold_sets=tuple(replace(g, queries=tuple(tagged(q) for q in g.queries)) for g in result.gold_sets),
    )


@dataclass(frozen=True)
class Outcome:
    covered: bool
    error: float
    baseline_error: float
    width: float
    model: str


def one_split(
    real: list[QueryResult],
    synthetic: list[QueryResult],
    topics: list[str],
    rng: np.random.Generator,
    new: float,
) -> Outcome | None:
    held = set(rng.choice(topics, size=max(1, round(new * len(topics))), replace=False).tolist())
    kept = [q for q in real if q.field("topic") not in held]
    unseen = [q for q in real if q.field("topic") in held]
    if not unseen or not kept:
        return None
    counts = {t: sum(q.field("topic") == t for q in real) for t in topics}
    values = {q.field("topic") for q in [*real, *synthetic]}
    weights = {t: float(counts.get(t, 0)) for t in values}
    estimate = calibrated_estimate(
        METRIC, synthetic, kept, synthetic,
        by="topic", same_synthetic=True, binary=True, calibrated_on=None, max_age_days=None, now=NOW,
        confidence=0.95, n_resamples=2000, rng=np.random.default_rng(int(rng.integers(2**31))),
        weights=weights,
    )  # fmt: skip
    if estimate is None or estimate.predicted is None or estimate.model is None:
        return None
    truth = float(np.mean([q.metrics[METRIC] for q in unseen]))
    baseline = float(np.mean([q.metrics[METRIC] for q in kept]))
    interval = estimate.predicted.interval
    return Outcome(
        covered=interval.low <= truth <= interval.high,
        error=abs(estimate.predicted.value - truth),
        baseline_error=abs(baseline - truth),
        width=interval.width,
        model=estimate.model.model,
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="scifact,cranfield")
    parser.add_argument("--retrievers", default="bm25,title-only")
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--new", type=float, default=0.3, help="share of topics held out as new")
    parser.add_argument("--sample", type=int, default=1000, help="chunks the synthetic set is drawn from")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    reference = find_reference_data()
    if reference is None:
        raise SystemExit("shared/reference-data not found beside the checkout: nothing to study")
    started = time.perf_counter()
    print(
        f"study_growth: {args.splits} splits, {args.topics} topics, {args.new:.0%} of them new, "
        f"seed {args.seed}"
    )
    print(
        f"{'corpus':<10} {'retriever':<11} {'covered':>8} {'error':>7} {'pooled':>7} {'ratio':>6} "
        f"{'width':>6}  models"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for corpus in args.corpora.split(","):
            data = load_data(reference / corpus, corpus, args.sample, args.seed, Path(scratch))
            topic = topics_of(data, args.topics, args.seed)
            for name in args.retrievers.split(","):
                retriever = build(name, data.corpus, RunSettings())
                result = with_topic(
                    evaluate([data.real, data.synthetic], corpus=data.corpus, retriever=retriever, k=[10]),
                    topic,
                )
                real, synthetic = list(result.of_origin("real")), list(result.of_origin("synthetic"))
                topics = sorted({q.field("topic") for q in real})
                rng = np.random.default_rng(args.seed)
                outcomes = [
                    o for _ in range(args.splits) if (o := one_split(real, synthetic, topics, rng, args.new))
                ]
                covered = sum(o.covered for o in outcomes)
                error = float(np.mean([o.error for o in outcomes]))
                baseline = float(np.mean([o.baseline_error for o in outcomes]))
                width = float(np.mean([o.width for o in outcomes]))
                models = {m: sum(o.model == m for o in outcomes) for m in sorted({o.model for o in outcomes})}
                ratio = error / baseline if baseline else math.nan
                print(
                    f"{corpus:<10} {name:<11} {covered:>4}/{len(outcomes):<3} {error:7.3f} {baseline:7.3f} "
                    f"{ratio:6.2f} {width:6.3f}  {models}",
                    flush=True,
                )
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

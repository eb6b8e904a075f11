"""Checks on the sample data shipped in src/realrecall/data/ (standard library only)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

DATA_DIR = Path(__file__).resolve().parents[1] / "src" / "realrecall" / "data"
CORPUS_PATH = DATA_DIR / "docs_corpus.jsonl"
QUESTIONS_PATH = DATA_DIR / "real_questions.jsonl"

QUESTION_TYPES = {"lookup", "conceptual", "comparison", "troubleshooting"}
CHUNK_ID_RE = re.compile(r"^(?P<lang>[a-z]{2})-(?P<doc>[a-z0-9-]+)-(?P<num>\d{3})$")
QUERY_ID_RE = re.compile(r"^r-\d{3}$")


def _load_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            assert line.strip(), f"{path.name}:{lineno} is an empty line"
            row = json.loads(line)
            assert isinstance(row, dict), f"{path.name}:{lineno} is not a JSON object"
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    return _load_jsonl(CORPUS_PATH)


@pytest.fixture(scope="module")
def corpus_by_id(corpus: list[dict]) -> dict[str, dict]:
    return {chunk["id"]: chunk for chunk in corpus}


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return _load_jsonl(QUESTIONS_PATH)


# --- corpus ---------------------------------------------------------------


def test_corpus_ids_are_unique(corpus: list[dict]) -> None:
    dupes = [cid for cid, n in Counter(c["id"] for c in corpus).items() if n > 1]
    assert dupes == []


def test_corpus_required_fields(corpus: list[dict]) -> None:
    for chunk in corpus:
        assert set(chunk) == {"id", "title", "text", "metadata"}, chunk.get("id")
        for key in ("id", "title", "text"):
            assert isinstance(chunk[key], str), (chunk["id"], key)
            assert chunk[key].strip(), (chunk["id"], key)
        meta = chunk["metadata"]
        assert {"doc", "language", "section"} <= set(meta), chunk["id"]
        assert chunk["title"].endswith(meta["section"]), chunk["id"]


def test_corpus_ids_match_metadata(corpus: list[dict]) -> None:
    for chunk in corpus:
        m = CHUNK_ID_RE.match(chunk["id"])
        assert m, chunk["id"]
        assert m["lang"] == chunk["metadata"]["language"], chunk["id"]
        assert m["doc"] == chunk["metadata"]["doc"], chunk["id"]


def test_corpus_size_and_languages(corpus: list[dict]) -> None:
    assert len(corpus) >= 220
    langs = Counter(c["metadata"]["language"] for c in corpus)
    assert len(langs) >= 2
    assert langs["en"] >= 150
    assert langs["de"] >= 50


def test_corpus_is_grouped_into_documents(corpus: list[dict]) -> None:
    docs = Counter(c["metadata"]["doc"] for c in corpus)
    assert 15 <= len(docs) <= 25
    # every document has more than a couple of chunks
    assert min(docs.values()) >= 5


def test_chunk_lengths(corpus: list[dict]) -> None:
    for chunk in corpus:
        words = len(chunk["text"].split())
        assert 40 <= words <= 160, (chunk["id"], words)


def test_corpus_contains_identifiers_for_lookups(corpus: list[dict]) -> None:
    text = " ".join(c["text"] for c in corpus)
    assert len(set(re.findall(r"\bE\d{4}\b", text))) >= 15  # error codes
    assert len(set(re.findall(r"`[a-z_]+\.[a-z_.]+`", text))) >= 30  # config keys


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def test_corpus_has_a_few_intentional_near_duplicates(corpus: list[dict]) -> None:
    words = {c["id"]: _word_set(c["text"]) for c in corpus}
    ids = sorted(words)
    near = set()
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            jaccard = len(words[a] & words[b]) / len(words[a] | words[b])
            if jaccard > 0.55:
                near.add((a, b))
    expected = {
        # backup retention note: backup guide, admin guide and FAQ
        ("en-backup-004", "en-faq-002"),
        ("en-admin-006", "en-backup-004"),
        ("en-admin-006", "en-faq-002"),
        # trash retention: admin guide and FAQ
        ("en-admin-005", "en-faq-001"),
        # the plan limits table in three places
        ("en-admin-012", "en-plans-002"),
        ("en-admin-012", "en-faq-003"),
        ("en-faq-003", "en-plans-002"),
        # the German edition repeats its backup retention note in its FAQ
        ("de-backup-004", "de-faq-002"),
    }
    assert expected <= near
    # "a few": near-duplicates are deliberate, not a sign of copy-paste everywhere
    assert len(near) <= 12, sorted(near - expected)


# --- questions --------------------------------------------------------------


def test_question_ids_are_unique(questions: list[dict]) -> None:
    ids = [q["query_id"] for q in questions]
    assert len(ids) == len(set(ids))
    assert all(QUERY_ID_RE.match(i) for i in ids)
    texts = [q["query"].strip().lower() for q in questions]
    assert len(texts) == len(set(texts)), "duplicate question text"


def test_question_required_fields(questions: list[dict]) -> None:
    required = {"query_id", "query", "gold", "origin", "type", "language", "source"}
    for q in questions:
        assert required <= set(q), q.get("query_id")
        assert isinstance(q["query"], str), q["query_id"]
        assert q["query"].strip(), q["query_id"]
        assert q["origin"] == "real", q["query_id"]
        assert q["type"] in QUESTION_TYPES, q["query_id"]
        assert q["language"] in {"en", "de"}, q["query_id"]
        assert isinstance(q["gold"], dict), q["query_id"]
        assert q["gold"], q["query_id"]
        for cid, grade in q["gold"].items():
            assert isinstance(grade, int), (q["query_id"], cid)
            assert grade in (1, 2), (q["query_id"], cid)


def test_every_gold_id_exists(questions: list[dict], corpus_by_id: dict[str, dict]) -> None:
    missing = [(q["query_id"], cid) for q in questions for cid in q["gold"] if cid not in corpus_by_id]
    assert missing == []


def test_gold_language_matches_question(questions: list[dict], corpus_by_id: dict[str, dict]) -> None:
    for q in questions:
        for cid in q["gold"]:
            assert corpus_by_id[cid]["metadata"]["language"] == q["language"], (q["query_id"], cid)


def test_german_questions_have_german_gold(questions: list[dict], corpus_by_id: dict[str, dict]) -> None:
    german = [q for q in questions if q["language"] == "de"]
    assert len(german) >= 25
    for q in german:
        assert all(corpus_by_id[cid]["metadata"]["language"] == "de" for cid in q["gold"]), q["query_id"]


def test_question_counts(questions: list[dict]) -> None:
    assert len(questions) >= 120
    types = Counter(q["type"] for q in questions)
    assert set(types) == QUESTION_TYPES
    # rough mix: no type dominates and none is marginal
    for t in QUESTION_TYPES:
        assert 0.10 <= types[t] / len(questions) <= 0.45, (t, types[t])
    multi = [q for q in questions if len(q["gold"]) > 1]
    assert len(multi) >= 15


def test_grade_two_only_marks_best_of_several(questions: list[dict]) -> None:
    for q in questions:
        grades = list(q["gold"].values())
        if 2 in grades:
            assert len(grades) > 1, q["query_id"]
            assert grades.count(2) == 1, q["query_id"]


def test_questions_do_not_copy_chunks(questions: list[dict], corpus: list[dict]) -> None:
    """Real questions are written without reading the docs: none is a verbatim piece of a chunk."""
    texts = [(c["title"] + " " + c["text"]).lower() for c in corpus]
    for q in questions:
        query = q["query"].lower().strip(" ?")
        if len(query.split()) >= 4:
            assert not any(query in t for t in texts), q["query_id"]


def test_lookup_questions_include_identifier_lookups(questions: list[dict]) -> None:
    lookups = [q["query"] for q in questions if q["type"] == "lookup"]
    with_ids = [s for s in lookups if re.search(r"\b[EW]\d{4}\b|\w+\.\w+_\w+", s)]
    assert len(with_ids) >= 10

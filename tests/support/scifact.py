"""SciFact chunked three ways, and its evidence-only gold set (issue 11): shared by the chunking tests
and ``benchmarks/study_chunking.py``.

``scifact/original/corpus_sentences.jsonl`` holds each abstract as its sentences (BEIR's text is them
joined with one space); ``original/claims_dev.jsonl`` gives, for 188 of the 300 BEIR test claims, the
indices of the sentences that support or refute them. The chunkings:

- ``whole``: one chunk per abstract (``doc_id`` and offset 0);
- ``sentences``: one chunk per sentence;
- ``windows``: three sentences, stride 2 (neighbouring windows share a sentence; the last reaches the end).

Every chunk carries ``doc_id``, ``start`` (its offset in the abstract's text) and the abstract's title.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from realrecall.evidence import Evidence
from realrecall.gold import GoldQuery, GoldSet

__all__ = ["CHUNKINGS", "abstracts", "chunk_records", "claims", "evidence_gold", "write_chunking"]

CHUNKINGS = ("whole", "sentences", "windows")


@cache
def abstracts(scifact: Path) -> dict[str, tuple[str, list[str]]]:
    """doc id -> (title, sentences)."""
    docs = {}
    with (scifact / "original" / "corpus_sentences.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            docs[str(record["doc_id"])] = (record["title"], record["abstract"])
    return docs


@cache
def claims(scifact: Path) -> tuple[dict, ...]:
    """The dev claims with evidence: ``{"id", "claim", "evidence": {doc: [sentence index, ...]}}``."""
    found = []
    with (scifact / "original" / "claims_dev.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["evidence"]:
                evidence = {
                    doc: sorted({i for group in groups for i in group["sentences"]})
                    for doc, groups in record["evidence"].items()
                }
                found.append({**record, "evidence": evidence})
    return tuple(found)


def offsets(sentences: list[str]) -> list[int]:
    """Where each sentence starts in the abstract's text (sentences joined with one space)."""
    starts, at = [], 0
    for sentence in sentences:
        starts.append(at)
        at += len(sentence) + 1
    return starts


def windows(n: int, size: int = 3, stride: int = 2) -> list[range]:
    """Windows of ``size`` sentences every ``stride``, the last one reaching the abstract's end."""
    spans, start = [], 0
    while True:
        spans.append(range(start, min(start + size, n)))
        if start + size >= n:
            return spans
        start += stride


def chunk_records(scifact: Path, chunking: str, *, with_sentences: bool = False) -> list[dict]:
    """The chunking as corpus records (``id``, ``title``, ``text``, ``doc_id``, ``start``);
    ``with_sentences`` adds ``sentences``, the indices of the sentences each chunk holds."""
    if chunking not in CHUNKINGS:
        raise ValueError(f"unknown chunking {chunking!r}")
    records = []
    for doc, (title, sentences) in abstracts(scifact).items():
        starts = offsets(sentences)
        if chunking == "whole":
            parts = [(doc, range(len(sentences)))]
        elif chunking == "sentences":
            parts = [(f"{doc}:s{i}", range(i, i + 1)) for i in range(len(sentences))]
        else:
            parts = [(f"{doc}:w{j}", span) for j, span in enumerate(windows(len(sentences)))]
        for chunk_id, span in parts:
            text = " ".join(sentences[i] for i in span)
            record = {"id": chunk_id, "title": title, "text": text, "doc_id": doc, "start": starts[span[0]]}
            records.append({**record, "sentences": list(span)} if with_sentences else record)
    return records


def write_chunking(scifact: Path, chunking: str, path: Path) -> Path:
    """The chunking as a corpus JSON Lines file."""
    lines = (json.dumps(record) + "\n" for record in chunk_records(scifact, chunking))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def evidence_gold(scifact: Path, *, name: str = "scifact-evidence") -> GoldSet:
    """One real query per claim with evidence; one evidence item (the sentence's text) per evidence
    sentence, no chunk id: the same set scores on any chunking."""
    queries = []
    for claim in claims(scifact):
        items = tuple(
            Evidence(doc, abstracts(scifact)[doc][1][i], 1)
            for doc, indices in claim["evidence"].items()
            for i in indices
        )
        queries.append(GoldQuery(str(claim["id"]), claim["claim"], {}, origin="real", evidence=items))
    return GoldSet(tuple(queries), name=name)

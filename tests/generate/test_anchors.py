"""Every generated question carries evidence (issue 11), and a synthetic set survives re-chunking: scored
with --gold-from evidence (or migrated) on another chunking of the same documents, each question's
gold is the new chunk that holds the sentence it was cut from."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from generate.fakes import FakeChatClient
from realrecall.corpus import Chunk, Corpus
from realrecall.curate import migrate_gold
from realrecall.evaluate import evaluate
from realrecall.generate import GenerateConfig, generate
from realrecall.generate.anchors import question_evidence, span_evidence
from realrecall.generate.planner import Slot
from realrecall.gold import load_gold
from realrecall.resolution import resolve_gold
from realrecall.runs import Run

TOPICS = ["router", "backup", "invoice", "printer", "password", "calendar"]


def document_sentences(doc: int) -> list[str]:
    topic = TOPICS[doc]
    return [
        f"The {topic} settings of document {doc} live in the main configuration panel.",
        f"Restart the {topic} service after changing any value in document {doc}.",
        f"Nightly jobs check the {topic} logs for errors around {doc} o'clock.",
        f"Support staff reset the {topic} account when users are locked out.",
        f"Older {topic} versions keep their data in a separate archive folder.",
        f"Every {topic} change is written to the audit trail within minutes.",
    ]


def chunking(size: int, stride: int) -> Corpus:
    """Windows of ``size`` sentences every ``stride`` over six documents, with doc_id and offsets."""
    chunks = []
    for doc in range(len(TOPICS)):
        sentences = document_sentences(doc)
        starts = [sum(len(s) + 1 for s in sentences[:i]) for i in range(len(sentences))]
        for first in range(0, len(sentences), stride):
            span = sentences[first : first + size]
            chunks.append(Chunk(f"d{doc}#{first}", " ".join(span), doc_id=f"d{doc}", start=starts[first]))
    return Corpus(tuple(chunks), path="memory")


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_extractive_questions_carry_their_sentence_with_offsets(tmp_path):
    corpus = chunking(3, 3)
    output = tmp_path / "synthetic.jsonl"
    generate(corpus, output, GenerateConfig(backend="extractive", near_duplicate=None, per_chunk=2))
    records = read_records(output)
    assert records
    for record in records:
        (chunk_id,) = record["gold"]
        chunk = corpus[chunk_id]
        (evidence,) = record["evidence"]
        assert (evidence["doc_id"], evidence["chunk_id"]) == (chunk.doc_id, chunk_id)
        assert evidence["text"] in chunk.text
        assert evidence["text"] != chunk.text  # one sentence of the three
        assert evidence["text"].lower().rstrip(".").find(record["query"].lower()[:20]) >= 0
        document = " ".join(document_sentences(int(chunk.doc_id[1:])))
        assert document[evidence["start"] : evidence["end"]] == evidence["text"]


def test_model_questions_carry_the_chunk_text(tmp_path, corpus):
    output = tmp_path / "synthetic.jsonl"
    generate(corpus, output, GenerateConfig(), client=FakeChatClient())
    for record in read_records(output):
        (chunk_id,) = record["gold"]
        # The corpus names no document: the chunk is a document of its own.
        assert record["evidence"] == [
            {"doc_id": chunk_id, "text": corpus[chunk_id].text, "grade": 1, "chunk_id": chunk_id}
        ]


@dataclass(frozen=True)
class _Situation:
    answer: str


@dataclass(frozen=True)
class _Candidate:
    situation: _Situation | None


def test_a_recorded_answer_quote_is_the_evidence_when_it_is_in_the_chunk():
    chunk = Chunk("c", "First part.  Restart   the service after a change. Last part.", doc_id="D", start=40)
    slot = Slot(chunk=chunk, index=0, type="how", language="en", persona=None, key="k")
    quoted = question_evidence(
        slot, "how?", _Candidate(_Situation("Restart the service after a change.")), extractive=False
    )
    assert [item.to_dict() for item in quoted] == [
        {
            "doc_id": "D",
            "text": "Restart   the service after a change.",
            "grade": 1,
            "start": 53,
            "end": 90,
            "chunk_id": "c",
        }
    ]
    reworded = question_evidence(slot, "how?", _Candidate(_Situation("reboot it")), extractive=False)
    assert reworded[0].text == chunk.text  # not in the chunk: the whole chunk
    assert span_evidence(chunk, "nowhere").text == chunk.text


def test_a_synthetic_set_survives_rechunking(tmp_path):
    windows = chunking(3, 2)  # 3-sentence windows, stride 2
    output = tmp_path / "synthetic.jsonl"
    generate(windows, output, GenerateConfig(backend="extractive", near_duplicate=None))
    synthetic = load_gold(output)
    sentences = chunking(1, 1)  # one chunk per sentence
    resolved, resolution = resolve_gold(synthetic, sentences, gold_from="evidence")
    assert resolution.lost == 0
    for before, after in zip(synthetic, resolved, strict=True):
        (evidence,) = before.evidence
        (gold,) = after.gold  # exactly the sentence the question was cut from
        assert sentences[gold].text == evidence.text

    # evaluate --gold-from evidence on the new chunking finds the same passages, and so does migrate.
    run = Run.from_lists({q.query_id: list(q.gold) for q in resolved})
    result = evaluate(synthetic, corpus=sentences, run=run, metrics=["recall@1"], gold_from="evidence")
    assert result.gold_sets[0].overall.metrics["recall@1"] == 1.0
    migrated = tmp_path / "migrated.jsonl"
    migrate_gold(output, sentences, output=migrated)
    assert {q.query_id: dict(q.gold) for q in load_gold(migrated)} == {
        q.query_id: dict(q.gold) for q in resolved
    }

"""gold import, gold add (and so review's judgements) and gold expand record the judged chunk's text as
evidence (issue 11), and an imported set survives re-chunking: scored with --gold-from evidence or
migrated to another chunking of the same documents, it finds the chunks that hold its passages."""

from __future__ import annotations

import json
from pathlib import Path

from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.curate import ImportSpec, Judgement, add_judgements, expand_gold, import_gold, migrate_gold
from realrecall.evaluate import evaluate
from realrecall.gold import GoldQuery, load_gold, write_gold
from realrecall.runs import Run
from support import cli

SENTENCES = {
    "manual": [
        "Hold the reset button for ten seconds to restore the router.",
        "The status light turns amber while the router restarts.",
        "Firmware updates install themselves every night at two.",
        "A blinking red light means the cable is not connected.",
    ],
    "billing": [
        "Invoices are sent on the first working day of each month.",
        "Refunds reach the original card within five working days.",
        "Card details can be changed from the account page.",
        "Unpaid invoices are reminded of after fourteen days.",
    ],
}


def chunk_file(path: Path, size: int, stride: int) -> Path:
    """Windows of ``size`` sentences every ``stride`` of each document, with doc_id and start."""
    records = []
    for doc, sentences in SENTENCES.items():
        starts = [sum(len(s) + 1 for s in sentences[:i]) for i in range(len(sentences))]
        for first in range(0, len(sentences), stride):
            text = " ".join(sentences[first : first + size])
            records.append(
                {"id": f"{doc}-{size}-{first}", "text": text, "doc_id": doc, "start": starts[first]}
            )
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_import_records_the_gold_chunks_text_and_the_set_survives_rechunking(tmp_path):
    sentences = chunk_file(tmp_path / "sentences.jsonl", 1, 1)
    table = tmp_path / "tickets.jsonl"
    rows = [
        {"question": "router stuck on amber", "doc": "manual-1-1"},
        {"question": "when do refunds arrive", "doc": "billing-1-1"},
        {"question": "when do refunds arrive", "doc": "billing-1-0"},
    ]
    table.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    gold_path = tmp_path / "real.jsonl"
    import_gold(table, ImportSpec(question="question", passage="doc"), corpus=sentences, output=gold_path)
    gold = load_gold(gold_path)
    amber = next(q for q in gold if q.query == "router stuck on amber")
    (item,) = amber.evidence
    assert item.to_dict() == {
        "doc_id": "manual",
        "text": SENTENCES["manual"][1],
        "grade": 1,
        "start": len(SENTENCES["manual"][0]) + 1,
        "end": len(SENTENCES["manual"][0]) + 1 + len(SENTENCES["manual"][1]),
        "chunk_id": "manual-1-1",
    }

    # Re-chunked into 3-sentence windows, stride 2: the windows holding each judged sentence are gold.
    windows = load_corpus(chunk_file(tmp_path / "windows.jsonl", 3, 2))
    expected = {
        amber.query_id: {"manual-3-0": 1},
        next(q.query_id for q in gold if q.query.startswith("when")): {"billing-3-0": 1},
    }
    result = evaluate(
        gold, corpus=windows, run=Run.from_lists({}), metrics=["recall@1"], gold_from="evidence"
    )
    assert {q.query_id: set(q.gold) for q in result.gold_sets[0].queries} == {
        query_id: set(ids) for query_id, ids in expected.items()
    }
    assert result.gold_sets[0].gold_passages.lost == 0
    migrate_gold(gold_path, windows, output=tmp_path / "migrated.jsonl")
    assert {q.query_id: dict(q.gold) for q in load_gold(tmp_path / "migrated.jsonl")} == expected


def test_without_a_corpus_import_records_no_evidence(tmp_path):
    table = tmp_path / "tickets.jsonl"
    table.write_text(json.dumps({"question": "refunds", "doc": "billing-1-1"}) + "\n", encoding="utf-8")
    result = import_gold(table, ImportSpec(question="question", passage="doc"))
    assert [q.evidence for q in result.queries] == [()]


def test_gold_add_records_the_judged_chunk_and_a_regrade_replaces_it(tmp_path):
    corpus_file = chunk_file(tmp_path / "sentences.jsonl", 1, 1)
    gold_path = tmp_path / "real.jsonl"
    write_gold(gold_path, [GoldQuery("q1", "router amber", {"manual-1-0": 1}, origin="real")])
    add_judgements(gold_path, [Judgement("q1", "manual-1-1", 1, "ana")], corpus=corpus_file)
    (query,) = load_gold(gold_path)
    assert [(e.chunk_id, e.grade, e.text) for e in query.evidence] == [
        ("manual-1-1", 1, SENTENCES["manual"][1])
    ]
    add_judgements(gold_path, [Judgement("q1", "manual-1-1", 2, "ben")], corpus=corpus_file)
    (query,) = load_gold(gold_path)
    assert [(e.chunk_id, e.grade) for e in query.evidence] == [("manual-1-1", 2)]
    assert dict(query.gold) == {"manual-1-0": 1, "manual-1-1": 2}


def test_cli_gold_add_without_a_corpus_says_no_evidence_is_recorded(tmp_path):
    gold_path = tmp_path / "real.jsonl"
    write_gold(gold_path, [GoldQuery("q1", "router amber", {"manual-1-0": 1}, origin="real")])
    done = cli.run("gold", "add", str(gold_path), "q1", "manual-1-1")
    assert done.returncode == 0, done.stderr
    assert "not recorded as evidence" in done.stderr
    corpus_file = chunk_file(tmp_path / "sentences.jsonl", 1, 1)
    done = cli.run("gold", "add", str(gold_path), "q1", "manual-1-2", "--corpus", str(corpus_file))
    assert done.returncode == 0, done.stderr
    assert "evidence" not in done.stderr
    (query,) = load_gold(gold_path)
    assert [e.chunk_id for e in query.evidence] == ["manual-1-2"]


def test_gold_expand_records_the_near_duplicates_it_adds(tmp_path):
    text = "Hold the reset button for ten seconds to restore the router to factory settings."
    corpus = Corpus((Chunk("a", text, doc_id="A"), Chunk("b", text + " ", doc_id="B"), Chunk("c", "Other.")))
    corpus_file = tmp_path / "corpus.jsonl"
    corpus_file.write_text(
        "".join(json.dumps({"id": c.id, "text": c.text, "doc_id": c.doc_id}) + "\n" for c in corpus.chunks)
    )
    gold_path = tmp_path / "real.jsonl"
    write_gold(gold_path, [GoldQuery("q1", "reset", {"a": 1}, origin="real")])
    expand_gold(gold_path, corpus_file, output=tmp_path / "expanded.jsonl")
    (query,) = load_gold(tmp_path / "expanded.jsonl")
    assert dict(query.gold) == {"a": 1, "b": 1}
    assert [(e.doc_id, e.chunk_id) for e in query.evidence] == [("B", "b")]

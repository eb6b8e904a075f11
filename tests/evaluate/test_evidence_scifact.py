"""Evidence-anchored gold on SciFact (issue 11): one gold set, three chunkings, checked against oracles.

``original/claims_dev.jsonl`` (the BEIR test claims) gives, for 188 of its 300 claims, the indices of
the abstract sentences that support or refute them (``original/corpus_sentences.jsonl``; BEIR's text
is those sentences joined with one space). The gold set built here carries that evidence only (each
sentence's text, no chunk id, no offsets), and is scored on three chunkings written as files:

- whole abstracts (with ``doc_id`` and offsets): the figures equal BEIR's document-level qrels exactly
  on the claims whose cited documents are the ones with evidence (175; the other 13 cite a document
  that holds none of their evidence, which no evidence can name);
- one chunk per sentence, and windows of three sentences with stride 2: the resolved gold equals the
  mapping this test computes from the sentence indices alone, and every per-query figure equals
  pytrec_eval's on that mapping and the same ranking;
- ``gold migrate`` carries the set from one chunking to the next and back, byte for byte.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from realrecall.corpus import Corpus, load_corpus
from realrecall.curate import migrate_gold
from realrecall.evaluate import evaluate
from realrecall.evaluate.results import EvaluationResult
from realrecall.evaluate.retrievers import build_retriever
from realrecall.evidence import Evidence
from realrecall.gold import GoldQuery, GoldSet, load_gold
from realrecall.resolution import resolve_gold
from support import scifact
from support.reference import find_reference_data

pytrec_eval = pytest.importorskip("pytrec_eval")

REFERENCE = find_reference_data()
SCIFACT = REFERENCE / "scifact" if REFERENCE is not None else None
pytestmark = [
    pytest.mark.skipif(
        SCIFACT is None or not (SCIFACT / "original" / "claims_dev.jsonl").is_file(),
        reason="SciFact reference data (shared/reference-data/scifact/original) is not here",
    ),
    pytest.mark.slow,  # bm25 over SciFact's chunkings, seconds
]

METRICS = ["recall@10", "recall@100", "passage_recall@10", "mrr@10", "ndcg@10"]
ORACLE = {
    "recall@10": "success_10",
    "recall@100": "success_100",
    "passage_recall@10": "recall_10",
    "ndcg@10": "ndcg_cut_10",
}
DEPTH = 100
CHUNKINGS = scifact.CHUNKINGS


# -- the data, read once -----------------------------------------------------------------------------


# The builders are shared with the chunking study (tests/support/scifact.py); here bound to the data.


def _data() -> Path:
    assert SCIFACT is not None
    return SCIFACT


def abstracts() -> dict[str, tuple[str, list[str]]]:
    """doc id -> (title, sentences)."""
    return scifact.abstracts(_data())


def claims() -> tuple[dict, ...]:
    """The dev claims with evidence: ``{"id", "claim", "evidence": {doc: [sentence index, ...]}}``."""
    return scifact.claims(_data())


@cache  # built once per chunking for the module (seconds for the sentences); the callers only read it
def chunk_records(chunking: str) -> list[dict]:
    """The chunking as JSON Lines records; ``sentences`` maps each chunk to the sentence indices it holds."""
    return scifact.chunk_records(_data(), chunking, with_sentences=True)


offsets, windows = scifact.offsets, scifact.windows


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("scifact-chunkings")
    paths = {}
    for chunking in CHUNKINGS:
        path = folder / f"{chunking}.jsonl"
        lines = (
            json.dumps({k: v for k, v in r.items() if k != "sentences"}) for r in chunk_records(chunking)
        )
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        paths[chunking] = path
    gold = folder / "evidence.jsonl"
    gold.write_text(
        "".join(json.dumps(query.to_record()) + "\n" for query in evidence_gold()), encoding="utf-8"
    )
    paths["gold"] = gold
    return paths


@pytest.fixture(scope="module")
def corpora(files) -> dict[str, Corpus]:
    return {chunking: load_corpus(files[chunking]) for chunking in CHUNKINGS}


def evidence_gold(*, with_text: bool = True, with_offsets: bool = False) -> GoldSet:
    """One query per claim with evidence; one evidence item per evidence sentence."""
    queries = []
    for claim in claims():
        items = []
        for doc, indices in claim["evidence"].items():
            sentences = abstracts()[doc][1]
            starts = offsets(sentences)
            for i in indices:
                span = (starts[i], starts[i] + len(sentences[i])) if with_offsets else (None, None)
                items.append(Evidence(doc, sentences[i] if with_text else None, 1, *span))
        queries.append(GoldQuery(str(claim["id"]), claim["claim"], {}, origin="real", evidence=tuple(items)))
    return GoldSet(tuple(queries), name="scifact-evidence")


@cache  # read only, like chunk_records
def expected_mapping(chunking: str) -> dict[str, dict[str, int]]:
    """The gold chunks, from the sentence indices alone: a chunk of an evidence document is gold when
    it holds one of the evidence sentences."""
    chunks_of: dict[str, list[dict]] = {}
    for record in chunk_records(chunking):
        chunks_of.setdefault(record["doc_id"], []).append(record)
    mapping = {}
    for claim in claims():
        gold = {}
        for doc, indices in claim["evidence"].items():
            for chunk in chunks_of[doc]:
                if set(chunk["sentences"]) & set(indices):
                    gold[chunk["id"]] = 1
        mapping[str(claim["id"])] = gold
    return mapping


def scored(gold: GoldSet, corpus: Corpus, **options) -> EvaluationResult:
    retriever = retrievers(corpus)
    return evaluate(gold, corpus=corpus, retriever=retriever, metrics=METRICS, depth=DEPTH, **options)


_RETRIEVERS: dict[int, object] = {}


def retrievers(corpus: Corpus) -> object:
    """One bm25 per chunking for the whole module (building it is the slow part)."""
    if id(corpus) not in _RETRIEVERS:
        _RETRIEVERS[id(corpus)] = build_retriever("bm25", corpus)
    return _RETRIEVERS[id(corpus)]


def per_query(result: EvaluationResult) -> dict[str, dict[str, float]]:
    return {query.query_id: dict(query.metrics) for query in result.gold_sets[0].queries}


# -- the checks --------------------------------------------------------------------------------------


def test_the_data_is_what_the_readme_says():
    assert len(claims()) == 188
    assert len(abstracts()) == 5183
    cited_elsewhere = [
        c["id"] for c in claims() if {int(d) for d in c["evidence"]} != set(c["cited_doc_ids"])
    ]
    assert len(cited_elsewhere) == 13
    assert all({int(d) for d in c["evidence"]} <= set(c["cited_doc_ids"]) for c in claims())


def test_whole_abstracts_score_exactly_as_beir_document_qrels(corpora):
    assert SCIFACT is not None
    corpus = corpora["whole"]
    gold, resolution = resolve_gold(evidence_gold(), corpus)
    assert {q.query_id: dict(q.gold) for q in gold} == expected_mapping("whole")
    assert (resolution.lost, resolution.by_id) == (0, 0)
    same_docs = {str(c["id"]) for c in claims() if {int(d) for d in c["evidence"]} == set(c["cited_doc_ids"])}
    beir = load_gold(SCIFACT)
    beir_subset = GoldSet(tuple(q for q in beir if q.query_id in same_docs), name="beir")
    evidence_subset = GoldSet(tuple(q for q in evidence_gold() if q.query_id in same_docs), name="evidence")
    assert len(beir_subset) == len(evidence_subset) == 175
    from_evidence, from_qrels = scored(evidence_subset, corpus), scored(beir_subset, corpus)
    assert per_query(from_evidence) == per_query(from_qrels)
    assert from_evidence.gold_sets[0].overall.metrics == from_qrels.gold_sets[0].overall.metrics
    passages = from_evidence.gold_sets[0].gold_passages
    assert passages is not None
    assert (passages.by_id, passages.lost, passages.split) == (0, 0, 0)
    assert passages.from_evidence == sum(len(q.gold) for q in beir_subset)


@pytest.mark.parametrize("chunking", ["sentences", "windows"])
def test_finer_chunkings_resolve_to_the_sentence_mapping_and_score_as_pytrec_eval(corpora, chunking):
    corpus = corpora[chunking]
    expected = expected_mapping(chunking)
    gold, resolution = resolve_gold(evidence_gold(), corpus)
    assert {q.query_id: dict(q.gold) for q in gold} == expected
    assert resolution.lost == 0
    # An evidence sentence in two windows (the overlap) resolves to both: "split".
    overlapping = sum(
        1
        for claim in claims()
        for doc, indices in claim["evidence"].items()
        for i in indices
        if sum(i in span for span in windows(len(abstracts()[doc][1]))) > 1
    )
    assert resolution.split == (overlapping if chunking == "windows" else 0)
    # Offsets alone (no text) find the same chunks.
    by_offsets, _ = resolve_gold(evidence_gold(with_text=False, with_offsets=True), corpus)
    assert {q.query_id: dict(q.gold) for q in by_offsets} == expected

    result = scored(evidence_gold(), corpus)
    queries = result.gold_sets[0].queries
    run = {q.query_id: {pid: float(DEPTH - rank) for rank, pid in enumerate(q.top)} for q in queries}
    measures = {"success.10,100", "recall.10", "ndcg_cut.10", "recip_rank"}
    oracle = pytrec_eval.RelevanceEvaluator(expected, measures).evaluate(run)
    top10 = {qid: {pid: s for pid, s in ranked.items() if s > DEPTH - 10} for qid, ranked in run.items()}
    oracle_rr = pytrec_eval.RelevanceEvaluator(expected, {"recip_rank"}).evaluate(top10)
    for query in queries:
        want = {name: oracle[query.query_id][measure] for name, measure in ORACLE.items()}
        want["mrr@10"] = oracle_rr[query.query_id]["recip_rank"]
        assert query.metrics == pytest.approx(want, abs=1e-12), query.query_id


def test_gold_migrate_carries_the_set_across_chunkings_and_back(files, corpora, tmp_path):
    first = migrate_gold(files["gold"], corpora["sentences"], output=tmp_path / "sentences.jsonl")
    assert first.mapped == 188
    assert first.resolution.lost == 0
    moved = load_gold(tmp_path / "sentences.jsonl")
    assert {q.query_id: dict(q.gold) for q in moved} == expected_mapping("sentences")
    assert all(q.evidence for q in moved)  # the evidence travels with the ids

    migrate_gold(tmp_path / "sentences.jsonl", files["windows"], output=tmp_path / "windows.jsonl")
    windowed = load_gold(tmp_path / "windows.jsonl")
    assert {q.query_id: dict(q.gold) for q in windowed} == expected_mapping("windows")
    back = migrate_gold(tmp_path / "windows.jsonl", corpora["whole"], output=tmp_path / "whole.jsonl")
    assert back.resolution.replaced_ids == sum(len(g) for g in expected_mapping("windows").values())
    whole = load_gold(tmp_path / "whole.jsonl")
    assert {q.query_id: dict(q.gold) for q in whole} == expected_mapping("whole")
    migrate_gold(tmp_path / "whole.jsonl", files["sentences"], output=tmp_path / "sentences-again.jsonl")
    assert (tmp_path / "sentences-again.jsonl").read_bytes() == (tmp_path / "sentences.jsonl").read_bytes()

    # The migrated ids score as the evidence does, with no resolution at all.
    by_ids = scored(moved, corpora["sentences"], gold_from="ids")
    by_evidence = scored(evidence_gold(), corpora["sentences"], gold_from="evidence")
    assert per_query(by_ids) == per_query(by_evidence)

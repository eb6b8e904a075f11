"""Resolving evidence-anchored gold against a chunking, on small inputs whose answer is known."""

from __future__ import annotations

import itertools

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evidence import Evidence
from realrecall.gold import GoldQuery, GoldSet
from realrecall.resolution import resolve_gold

DOC = "The cat sat. On the mat it slept. Dogs bark loudly."


def query(*evidence: Evidence, gold: dict[str, int] | None = None, qid: str = "q") -> GoldQuery:
    return GoldQuery(qid, "question", gold or {}, evidence=evidence)


def resolved(gold_set: GoldSet | GoldQuery, corpus: Corpus, **options):
    gold_set = gold_set if isinstance(gold_set, GoldSet) else GoldSet((gold_set,))
    result, resolution = resolve_gold(gold_set, corpus, **options)
    return {q.query_id: dict(q.gold) for q in result}, resolution


def chunks_of(text: str, cuts: list[int], *, offsets: bool = True, doc: str = "D") -> Corpus:
    """``text`` cut at ``cuts``, each piece stripped (as chunkers drop edge spaces)."""
    bounds = [0, *cuts, len(text)]
    chunks = []
    for i, (start, end) in enumerate(itertools.pairwise(bounds)):
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        stripped = piece.strip()
        chunks.append(
            Chunk(
                f"{doc}#{i}",
                stripped,
                doc_id=doc,
                start=start + lead if offsets else None,
                end=start + lead + len(stripped) if offsets else None,
            )
        )
    return Corpus(tuple(chunks))


def test_a_chunk_containing_the_text_after_nfkc_and_whitespace_is_gold():
    corpus = Corpus((Chunk("a", "The ﬁrst\n\n  line.", doc_id="D"), Chunk("b", "other", doc_id="D")))
    gold, resolution = resolved(query(Evidence("D", " The first line. ", grade=3)), corpus)
    assert gold == {"q": {"a": 3}}
    assert (resolution.from_evidence, resolution.split, resolution.lost) == (1, 0, 0)


def test_evidence_of_another_document_is_not_found_in_this_one():
    corpus = Corpus((Chunk("a", "On the mat it slept.", doc_id="D1"),))
    gold, resolution = resolved(query(Evidence("D2", "On the mat it slept.")), corpus)
    assert gold == {"q": {}}
    assert resolution.lost == 1
    assert resolution.lost_queries == ("q",)
    assert resolution.empty_queries == ("q",)


def test_a_chunk_naming_no_document_is_a_document_of_its_own():
    corpus = Corpus((Chunk("D1", DOC), Chunk("D2", "Dogs bark loudly.")))
    gold, _ = resolved(query(Evidence("D2", "Dogs bark")), corpus)
    assert gold == {"q": {"D2": 1}}


@pytest.mark.parametrize("offsets", [True, False])
def test_evidence_split_across_chunks_makes_each_long_enough_part_gold(offsets):
    # "On the mat it slept." (20 characters) cut after "On the mat": 10 characters in the first
    # chunk, 9 in the second (the space between them is in neither), with offsets or without.
    corpus = chunks_of(DOC, [23], offsets=offsets)
    evidence = Evidence("D", "On the mat it slept.")
    gold, resolution = resolved(query(evidence), corpus, coverage=0.45)
    assert gold == {"q": {"D#0": 1, "D#1": 1}}
    assert resolution.split == 1
    assert resolved(query(evidence), corpus, coverage=0.5)[0] == {"q": {"D#0": 1}}
    assert resolved(query(evidence), corpus, coverage=0.51)[0] == {"q": {}}


def test_coverage_threshold_with_offsets_given_on_the_evidence():
    corpus = chunks_of(DOC, [16, 30])  # "The cat sat. On" | "the mat it sl" | "ept. Dogs bark loudly."
    span = (DOC.index("On the"), DOC.index("slept.") + len("slept."))  # 13..33: 20 characters
    evidence = Evidence("D", None, 2, *span)
    spans = [(chunk.start, chunk.end) for chunk in corpus]
    assert spans == [(0, 15), (16, 30), (30, 51)]  # cover 2, 14 and 3 of the 20
    assert resolved(query(evidence), corpus, coverage=0.7)[0] == {"q": {"D#1": 2}}
    assert resolved(query(evidence), corpus, coverage=0.71)[0] == {"q": {}}
    assert resolved(query(evidence), corpus, coverage=0.15)[0] == {"q": {"D#1": 2, "D#2": 2}}
    assert resolved(query(evidence), corpus, coverage=0.1)[0] == {"q": {"D#0": 2, "D#1": 2, "D#2": 2}}


def test_evidence_text_is_located_in_the_document_rebuilt_from_chunk_offsets():
    # The evidence (29 characters at 6..35) runs over three chunks: "Alpha beta" (0..10, holds 4),
    # "gamma" (11..16, holds 5) and "delta epsilon zeta eta theta." (17..46, holds 18).
    text = "Alpha beta gamma delta epsilon zeta eta theta."
    corpus = chunks_of(text, [11, 17])
    evidence = Evidence("D", "beta  gamma\ndelta epsilon zeta")
    gold, _ = resolved(query(evidence), corpus, coverage=0.5)
    assert gold == {"q": {"D#2": 1}}
    assert resolved(query(evidence), corpus, coverage=0.15)[0] == {"q": {"D#1": 1, "D#2": 1}}
    assert resolved(query(evidence), corpus, coverage=0.13)[0] == {"q": {"D#0": 1, "D#1": 1, "D#2": 1}}


def test_grades_are_the_highest_over_evidence_items_per_chunk():
    corpus = chunks_of(DOC, [13, 34])
    evidence = (Evidence("D", "The cat sat.", grade=1), Evidence("D", "cat", grade=3), Evidence("D", "Dogs"))
    gold, resolution = resolved(query(*evidence), corpus)
    assert gold == {"q": {"D#0": 3, "D#2": 1}}
    assert resolution.from_evidence == 2


def test_lost_evidence_is_reported_and_the_query_keeps_its_place():
    corpus = chunks_of(DOC, [13])
    gold_set = GoldSet(
        (
            query(Evidence("D", "The cat sat."), Evidence("D", "a sentence no chunk holds"), qid="q1"),
            query(Evidence("D", "nowhere at all"), qid="q2"),
            query(Evidence("D", "Dogs bark"), qid="q3"),
        )
    )
    gold, resolution = resolved(gold_set, corpus)
    assert list(gold) == ["q1", "q2", "q3"]
    assert gold == {"q1": {"D#0": 1}, "q2": {}, "q3": {"D#1": 1}}
    assert resolution.lost == 2
    assert resolution.lost_queries == ("q1", "q2")
    assert resolution.empty_queries == ("q2",)


def test_auto_mode_uses_ids_the_corpus_holds_and_evidence_for_the_rest():
    corpus = chunks_of(DOC, [13, 34])
    gold_set = GoldSet(
        (
            # every id present: scored as written, its evidence (no chunk_id) not resolved again
            query(Evidence("D", "Dogs bark"), gold={"D#0": 2}, qid="kept"),
            # a stale id: replaced by its evidence
            query(Evidence("D", "Dogs bark", grade=2), gold={"old#7": 2}, qid="stale"),
            # a stale id and no evidence: kept, counted as missing
            GoldQuery("ids-only", "x", {"old#9": 1}),
            # one evidence item still has its chunk, the other's chunk is gone
            query(
                Evidence("D", "The cat sat.", chunk_id="D#0"),
                Evidence("D", "On the mat", chunk_id="old#3"),
                gold={"D#0": 1, "old#3": 1},
                qid="mixed",
            ),
        )
    )
    gold, resolution = resolved(gold_set, corpus, gold_from="auto")
    assert gold == {
        "kept": {"D#0": 2},
        "stale": {"D#2": 2},
        "ids-only": {"old#9": 1},
        "mixed": {"D#0": 1, "D#1": 1},
    }
    assert (resolution.by_id, resolution.from_evidence) == (2, 2)
    assert (resolution.missing_ids, resolution.replaced_ids) == (1, 2)
    by_ids, _ = resolved(gold_set, corpus, gold_from="ids")
    assert by_ids["stale"] == {"old#7": 2}
    from_evidence, _ = resolved(gold_set, corpus, gold_from="evidence")
    assert from_evidence["kept"] == {"D#2": 1}
    assert from_evidence["ids-only"] == {}


def test_auto_mode_on_the_chunking_the_ids_were_written_for_changes_nothing():
    corpus = chunks_of(DOC, [13, 34])
    gold_set = GoldSet((query(Evidence("D", "On the mat"), Evidence("D", "sat. On"), gold={"D#1": 1}),))
    assert resolved(gold_set, corpus)[0] == {"q": {"D#1": 1}}  # "sat. On" would add D#0 and D#1
    assert resolved(gold_set, corpus, gold_from="evidence")[0] == {"q": {"D#1": 1, "D#0": 1}}


def test_auto_mode_resolves_evidence_whose_chunk_id_now_names_another_chunk():
    corpus = chunks_of(DOC, [13, 34])  # D#1 is "On the mat it slept."
    stale = query(Evidence("D", "Dogs bark", chunk_id="D#1"), gold={"D#1": 1})
    gold, resolution = resolved(stale, corpus)
    assert gold == {"q": {"D#2": 1}}
    assert (resolution.by_id, resolution.replaced_ids, resolution.from_evidence) == (0, 1, 1)
    same = query(Evidence("D", "slept", chunk_id="D#1"), gold={"D#1": 2})
    assert resolved(same, corpus)[0] == {"q": {"D#1": 2}}


def test_overlapping_chunks_each_holding_the_evidence_count_as_split():
    corpus = Corpus(
        (
            Chunk("w0", "The cat sat. On the mat it slept.", doc_id="D", start=0),
            Chunk("w1", "On the mat it slept. Dogs bark loudly.", doc_id="D", start=13),
        )
    )
    gold, resolution = resolved(query(Evidence("D", "On the mat it slept.")), corpus)
    assert gold == {"q": {"w0": 1, "w1": 1}}
    assert resolution.split == 1


def test_settings_are_checked():
    corpus = chunks_of(DOC, [13])
    gold_set = GoldSet((query(Evidence("D", "cat")),))
    with pytest.raises(InputError, match="gold_from must be one of auto, ids, evidence, got 'chunks'"):
        resolve_gold(gold_set, corpus, gold_from="chunks")
    for bad in (0, 1.5, float("nan"), True):
        with pytest.raises(InputError, match=r"evidence_coverage must be a number in \(0, 1\]"):
            resolve_gold(gold_set, corpus, coverage=bad)

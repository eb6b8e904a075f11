"""Near-duplicate questions (generate/dedup.py); the text features it uses: tests/test_text_features.py."""

from __future__ import annotations

import pytest

from realrecall.errors import InputError
from realrecall.generate.dedup import NearDuplicateIndex
from realrecall.text_features import content_stems, jaccard


def test_near_duplicate_index_finds_rewordings_and_keeps_distinct_questions():
    index = NearDuplicateIndex(threshold=0.8)
    index.add("q1", "How do I reset my password?")
    assert index.find("how do i reset my password") == "q1"
    assert index.find("How do I reset my passwords?") == "q1"  # same stems
    assert index.find("How do I change my email address?") is None
    assert len(index) == 1


def test_near_duplicate_threshold_bounds():
    with pytest.raises(InputError, match="threshold must be in"):
        NearDuplicateIndex(threshold=0)


def test_a_shared_question_frame_does_not_make_questions_near_duplicates():
    index = NearDuplicateIndex(threshold=0.8)
    index.add("q1", "how do I get the thing to work with my printer", "en")
    assert index.find("how do I get the thing to work with my scanner", "en") is None
    assert index.find("how do i get the thing to work with my printer?", "en") == "q1"


@pytest.mark.parametrize(
    "question",
    [
        "how do I reset the backup scheduler password",
        "reset the backup scheduler password",
        "how do I reset the backup password",
        "backup scheduler password reset tonight",
        "why is the printer offline",
    ],
)
def test_the_index_decides_by_the_jaccard_of_content_stems(question: str) -> None:
    kept = "How do I reset the backup scheduler password?"
    index = NearDuplicateIndex(threshold=0.75)
    index.add("q1", kept, "en")
    similarity = jaccard(content_stems(question, "en"), content_stems(kept, "en"))
    assert (index.find(question, "en") == "q1") == (similarity >= 0.75)


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.75, 0.8, 0.9, 1.0])
def test_the_index_finds_exactly_what_comparing_every_pair_finds(threshold: float) -> None:
    # The index looks only at questions sharing one of the first few stems (prefix filtering): it
    # must still find a near-duplicate whenever comparing with every kept question does.
    import random

    rng = random.Random(threshold)
    words = [f"word{n}" for n in range(14)]
    index = NearDuplicateIndex(threshold)
    kept: list[tuple[str, set[str]]] = []
    for number in range(400):
        question = " ".join(rng.sample(words, rng.randint(1, 9)))
        stems = content_stems(question, "en")
        expected = next((qid for qid, other in kept if jaccard(stems, other) >= threshold), None)
        assert index.find(question, "en") == expected, question
        if expected is None:
            index.add(f"q{number}", question, "en")
            kept.append((f"q{number}", stems))
    assert len(kept) > 20

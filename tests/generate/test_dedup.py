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

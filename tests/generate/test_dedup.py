"""Lexical overlap (the definition in overlap.py) and near-duplicate detection."""

from __future__ import annotations

import pytest

from realrecall.generate.dedup import NearDuplicateIndex, jaccard
from realrecall.generate.overlap import content_stems, lexical_overlap, stopword_languages, stopwords

PASSAGE = (
    "To configure the backup scheduler, edit backup.toml and restart the agent (error E404 means no disk)."
)


def test_stopword_lists_for_english_and_german_ship_as_package_data():
    assert {"en", "de"} <= set(stopword_languages())
    assert {"the", "what", "how"} <= stopwords("en")
    assert {"der", "wie", "nicht"} <= stopwords("de")
    assert "backup" not in stopwords("en")


def test_overlap_is_the_share_of_question_content_stems_found_in_the_passage():
    # content stems of the question: confi(gure), backu(p), sched(uler), tonig(ht) -> 3 of 4 in the passage
    assert lexical_overlap("How do I configure the backup scheduler tonight?", PASSAGE, "en") == 0.75


def test_overlap_ignores_stopwords_and_matches_word_forms():
    assert lexical_overlap("what is configuring?", PASSAGE, "en") == 1.0
    assert content_stems("what is the", "en") == set()


def test_question_in_everyday_words_has_low_overlap():
    assert lexical_overlap("why does my laptop not save copies anymore?", PASSAGE, "en") == 0.0


def test_question_without_content_words_has_overlap_zero():
    assert lexical_overlap("what is it?", PASSAGE, "en") == 0.0


def test_words_with_digits_are_identifiers_compared_whole():
    assert lexical_overlap("E404", PASSAGE, "en") == 1.0
    assert lexical_overlap("E4041", PASSAGE, "en") == 0.0


def test_german_stopwords_apply_to_german_questions():
    passage = "Die Konfiguration der Sicherung steht in der Datei backup.toml."
    assert lexical_overlap("Wie konfiguriere ich die Sicherung?", passage, "de") == 1.0
    # Under English stopwords "wie", "ich" and "die" would count as content words.
    assert lexical_overlap("Wie konfiguriere ich die Sicherung?", passage, "en") < 1.0


def test_language_without_a_list_uses_every_list():
    assert stopwords("xx") == stopwords("en") | stopwords("de")
    assert stopwords("en-GB") == stopwords("en")


def test_jaccard_of_stem_sets():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0


def test_near_duplicate_index_finds_rewordings_and_keeps_distinct_questions():
    index = NearDuplicateIndex(threshold=0.8)
    index.add("q1", "How do I reset my password?")
    assert index.find("how do i reset my password") == "q1"
    assert index.find("How do I reset my passwords?") == "q1"  # same stems
    assert index.find("How do I change my email address?") is None
    assert len(index) == 1


def test_near_duplicate_threshold_bounds():
    with pytest.raises(ValueError, match="threshold"):
        NearDuplicateIndex(threshold=0)


def test_a_shared_question_frame_does_not_make_questions_near_duplicates():
    index = NearDuplicateIndex(threshold=0.8)
    index.add("q1", "how do I get the thing to work with my printer", "en")
    assert index.find("how do I get the thing to work with my scanner", "en") is None
    assert index.find("how do i get the thing to work with my printer?", "en") == "q1"

"""Text features: words, stems, stopwords, lexical overlap (defined in text_features.py), shingles."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import realrecall
from realrecall.text_features import (
    content_stems,
    identifier_overlap,
    identifiers,
    jaccard,
    lexical_overlap,
    shingles,
    stem,
    stems,
    stopword_languages,
    stopwords,
    words,
)

PASSAGE = (
    "To configure the backup scheduler, edit backup.toml and restart the agent (error E404 means no disk)."
)
ROOT = Path(__file__).resolve().parents[1]


def test_stopword_lists_for_english_and_german_ship_as_package_data():
    assert {"en", "de"} <= set(stopword_languages())
    assert {"the", "what", "how"} <= stopwords("en")
    assert {"der", "wie", "nicht"} <= stopwords("de")
    assert "backup" not in stopwords("en")


def test_the_stopword_files_are_named_in_the_package_data():
    # An editable install reads them from src/ whatever pyproject says; a wheel holds only what it lists.
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    package = Path(realrecall.__file__).parent
    files = sorted((package / "stopwords").glob("*.txt"))
    assert files
    for path in files:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch(relative, pattern) for pattern in globs["realrecall"]), relative


def test_words_are_runs_of_word_characters_as_written():
    assert words("How do I sync v2-notes?") == ["How", "do", "I", "sync", "v2", "notes"]
    assert words(" ,. ") == []


def test_stems_are_snowball_stems_of_every_word_length():
    assert stem("configuring") == "configur"
    assert stem("utf8") == "utf8"
    # Short words are stemmed too: "id" and "ids" are one word (they were compared whole).
    assert stem("ids") == stem("id") == "id"
    # One-character words carry no topic and are left out.
    assert stems("I configure a UTF8 x") == {"configur", "utf8"}


def test_stems_do_not_join_unrelated_long_words():
    # Five-letter truncation made both "confi".
    assert stem("confidence") != stem("configure")
    assert lexical_overlap("how confident is the agent?", "Configure the agent.", "en") == 0.5
    # ... while a word family stays one stem.
    assert {stem(word) for word in ("configure", "configuring", "configuration")} == {"configur"}


def test_stems_use_the_language_of_the_text():
    assert stem("sicherungen", "de") == stem("sicherung", "de")
    assert stems("Die Sicherungen", "de") == {"die", "sicher"}
    # A language without a Snowball stemmer is stemmed as English.
    assert stem("backups", "xx") == stem("backups", "en") == "backup"


def test_overlap_is_the_share_of_question_content_stems_found_in_the_passage():
    # content stems of the question: configur(e), backup, schedul(er), tonight -> 3 of 4 in the passage
    assert lexical_overlap("How do I configure the backup scheduler tonight?", PASSAGE, "en") == 0.75


def test_overlap_ignores_stopwords_and_matches_word_forms():
    assert lexical_overlap("what is configuring?", PASSAGE, "en") == 1.0
    assert content_stems("what is the", "en") == set()


def test_question_in_everyday_words_has_low_overlap():
    assert lexical_overlap("why does my laptop not save copies anymore?", PASSAGE, "en") == 0.0


def test_question_without_content_words_has_overlap_zero():
    assert lexical_overlap("what is it?", PASSAGE, "en") == 0.0


def test_words_with_digits_are_identifiers_counted_apart():
    assert lexical_overlap("E404", PASSAGE, "en") == 0.0  # no content word besides the identifier
    assert identifier_overlap("E404", PASSAGE) == 1.0
    assert identifier_overlap("E4041", PASSAGE) == 0.0


def test_identifiers_are_code_like_tokens_and_backticked_names():
    text = (
        "set n_results or MAX_SIZE in collection.query, see maxResults, PostgreSQL, `where`, E404 (e.g. v2)"
    )
    assert identifiers(text) == {
        "n_results",
        "max_size",
        "collection.query",
        "maxresults",
        "postgresql",
        "where",
        "e404",
        "v2",
    }
    # Abbreviations, plain words, numbers and a sentence's full stop are not identifiers.
    assert identifiers("e.g. the end. Then 2024 and i.e. Hello World") == set()


def test_identifiers_the_prompt_allows_do_not_raise_the_overlap():
    passage = "Pass n_results to collection.query to limit the matches; where_document filters the text."
    question = "how do I get fewer hits back from collection.query, is it n_results?"
    # The content words (fewer, hits, back) are the user's own: the filter sees 0, not 2 of 5.
    assert lexical_overlap(question, passage, "en") == 0.0
    assert identifier_overlap(question, passage) == 1.0
    assert identifier_overlap("what does `where_document` or `n_result` do", passage) == 0.5


def test_words_of_a_passage_identifier_count_as_copied():
    # Spelling an identifier out in words still copies it.
    passage = "Set backup_dir and maxRetries in the config."
    assert lexical_overlap("where is the backup dir and max retries", passage, "en") == 1.0


@given(st.text(max_size=120), st.text(max_size=300), st.sampled_from(["en", "de", None, "fr"]))
def test_overlap_is_a_share(question, passage, language):
    value = lexical_overlap(question, passage, language)
    assert 0.0 <= value <= 1.0


@given(st.text(min_size=1, max_size=120))
def test_a_question_copied_from_its_passage_has_overlap_one_or_no_content(text):
    assert lexical_overlap(text, text, "en") in (0.0, 1.0)


def test_german_stopwords_apply_to_german_questions():
    passage = "Die Konfiguration der Sicherung steht in der Datei backup.toml."
    assert lexical_overlap("Wie konfiguriere ich die Sicherung?", passage, "de") == 1.0
    # Under English stopwords "wie", "ich" and "die" would count as content words.
    assert lexical_overlap("Wie konfiguriere ich die Sicherung?", passage, "en") < 1.0


def test_language_without_a_list_uses_every_list():
    assert stopwords("xx") == stopwords("en") | stopwords("de")
    assert stopwords("en-GB") == stopwords("en")


def test_stems_lower_case_while_shingles_case_fold():
    # Kept apart so that the duplicate pairs found stay what they were.
    assert stems("Straße") == {"straße"}
    assert shingles("Straße", 3) == {"strasse"}


def test_shingles_are_word_n_grams_of_the_case_folded_text():
    assert shingles("Sync, the NOTES now", 3) == {"sync the notes", "the notes now"}
    assert shingles("Sync, the NOTES", 1) == {"sync", "the", "notes"}
    assert shingles("two words", 3) == {"two words"}
    assert shingles("  ", 3) == frozenset()


def test_jaccard_of_sets():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(frozenset({"a"}), frozenset({"a"})) == 1.0
    assert jaccard(set(), set()) == 1.0


def test_every_stage_uses_these_functions():
    import realrecall.curate
    import realrecall.generate
    from realrecall.calibrate import diagnostics
    from realrecall.curate import duplicates

    assert realrecall.generate.lexical_overlap is lexical_overlap
    assert realrecall.curate.shingles is shingles
    assert duplicates.shingles is shingles
    assert diagnostics._overlap_function() == (lexical_overlap, "realrecall.text_features.lexical_overlap")

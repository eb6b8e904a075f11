"""Normal forms: the same question, URL or title in another spelling meets its match."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from realrecall.curate import normalise_question, normalise_title, normalise_url, stable_query_id


@given(st.text())
def test_normalising_twice_changes_nothing(text: str) -> None:
    assert normalise_question(normalise_question(text)) == normalise_question(text)
    assert normalise_title(normalise_title(text)) == normalise_title(text)


# Letters whose upper case folds back to their own case fold (Turkish dotless i, for one, does not).
WORDS = st.text(alphabet=string.ascii_letters + string.digits + "äöüßÄÖÜéèàçñ", min_size=1)


@given(WORDS, st.sampled_from([" ", "  ", "\t", "\u00a0"]))
def test_query_ids_ignore_case_and_spacing(word: str, space: str) -> None:
    question = f"how do I {word}"
    assert stable_query_id(question) == stable_query_id(f"  {question.upper()}{space}".replace(" ", space))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://docs.example.com/sync/", "http://www.docs.example.com/sync"),
        ("https://docs.example.com/sync?utm_source=mail&b=2&a=1", "docs.example.com/sync?a=1&b=2"),
        ("https://Docs.Example.com:443/sync/index.html", "https://docs.example.com/sync"),
    ],
)
def test_urls_that_name_the_same_page_meet(a: str, b: str) -> None:
    assert normalise_url(a) == normalise_url(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://docs.example.com/sync#install", "https://docs.example.com/sync#upgrade"),
        ("https://docs.example.com/Sync", "https://docs.example.com/sync"),  # paths are case-sensitive
        ("https://docs.example.com:8470/sync", "https://docs.example.com/sync"),
    ],
)
def test_urls_of_different_pages_or_sections_stay_apart(a: str, b: str) -> None:
    assert normalise_url(a) != normalise_url(b)

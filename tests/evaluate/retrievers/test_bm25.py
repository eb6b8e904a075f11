"""BM25 over small corpora written here: ranking, k beyond the corpus, stemming, stopwords, errors."""

from __future__ import annotations

import pytest

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import BM25Options, BM25Retriever, build_retriever


def test_the_chunk_sharing_the_query_terms_ranks_first(pets_corpus: Corpus) -> None:
    retriever = build_retriever("bm25", pets_corpus)
    assert retriever.search(["why do cats purr", "interest rate and stock markets"], 3) == [
        ["cats"],
        ["stocks"],
    ]


def test_title_is_searched_with_the_text(pets_corpus: Corpus) -> None:
    retriever = BM25Retriever(pets_corpus)
    assert retriever.search(["aquarium"], 5) == [["fish"]]


def test_k_beyond_the_corpus_returns_every_matching_chunk_once() -> None:
    corpus = Corpus((Chunk("a", "apple pie"), Chunk("b", "apple juice and apple cake"), Chunk("c", "pears")))
    (ranked,) = BM25Retriever(corpus).search(["apple"], 1000)
    assert ranked == ["b", "a"]


def test_stemming_matches_inflected_forms_and_can_be_turned_off() -> None:
    corpus = Corpus((Chunk("run", "she was running fast"), Chunk("other", "a quiet afternoon")))
    assert BM25Retriever(corpus).search(["runs"], 5) == [["run"]]
    assert BM25Retriever(corpus, stemmer=None).search(["runs"], 5) == [[]]


def test_a_query_of_stopwords_alone_retrieves_nothing(pets_corpus: Corpus) -> None:
    assert BM25Retriever(pets_corpus).search(["the and of"], 5) == [[]]
    assert BM25Retriever(pets_corpus).search(["zyzzyva"], 5) == [[]]


def test_equal_scores_keep_corpus_order() -> None:
    corpus = Corpus(tuple(Chunk(f"d{i}", "same words here") for i in (3, 1, 2)))
    assert BM25Retriever(corpus).search(["words"], 2) == [["d3", "d1"]]


def test_empty_query_text_is_an_input_error(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError, match="query 2 of the batch has no text"):
        BM25Retriever(pets_corpus).search(["cats", ""], 5)


def test_options_reach_the_index_and_the_description(pets_corpus: Corpus) -> None:
    options = BM25Options(k1=1.2, b=0.75, method="robertson", stemmer=None, stopwords=None)
    retriever = build_retriever("bm25", pets_corpus, options=options)
    assert retriever.name == "bm25"
    assert "k1=1.2 b=0.75 method=robertson stemmer=none stopwords=none" in retriever.description
    assert retriever.description.startswith("bm25s ")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "bm42"}, "unknown BM25 method 'bm42'; choose from lucene, robertson, atire"),
        ({"stemmer": "klingon"}, "unknown stemmer 'klingon'"),
        ({"stopwords": "klingon"}, "unknown stopword language 'klingon'"),
    ],
)
def test_bad_settings_are_input_errors(pets_corpus: Corpus, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        BM25Retriever(pets_corpus, **kwargs)  # type: ignore[arg-type]


def test_scores_are_given_for_every_chunk_in_corpus_order(pets_corpus: Corpus) -> None:
    scores = BM25Retriever(pets_corpus).scores("dogs bark")
    assert scores.shape == (5,)
    assert scores[1] > 0
    assert scores[[0, 2, 3, 4]].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_a_corpus_with_no_word_to_index_is_an_input_error_not_a_crash() -> None:
    corpus = Corpus((Chunk("a", ""), Chunk("b", "the and of")), path="corpus.jsonl")
    with pytest.raises(InputError, match=r"^corpus\.jsonl: no chunk of the corpus has a word to index"):
        BM25Retriever(corpus)

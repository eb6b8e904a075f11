"""BM25 over the corpus, built in memory with bm25s (tokenize -> index -> score).

Each chunk is indexed as ``Chunk.searchable_text()`` (title and text, BEIR's convention). Tokens are
lower-cased runs of two or more word characters (scikit-learn's pattern, bm25s' default), stopwords
removed and Snowball-stemmed (PyStemmer; the stopword lists ship inside bm25s, nothing downloads).

With the defaults (k1 0.9, b 0.4, Lucene's BM25 variant, English stemming and stopwords), BEIR SciFact
test gives nDCG@10 0.676 (the BEIR paper's BM25: 0.665); tests/evaluate/retrievers/test_scifact.py pins it.
Only chunks sharing at least one term with the query are retrieved, as in Lucene: a query of
stopwords alone retrieves nothing rather than an arbitrary list of zero-scored chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import check_k, check_queries, library_version, top_k_indices
from realrecall.evaluate.retrievers.options import RetrieverSpec, RunSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RETRIEVER", "BM25Options", "BM25Retriever"]

METHODS = ("lucene", "robertson", "atire")


@dataclass(frozen=True, kw_only=True)
class BM25Options:
    """The options of ``bm25``; the defaults are Anserini's BEIR settings."""

    k1: Annotated[float, "term-frequency saturation (0 or more)"] = 0.9
    b: Annotated[float, "length normalisation, 0 (none) to 1 (full)"] = 0.4
    method: Annotated[str, "bm25s variant: lucene, robertson or atire"] = "lucene"
    stemmer: Annotated[str | None, "a Snowball language of PyStemmer, or none"] = "english"
    stopwords: Annotated[str | None, "a bm25s stopword language (en, de, fr, es...), or none"] = "english"

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        if self.method not in METHODS:
            raise InputError(f"unknown BM25 method {self.method!r}; choose from {', '.join(METHODS)}")


class BM25Retriever:
    """Lexical retrieval with BM25; see the module docstring for the tokenisation."""

    name = "bm25"

    def __init__(
        self,
        corpus: Corpus,
        *,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        stemmer: str | None = "english",
        stopwords: str | None = "english",
    ) -> None:
        if len(corpus) == 0:
            raise InputError("the corpus has no chunks to search", path=corpus.path)
        if method not in METHODS:
            raise InputError(f"unknown BM25 method {method!r}; choose from {', '.join(METHODS)}")
        self._ids = corpus.ids
        self._stem = _stemmer(stemmer)
        self._stopwords = _stopwords(stopwords)
        bm25s = _bm25s()
        self._model = bm25s.BM25(k1=k1, b=b, method=method)
        tokens = bm25s.tokenize(
            [chunk.searchable_text() for chunk in corpus],
            stopwords=self._stopwords,
            stemmer=self._stem,
            show_progress=False,
        )
        if not tokens.vocab:  # bm25s cannot index an empty vocabulary (it fails on max() of nothing)
            raise InputError(
                f"no chunk of the corpus has a word to index ({len(corpus)} chunks, every text empty "
                "or only stopwords)",
                path=corpus.path,
                hint='check the corpus\' "text" fields',
            )
        self._model.index(tokens, show_progress=False)
        stemming = "none" if stemmer is None else f"{stemmer} (PyStemmer {library_version('PyStemmer')})"
        self.description = (
            f"bm25s {library_version('bm25s')} k1={k1} b={b} method={method} "
            f"stemmer={stemming} stopwords={stopwords or 'none'} over title+text of {len(self._ids)} chunks"
        )

    @classmethod
    def from_options(cls, corpus: Corpus, options: BM25Options) -> BM25Retriever:
        return cls(
            corpus,
            k1=options.k1,
            b=options.b,
            method=options.method,
            stemmer=options.stemmer,
            stopwords=options.stopwords,
        )

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        tokenized = _bm25s().tokenize(
            list(queries),
            stopwords=self._stopwords,
            stemmer=self._stem,
            return_ids=False,
            show_progress=False,
        )
        return [self._rank(tokens, k) for tokens in tokenized]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for one query, in corpus order."""
        check_queries([query])
        (tokens,) = _bm25s().tokenize(
            [query], stopwords=self._stopwords, stemmer=self._stem, return_ids=False, show_progress=False
        )
        return self._scores(tokens)

    def _scores(self, tokens: list[str]) -> np.ndarray:
        import numpy as np

        token_ids = self._model.get_tokens_ids(tokens)
        if not token_ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        return np.asarray(self._model.get_scores_from_ids(token_ids))

    def _rank(self, tokens: list[str], k: int) -> list[str]:
        return [self._ids[i] for i in top_k_indices(self._scores(tokens), k, minimum=0.0)]


def _bm25s() -> Any:
    # Imported when a BM25 retriever is built, not when the registry is read: the CLI's --help lists
    # the retrievers, and bm25s takes longer to import than the rest of the CLI.
    import bm25s

    return bm25s


def _stemmer(language: str | None) -> Callable[[list[str]], list[str]] | None:
    if language is None:
        return None
    import Stemmer  # PyStemmer

    if language not in Stemmer.algorithms():
        raise InputError(
            f"unknown stemmer {language!r}",
            hint=f"choose a Snowball language ({', '.join(Stemmer.algorithms())}) or none",
        )
    return Stemmer.Stemmer(language).stemWords  # type: ignore[no-any-return]


def _stopwords(language: str | None) -> str | None:
    """Check a stopword language against bm25s' own lists (tokenising nothing raises for an unknown one)."""
    if language is None:
        return None
    try:
        _bm25s().tokenize([], stopwords=language, show_progress=False)
    except ValueError as exc:
        raise InputError(
            f"unknown stopword language {language!r}", hint="use e.g. english, de, fr, or none"
        ) from exc
    return language


def build(corpus: Corpus, options: BM25Options, settings: RunSettings) -> BM25Retriever:
    return BM25Retriever.from_options(corpus, options)


RETRIEVER = RetrieverSpec(
    name="bm25",
    options=BM25Options,
    build=build,
    summary="lexical BM25 in memory (bm25s, Snowball stemming): the default",
    libraries=("bm25s", "PyStemmer"),
)

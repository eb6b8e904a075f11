"""Dense retrieval: cosine similarity between query and chunk embeddings, exact (no ANN index).

Vectors are L2-normalised once, so cosine similarity is one matrix product per batch of queries; the
top k come from ``top_k_indices`` (linear-time partition, ties in corpus order). A zero vector stays
zero and scores 0 against everything rather than NaN.

``dense`` embeds with an OpenAI-compatible endpoint (``realrecall.llm.OpenAIEmbedder``), ``--embed-model``
naming the model; the Python API can pass any ``Embedder`` in ``DenseOptions.embedder``. Both go
through the on-disk embedding cache unless ``RunSettings.use_cache`` is off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import (
    Embedder,
    check_k,
    check_queries,
    checked_vectors,
    top_k_indices,
)
from realrecall.evaluate.retrievers.embedding_cache import CachedEmbedder, text_key
from realrecall.evaluate.retrievers.options import CorpusEmbeddings, RetrieverSpec, RunSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "RETRIEVER",
    "DenseOptions",
    "DenseRetriever",
    "EmbedCalls",
    "dense_embedder",
    "embed_corpus",
    "embed_corpus_at_once",
    "normalise_rows",
]

# Every call ``embed_corpus`` would make to the embedder, made at once (in parallel, elsewhere): the
# texts of each call, ``progress(done, total)`` counting their texts, and ``arrived(index, rows)``
# called with each call's rows as they come back; one array of rows a call, in the calls' order.
EmbedCalls = Callable[
    [
        list[list[str]],
        "Callable[[int, int], None] | None",
        "Callable[[int, np.ndarray], None] | None",
    ],
    "list[np.ndarray]",
]


@dataclass(frozen=True, kw_only=True)
class DenseOptions:
    """The options of ``dense``: the embedding model, or in Python the embedder itself."""

    embed_model: Annotated[str | None, "the endpoint's embedding model (required unless embedder)"] = None
    base_url: Annotated[str | None, "the OpenAI-compatible endpoint (default OPENAI_BASE_URL)"] = None
    llm_config: Annotated[Any, "a realrecall.llm.LLMConfig, instead of base_url"] = None
    embedder: Annotated[Embedder | None, "any Embedder, instead of the endpoint and embed_model"] = None


# The corpus goes to the embedder this many texts at a time: large enough for an API embedder to batch
# and parallelise within, small enough that an interrupted run keeps (in the cache) what it finished.
CORPUS_SLICE = 1024


class DenseRetriever:
    """Exact cosine-similarity search over the embeddings of every chunk's ``searchable_text()``.

    The corpus is embedded once, here, ``slice_size`` texts per call, with ``progress(done, total)``
    after each slice (``embed_corpus``), unless ``embedded`` holds its rows, made by the same embedder
    (by name) from the same chunks elsewhere; each batch of queries given to ``search`` is embedded in
    one call.
    ``length_sorted``: the corpus goes out longest text first (the rows come back in corpus order).
    A local model pads each batch to its longest text, and sentence-transformers sorts only within
    the one call it is given, so the order of the whole corpus is what keeps its slices from padding.
    """

    def __init__(
        self,
        corpus: Corpus,
        embedder: Embedder,
        *,
        slice_size: int = CORPUS_SLICE,
        name: str = "dense",
        progress: Callable[[int, int], None] | None = None,
        length_sorted: bool = False,
        embedded: CorpusEmbeddings | None = None,
    ) -> None:
        if len(corpus) == 0:
            raise InputError("the corpus has no chunks to search", path=corpus.path)
        self.name = name
        self._ids = corpus.ids
        self._embedder = embedder
        if embedded is not None and embedded.embedder == embedder.name and embedded.ids == tuple(corpus.ids):
            rows = embedded.rows  # made elsewhere from the same texts (the Ray engine's actor pool)
        else:
            rows = embed_corpus(
                corpus, embedder, slice_size=slice_size, progress=progress, length_sorted=length_sorted
            )
        self._matrix = normalise_rows(rows)
        self.description = (
            f"{name}: cosine similarity, exact search, {describe_embedder(embedder)} "
            f"(dim {self._matrix.shape[1]}) over title+text of {len(self._ids)} chunks"
        )

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        query_vectors = normalise_rows(_embed(self._embedder, list(queries), slice_size=len(queries)))
        if query_vectors.shape[1] != self._matrix.shape[1]:
            raise InputError(
                f"embedder {self._embedder.name!r} gave queries dimension {query_vectors.shape[1]} "
                f"but chunks dimension {self._matrix.shape[1]}",
                hint="embed queries and chunks with the same model",
            )
        similarities = query_vectors @ self._matrix.T
        return [[self._ids[i] for i in top_k_indices(row, k)] for row in similarities]


def embed_corpus(
    corpus: Corpus,
    embedder: Embedder,
    *,
    slice_size: int = CORPUS_SLICE,
    progress: Callable[[int, int], None] | None = None,
    length_sorted: bool = False,
) -> np.ndarray:
    """Every chunk's ``searchable_text()`` embedded, ``slice_size`` texts a call (longest first when
    ``length_sorted``), the raw rows in corpus order: what ``DenseRetriever`` searches, normalised."""
    texts = [chunk.searchable_text() for chunk in corpus]
    if not length_sorted:
        return _embed(embedder, texts, slice_size=slice_size, progress=progress)
    import numpy as np

    order = np.argsort([-len(text) for text in texts], kind="stable")
    sorted_rows = _embed(embedder, [texts[i] for i in order], slice_size=slice_size, progress=progress)
    rows = np.empty_like(sorted_rows)
    rows[order] = sorted_rows
    return rows


def embed_corpus_at_once(
    corpus: Corpus,
    embedder_name: str,
    embed_calls: EmbedCalls,
    settings: RunSettings,
    *,
    slice_size: int = CORPUS_SLICE,
    progress: Callable[[int, int], None] | None = None,
    length_sorted: bool = False,
) -> np.ndarray:
    """The rows ``embed_corpus`` gives with ``with_cache(embedder, settings)``, where ``embedder`` (named
    ``embedder_name``) is asked for its texts through ``embed_calls``, every call at once.

    The calls are the very ones the embedder would get slice after slice, in that order: a slice's
    texts, or through the cache each slice's distinct texts that neither the cache nor an earlier
    slice holds (``CachedEmbedder.plan``). A model pads each batch to its longest text, so the rows of
    a text depend (in the last bits) on the texts embedded with it; the same calls give the same rows,
    bit for bit. Each call's new rows are written to the cache here as they come back, so an
    interrupted run keeps them, as ``embed_corpus`` keeps each slice. ``progress`` counts the corpus's
    texts, as ``embed_corpus``'s does.
    """
    import numpy as np

    texts = [chunk.searchable_text() for chunk in corpus]
    order = np.argsort([-len(text) for text in texts], kind="stable") if length_sorted else None
    asked = [texts[i] for i in order] if order is not None else texts
    slices = [asked[start : start + slice_size] for start in range(0, len(asked), slice_size)]
    cache = with_cache(_Remote(embedder_name, embed_calls), settings)
    cached = cache if isinstance(cache, CachedEmbedder) else None
    known: dict[str, np.ndarray] = {}
    if cached is None:
        wanted = slices
    else:
        known, missing = cached.plan(slices)
        wanted = [list(call.values()) for call in missing if call]
    total = len(asked)
    already = total - sum(len(call) for call in wanted)
    new: dict[str, np.ndarray] = {}

    def counted(done: int, _total: int) -> None:
        if progress is not None:
            progress(min(total, already + done), total)

    def arrived(index: int, rows: np.ndarray) -> None:
        call = wanted[index]
        made = dict(zip(map(text_key, call), checked_vectors(rows, len(call), embedder_name), strict=True))
        if cached is not None:
            cached.store(made)
        new.update(made)

    if progress is not None:
        progress(already, total)
    made = embed_calls(wanted, counted if progress is not None else None, arrived) if wanted else []
    if cached is None:
        sorted_rows = np.concatenate(
            [checked_vectors(rows, len(call), embedder_name) for call, rows in zip(wanted, made, strict=True)]
        )
    else:
        found = {**known, **new}
        if len({vector.shape[0] for vector in found.values()}) > 1:
            # Rows of an older model under the same name in the cache: the cache recomputes a slice
            # holding both, so the slices go through it one after the other, as embed_corpus sends them.
            return embed_corpus(
                corpus,
                cached,
                slice_size=slice_size,
                progress=progress,
                length_sorted=length_sorted,
            )
        sorted_rows = np.stack([found[text_key(text)] for text in asked]).astype(np.float32, copy=False)
    if progress is not None:
        progress(total, total)
    if order is None:
        return sorted_rows
    rows = np.empty_like(sorted_rows)
    rows[order] = sorted_rows
    return rows


class _Remote:
    """An ``Embedder`` whose one call goes through ``embed_calls`` (the cache's inner embedder)."""

    def __init__(self, name: str, embed_calls: EmbedCalls) -> None:
        self.name = name
        self._embed_calls = embed_calls

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed_calls([list(texts)], None, None)[0]


def _embed(
    embedder: Embedder,
    texts: list[str],
    *,
    slice_size: int,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    import numpy as np

    parts = []
    if progress is not None:
        progress(0, len(texts))
    for start in range(0, len(texts), slice_size):
        expected = min(slice_size, len(texts) - start)
        part = embedder.embed(texts[start : start + slice_size])
        parts.append(checked_vectors(part, expected, embedder.name))
        if progress is not None:
            progress(start + expected, len(texts))
    return np.concatenate(parts)


def describe_embedder(embedder: Embedder) -> str:
    """The embedder's own ``description`` if it has one, else its name."""
    return str(getattr(embedder, "description", f"embedder {embedder.name}"))


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32); all-zero rows stay zero."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalised: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return normalised


def with_cache(embedder: Embedder, settings: RunSettings) -> Embedder:
    """The embedder behind the on-disk cache, unless the settings turn caching off.

    A cache that cannot be used never fails a run, but a cache folder the user named that is a file
    would silently cache nothing, so it is refused.
    """
    if not settings.use_cache:
        return embedder
    folder = settings.resolved_cache_dir
    if settings.cache_dir is not None and folder.exists() and not folder.is_dir():
        raise InputError(
            "the embedding cache folder is a file", path=folder, hint="give a folder for --cache-dir"
        )
    return CachedEmbedder(embedder, folder)


def build_dense(corpus: Corpus, options: DenseOptions, settings: RunSettings) -> DenseRetriever:
    """``dense``: the embedder given in the options, else the OpenAI-compatible one for ``embed_model``."""
    return DenseRetriever(
        corpus,
        dense_embedder(options, settings),
        progress=settings.index_progress,
        embedded=settings.corpus_embeddings,
    )


def dense_embedder(options: DenseOptions, settings: RunSettings) -> Embedder:
    """``dense``'s embedder behind the cache: the options' own, else the endpoint's ``embed_model``."""
    embedder = options.embedder if options.embedder is not None else _openai_embedder(options, settings)
    return with_cache(embedder, settings)


def _openai_embedder(options: DenseOptions, settings: RunSettings) -> Embedder:
    if not options.embed_model:
        raise InputError(
            "the dense retriever needs an embedding model",
            hint="pass --embed-model NAME (e.g. text-embedding-3-small), or use local-dense or bm25",
        )
    # Imported here so realrecall.llm (and openai) load only when a dense run is asked for.
    from realrecall.llm import LLMConfig
    from realrecall.llm.embeddings import OpenAIEmbedder

    config = (
        options.llm_config
        if options.llm_config is not None
        else LLMConfig(base_url=options.base_url, timeout=settings.request_timeout)
    )
    embedder: Embedder = OpenAIEmbedder(options.embed_model, config)
    return embedder


RETRIEVER = RetrieverSpec(
    name="dense",
    options=DenseOptions,
    build=build_dense,
    summary="exact cosine search over embeddings from an OpenAI-compatible endpoint",
    libraries=("openai",),
)

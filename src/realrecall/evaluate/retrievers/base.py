"""What a retriever is, the options that build one, and the deterministic ranking they share.

A retriever answers a batch of queries at once with ranked chunk ids (best first). ``retrieve``
drives one over a ``{query_id: text}`` mapping in batches and reports progress; the registry in
``realrecall.evaluate.retrievers.registry`` turns a name such as ``"bm25"`` into one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from realrecall.errors import InputError

__all__ = [
    "Embedder",
    "Retriever",
    "RetrieverOptions",
    "default_cache_dir",
    "retrieve",
    "top_k_indices",
]


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks chunk ids for queries.

    ``description`` is one line recorded in results.json: the method, its parameters and the versions
    of the libraries behind it, so a figure can be traced to what produced it.
    """

    name: str
    description: str

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        """Ranked chunk ids (best first, at most ``k``, no duplicates) for each query, in order."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; the same shape as ``realrecall.llm.Embedder``.

    ``name`` identifies the model (and anything else that changes the vectors): the embedding cache
    keys on it, so two embedders with the same name must give the same vectors.
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(len(texts), d)`` float32 array, one row per text, in order."""
        ...


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/realrecall/embeddings``, or ``~/.cache/realrecall/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "realrecall" / "embeddings"


@dataclass(frozen=True, kw_only=True)
class RetrieverOptions:
    """Everything a named retriever may need; each retriever reads only its own fields.

    BM25 (``bm25``): ``k1``, ``b``, ``bm25_method`` (bm25s' ``lucene``, ``robertson`` or ``atire``),
    ``stemmer`` (a Snowball language of PyStemmer, or None), ``stopwords`` (a bm25s stopword language,
    or None). The defaults (k1 0.9, b 0.4, English Snowball stemming and stopwords) are Anserini's
    BEIR settings.

    Dense (``dense``, ``local-dense``): ``embed_model`` (the OpenAI-compatible embedding model; required
    by ``dense``), ``llm_config`` (a ``realrecall.llm.LLMConfig``; by default one built from
    ``base_url``), ``embedder`` (use this embedder instead of building one: the Python API's way to
    plug in any model), ``local_model`` (a sentence-transformers model folder for ``local-dense``;
    default the bundled all-MiniLM-L6-v2), ``cache_dir`` and ``use_cache`` for the embedding cache.

    Hybrid (``hybrid``): ``dense_component`` (``local-dense``, the CLI's default too, or ``dense``),
    ``rrf_k`` and ``fusion_depth`` (how deep each component's list is before fusion).

    Custom (``module:function``): ``workers`` threads call the function concurrently;
    ``query_timeout`` is how many seconds one call may take before the query fails with an error
    naming it (default None: no limit, so a function that hangs hangs the evaluation).

    ``index_progress(done, total)``: called as a dense retriever embeds the corpus (the slow part of
    building one), so a caller can draw a bar.

    ``batch_size``: texts per forward pass of the local model (and what a caller may pass on to
    ``retrieve`` as the number of queries per ``search`` call).
    """

    k1: float = 0.9
    b: float = 0.4
    bm25_method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: str | None = "english"
    embed_model: str | None = None
    base_url: str | None = None
    llm_config: Any = None
    embedder: Embedder | None = None
    local_model: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    dense_component: str = "local-dense"
    rrf_k: int = 60
    fusion_depth: int = 100
    workers: int = 1
    batch_size: int = 64
    index_progress: Callable[[int, int], None] | None = None
    query_timeout: float | None = None

    def __post_init__(self) -> None:
        check_timeout(self.query_timeout)
        for field_name in ("rrf_k", "fusion_depth", "workers", "batch_size"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{field_name} must be a positive integer, got {value!r}")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")

    @property
    def resolved_cache_dir(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()


def retrieve(
    retriever: Retriever,
    queries: Mapping[str, str],
    k: int,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[str]]:
    """Ranked ids for every query, ``{query_id: [chunk_id, ...]}``, asked ``batch_size`` queries at a time.

    ``progress(done, total)`` is called once before the first batch and after each batch, so a caller
    can draw a bar; the library itself never prints. An empty query text is an InputError naming the
    query, raised before any retrieval starts; a custom retriever failing on a query is named by its id.
    """
    check_k(k)
    if batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
    for query_id, text in queries.items():
        if not isinstance(text, str) or not text.strip():
            raise InputError(
                f"query {query_id!r} has no text", hint="give every query its question, or drop it"
            )
    from realrecall.evaluate.retrievers.custom import RetrieverQueryError  # custom.py imports this module

    query_ids = list(queries)
    total = len(query_ids)
    ranked: dict[str, list[str]] = {}
    if progress is not None:
        progress(0, total)
    for start in range(0, total, batch_size):
        batch = query_ids[start : start + batch_size]
        try:
            results = retriever.search([queries[query_id] for query_id in batch], k)
        except RetrieverQueryError as exc:
            if not 0 <= exc.position < len(batch):
                raise
            raise exc.for_query_id(batch[exc.position]) from exc.__cause__
        if len(results) != len(batch):
            raise InputError(
                f"retriever {getattr(retriever, 'name', retriever)!r} answered {len(results)} queries "
                f"for a batch of {len(batch)}",
                hint="search() must return one ranked list per query, in order",
            )
        ranked.update(zip(batch, results, strict=True))
        if progress is not None:
            progress(len(ranked), total)
    return ranked


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")


def check_timeout(query_timeout: float | None) -> None:
    """A query timeout is None (no limit) or a positive, finite number of seconds."""
    if query_timeout is None:
        return
    if (
        isinstance(query_timeout, bool)
        or not isinstance(query_timeout, int | float)
        or not math.isfinite(query_timeout)
        or query_timeout <= 0
    ):
        raise InputError(
            f"query timeout must be a positive number of seconds, got {query_timeout!r}",
            hint="e.g. 30, or no timeout at all",
        )


def check_queries(queries: Sequence[str]) -> None:
    """Reject empty query texts; positions are 1-based, as a user counts them."""
    for position, text in enumerate(queries, start=1):
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"query {position} of the batch has no text", hint="give every query its text")


def top_k_indices(scores: np.ndarray, k: int, *, minimum: float | None = None) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first; equal scores keep corpus order (lower index first).

    ``argpartition`` keeps the cost linear in the corpus; the boundary is settled explicitly so that
    which of several equal-scored items make the cut never depends on numpy's partition order.
    With ``minimum``, only scores strictly above it count (BM25 drops chunks sharing no query term).
    """
    candidates = np.arange(scores.shape[0]) if minimum is None else np.flatnonzero(scores > minimum)
    values = scores[candidates]
    k = min(k, candidates.shape[0])
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if k < candidates.shape[0]:
        threshold = values[np.argpartition(-values, k - 1)[k - 1]]
        above = np.flatnonzero(values > threshold)
        tied = np.flatnonzero(values == threshold)[: k - above.shape[0]]
        keep = np.concatenate([above, tied])
        candidates, values = candidates[keep], values[keep]
    order = np.lexsort((candidates, -values))
    return candidates[order]


def library_version(distribution: str) -> str:
    """The installed version of a distribution, for descriptions ("unknown" if not found)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"

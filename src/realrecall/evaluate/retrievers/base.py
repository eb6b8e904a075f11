"""What a retriever is, how one is driven over queries, and the deterministic ranking they share.

A retriever answers a batch of queries at once with ranked chunk ids (best first). ``retrieve``
drives one over a ``{query_id: text}`` mapping in batches and reports progress; the registry in
``realrecall.evaluate.retrievers.registry`` turns a name such as ``"bm25"`` into one, and
``realrecall.evaluate.retrievers.options`` says how a retriever declares its options.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from realrecall.errors import InputError, RetrieverQueryError, SettingError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Embedder",
    "Retriever",
    "checked_vectors",
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
    """Turns texts into vectors: the one embedder protocol (dense and the vector stores take any).

    ``realrecall.llm.OpenAIEmbedder``, ``SentenceTransformerEmbedder`` and ``CachedEmbedder`` are
    implementations; a Python object with ``name`` and ``embed`` is one too.

    ``name`` identifies the model (and anything else that changes the vectors): the embedding cache
    keys on it, so two embedders with the same name must give the same vectors.
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(len(texts), d)`` float32 array, one row per text, in order."""
        ...


def checked_vectors(vectors: object, expected: int, embedder_name: str) -> np.ndarray:
    """An embedder's answer as float32 rows, refused (one line naming the embedder) unless it has one
    row per text: a wrong count would pair a text with another text's vector."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != expected:
        raise InputError(
            f"embedder {embedder_name!r} returned shape {array.shape} for {expected} texts",
            hint="embed(texts) must return one row per text: an array of shape (len(texts), dimensions)",
        )
    return array


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


def check_timeout(seconds: float | None, *, setting: str = "query_timeout") -> None:
    """A timeout is None (no limit) or a positive, finite number of seconds."""
    if seconds is None:
        return
    number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    if not number or not math.isfinite(seconds) or seconds <= 0:
        raise SettingError(setting, f"must be a positive number of seconds, got {seconds!r}", hint="e.g. 30")


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
    import numpy as np

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

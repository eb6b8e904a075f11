"""What the vector-store retrievers (``chroma``, ``lancedb``, ``qdrant``) share.

Each store is one module holding its options, its retriever and its corpus export; this one holds
what they do alike:

- ``require``: the store's client library, imported only when the store is used; a missing one is one
  line naming the extra to install (``pip install 'realrecall[chroma]'``).
- ``query_embedder``: how queries become vectors when the store's own embedding function is not used:
  a Python ``Embedder``, or an OpenAI-compatible endpoint's model (``realrecall.llm.OpenAIEmbedder``).
- ``StoreRetriever``: embeds each batch of queries in one call, then asks the store one query at a
  time through ``FunctionRetriever``, so ``RunSettings.workers`` threads and the per-query
  ``query_timeout`` work as they do for a custom function. It says whether the store's search is
  approximate (an HNSW or IVF index: two builds of the same vectors can rank differently) and what
  identifies the index it searches (a collection's id, a table's version), which changes when the
  store is rebuilt: both go into the retriever's fingerprint.
- ``record_id`` / ``field_value`` / ``plain_metadata``: a store record as a chunk (its id, or a
  metadata field named by ``id_field``; metadata as JSON values).
- ``answered_within``: a call to a store's server that must answer within ``RunSettings.request_timeout``
  (Chroma's HTTP client has no timeout of its own: a server that accepts and never answers would hang
  the run), and ``opening``: a client failure while a store is opened as one line naming the store.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import importlib
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from realrecall.errors import InputError, RealrecallError, ServerSilent
from realrecall.evaluate.retrievers.base import Embedder, check_k, check_queries
from realrecall.evaluate.retrievers.function import FunctionRetriever
from realrecall.evaluate.retrievers.options import RunSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "StoreRetriever",
    "answered_within",
    "chunk_record",
    "damaged",
    "field_value",
    "one_line",
    "opening",
    "plain_metadata",
    "query_embedder",
    "record_id",
    "require",
]

# One store query: (query text, its vector or None when the store embeds it, k) -> ranked chunk ids.
SearchOne = Callable[[str, "np.ndarray | None", int], list[str]]

Answer = TypeVar("Answer")


def answered_within(seconds: float, server: str, call: Callable[[], Answer]) -> Answer:
    """``call()``, or a ServerSilent naming ``server`` once it has not returned within ``seconds``
    (the ``request_timeout`` of the run or the export).

    The call runs in a daemon thread, left behind if it never returns (a socket read with no timeout
    cannot be interrupted), which does not keep the process alive. Its exception, if any, is raised here.
    """
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["answer"] = call()
        except BaseException as exc:  # handed over to the caller's thread below
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=run, name=f"realrecall request to {server}", daemon=True).start()
    if not finished.wait(seconds):
        # The advice names request_timeout; each front end names it its own way (ServerSilent.labelled).
        raise ServerSilent(server, seconds)
    if "error" in outcome:
        raise outcome["error"]
    answer: Answer = outcome["answer"]
    return answer


def require(module: str, *, extra: str, store: str) -> ModuleType:
    """Import a store's client library, or say in one line which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f"the {store} store needs the {module} package, which is not installed ({exc})",
            hint=f"pip install 'realrecall[{extra}]'",
        ) from exc


def query_embedder(
    *,
    embedder: Embedder | None,
    embed_model: str | None,
    base_url: str | None,
    llm_config: Any,
    settings: RunSettings,
) -> Embedder | None:
    """The query embedder: the Python one, else the endpoint's ``embed_model``, else None (the store's).

    Query vectors go through the embedding cache like the dense retriever's, so a repeated run asks
    the endpoint nothing new.
    """
    from realrecall.evaluate.retrievers.dense import with_cache

    if embedder is not None:
        return with_cache(embedder, settings)
    if not embed_model:
        return None
    # Imported here so realrecall.llm (and openai) load only when an endpoint embeds the queries.
    from realrecall.llm import LLMConfig
    from realrecall.llm.embeddings import OpenAIEmbedder

    timeout = settings.request_timeout
    config = llm_config if llm_config is not None else LLMConfig(base_url=base_url, timeout=timeout)
    endpoint: Embedder = OpenAIEmbedder(embed_model, config)
    return with_cache(endpoint, settings)


class StoreRetriever:
    """A ``Retriever`` over a store's one-query search (see the module docstring).

    ``concurrent``: whether the client may be called from several threads at once; when it may not
    (Qdrant's local mode), queries run one at a time whatever ``settings.workers`` says.
    ``fix_hint``: what to check when a query fails (the store's address, say).
    ``approximate``: why the search is approximate (``"Chroma's HNSW index (ef_search=100)"``), or
    None when it compares the query with every vector. ``index``: what identifies the index searched
    and changes when the store is rebuilt (JSON values), empty when the store exposes nothing.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        search_one: SearchOne,
        embedder: Embedder | None,
        settings: RunSettings,
        concurrent: bool = True,
        fix_hint: str,
        approximate: str | None = None,
        index: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.approximate = approximate
        self.index: dict[str, Any] = dict(index or {})
        self._search_one = search_one
        self._embedder = embedder
        self._workers = settings.workers if concurrent else 1
        self._timeout = settings.query_timeout
        self._fix_hint = fix_hint

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        vectors = self._embed(queries)

        def one(query: str, n: int) -> list[str]:
            return self._search_one(query, None if vectors is None else vectors[query], n)

        runner = FunctionRetriever(
            one,
            name=self.name,
            workers=self._workers,
            query_timeout=self._timeout,
            kind="retriever",
            fix_hint=self._fix_hint,
        )
        return runner.search(queries, k)

    def _embed(self, queries: Sequence[str]) -> dict[str, np.ndarray] | None:
        """The batch's query vectors by text (one embedder call for the batch), or None."""
        import numpy as np

        if self._embedder is None:
            return None
        texts = list(dict.fromkeys(queries))
        matrix = np.asarray(self._embedder.embed(texts), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise InputError(
                f"embedder {self._embedder.name!r} returned shape {matrix.shape} for {len(texts)} queries",
                hint="an embedder returns one row per text",
            )
        return {text: matrix[row] for row, text in enumerate(texts)}


def damaged(store: str, exc: BaseException, *, path: str | Path | None) -> InputError:
    """The one line for a store whose files cannot be read: the folder, what the library said, the fix."""
    return InputError(
        f"cannot read {store} ({one_line(exc)})",
        path=path,
        hint="its files look damaged, or were written by another version of its library: restore the "
        "folder from a backup, or rebuild the store",
    )


@contextlib.contextmanager
def opening(store: str, *, path: str | Path | None) -> Iterator[None]:
    """Open a local store: a client failure is ``damaged``'s one line, and the library's warnings about
    it (qdrant's carry a machine path) are not printed around that line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        except RealrecallError:
            raise
        except Exception as exc:
            raise damaged(store, exc, path=path) from exc


def one_line(exc: BaseException) -> str:
    """``NotFoundError: Collection [x] does not exist``: a client's exception on one readable line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def field_value(record: Mapping[str, Any] | None, field: str) -> Any:
    """``record[field]``, where ``a.b`` reaches into nested mappings; None when absent."""
    value: Any = record
    for part in field.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def record_id(
    store_id: object, metadata: Mapping[str, Any] | None, id_field: str | None, *, where: str
) -> str:
    """A record's chunk id: the store's own id, or the metadata field ``id_field``.

    ``where`` names the collection, so a record without the field is one line the user can act on.
    """
    value = store_id if id_field is None else field_value(metadata, id_field)
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if id_field is None:
        raise InputError(f"{where}: a record's id {store_id!r} is not a non-empty string or an integer")
    raise InputError(
        f"{where}: record {store_id!r} has no usable {id_field!r} field (got {value!r})",
        hint=f"give every record a {id_field!r} field, or leave id_field out to use the store's ids",
    )


def plain_metadata(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """Metadata as JSON values: numpy numbers as numbers, dates as ISO text, bytes as base64."""
    return {str(key): _plain(value) for key, value in (values or {}).items()}


def _plain(value: Any) -> Any:
    import numpy as np

    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return plain_metadata(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return str(value)


def chunk_record(
    chunk_id: str, text: object, *, title: object = None, metadata: Mapping[str, Any] | None, where: str
) -> dict[str, Any]:
    """A line of the exported corpus as ``load_corpus`` reads it: ``{"id", "text", "title"?, "metadata"}``."""
    if not isinstance(text, str):
        raise InputError(
            f"{where}: record {chunk_id!r} has no text (got {type(text).__name__})",
            hint="export a collection that stores its chunks' texts, or name the field that holds them",
        )
    record: dict[str, Any] = {"id": chunk_id, "text": text}
    if title is not None:
        record["title"] = title if isinstance(title, str) else str(title)
    record["metadata"] = plain_metadata(metadata)
    return record

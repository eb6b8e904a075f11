"""``qdrant``: a Qdrant collection on a server (``url``) or in qdrant-client's local mode (``path``).

A Qdrant collection stores vectors, not the function that made them, so queries are embedded by an
OpenAI-compatible endpoint (``embed_model``) or, in Python, by any ``Embedder``. Hits are the point
ids, or the payload field ``id_field`` (``a.b`` reaches into a nested payload, e.g. LangChain's
``metadata.chunk_id``); the export reads ``text_field`` from the payload as the text (LangChain
stores it as ``page_content``) and keeps the rest of the payload as metadata.

The client comes from the ``qdrant-client`` package (extra ``qdrant``), imported only when used.
A server's API key is read from the environment variable named by ``api_key_env``, never from an
option, so it stays out of command lines and results files. Local mode is one process's folder and
not made for threads: its queries run one at a time.
"""

from __future__ import annotations

import functools
import json
import math
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Embedder
from realrecall.evaluate.retrievers.dense import describe_embedder
from realrecall.evaluate.retrievers.options import REQUEST_TIMEOUT, RetrieverSpec, RunSettings, StoreExport
from realrecall.evaluate.retrievers.private_copy import private_copy, releaser, remove_when_unused
from realrecall.evaluate.retrievers.store_common import (
    StoreRetriever,
    answered_within,
    chunk_record,
    damaged,
    field_value,
    one_line,
    opening,
    query_embedder,
    record_id,
    require,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RETRIEVER", "QdrantOptions", "build_qdrant", "export_chunks"]


@dataclass(frozen=True, kw_only=True)
class QdrantOptions:
    """Where the collection is (``url``, or ``path``) and how its points map to chunks."""

    collection: Annotated[str, "the collection's name"]
    url: Annotated[str | None, "a Qdrant server, e.g. http://localhost:6333 (or give path)"] = None
    path: Annotated[Path | None, "a qdrant-client local-mode folder, instead of a server"] = None
    api_key_env: Annotated[str, "environment variable holding the server's API key, if set"] = (
        "QDRANT_API_KEY"
    )
    id_field: Annotated[str | None, "payload field holding the chunk id (default: the point ids)"] = None
    text_field: Annotated[str, "payload field holding the chunk text (export)"] = "text"
    title_field: Annotated[str | None, "payload field exported as the chunk's title"] = None
    vector_name: Annotated[str | None, "the named vector to search (default: the unnamed one)"] = None
    exact: Annotated[bool, "a server compares each query with every point, not its HNSW index (slower)"] = (
        False
    )
    embed_model: Annotated[
        str | None, "embed queries with this endpoint model (required unless embedder)"
    ] = None
    base_url: Annotated[str | None, "the OpenAI-compatible endpoint (default OPENAI_BASE_URL)"] = None
    llm_config: Annotated[Any, "a realrecall.llm.LLMConfig, instead of base_url"] = None
    embedder: Annotated[Embedder | None, "any Embedder for the queries, instead of embed_model"] = None


def build_qdrant(corpus: Corpus, options: QdrantOptions, settings: RunSettings) -> StoreRetriever:
    """``qdrant``: open the collection and the query embedder before any query runs."""
    ask = _asker(options, settings.request_timeout)
    client = _open_client(options, ask, settings.request_timeout)
    where = _where(options)
    embedder = query_embedder(
        embedder=options.embedder,
        embed_model=options.embed_model,
        base_url=options.base_url,
        llm_config=options.llm_config,
        settings=settings,
    )
    if embedder is None:
        raise InputError(
            "the qdrant retriever needs an embedding model for the queries (a Qdrant collection keeps no "
            "embedding function)",
            hint="give embed_model=MODEL (--embed-model), the model the collection's vectors came from",
        )
    id_field = options.id_field
    with_payload: bool | list[str] = [id_field] if id_field else False
    from qdrant_client import models

    search_params = models.SearchParams(exact=True) if options.exact else None

    def search_one(query: str, vector: np.ndarray | None, k: int) -> list[str]:
        if vector is None:  # cannot happen: an embedder is required above, so every query has a vector
            raise RuntimeError("qdrant search without a query vector")
        points = ask(
            lambda: client.query_points(
                options.collection,
                query=vector.tolist(),
                using=options.vector_name,
                limit=k,
                with_payload=with_payload,
                search_params=search_params,
            )
        ).points
        return [record_id(point.id, point.payload, id_field, where=where) for point in points]

    count = ask(lambda: client.count(options.collection, exact=True)).count
    return StoreRetriever(
        name="qdrant",
        description=(
            f"qdrant: {where} ({count} points), queries embedded by {describe_embedder(embedder)}, "
            f"ids from {id_field or 'the point ids'}"
        ),
        search_one=search_one,
        embedder=embedder,
        settings=settings,
        concurrent=options.path is None,
        fix_hint=f"check that {where} is reachable (run with --debug for the traceback)",
        # Local mode scores every point (numpy); a server walks its HNSW index unless asked for exact.
        approximate=None
        if options.path is not None or options.exact
        else "the Qdrant server's HNSW index (exact=true searches every point)",
    )


def export_chunks(
    options: QdrantOptions, *, page_size: int = 500, request_timeout: float = REQUEST_TIMEOUT
) -> StoreExport:
    """Every point of the collection as a corpus chunk, scrolled ``page_size`` points at a time."""
    ask = _asker(options, request_timeout)
    client = _open_client(options, ask, request_timeout)
    where = _where(options)
    total = ask(lambda: client.count(options.collection, exact=True)).count

    def records() -> Iterator[dict[str, Any]]:
        offset: Any = None
        try:
            while True:
                points, offset = ask(
                    functools.partial(
                        client.scroll,
                        options.collection,
                        limit=page_size,
                        offset=offset,
                        with_payload=True,
                        with_vectors=False,
                    )
                )
                for point in points:
                    payload = dict(point.payload or {})
                    text = field_value(payload, options.text_field)
                    title = field_value(payload, options.title_field) if options.title_field else None
                    metadata = {key: value for key, value in payload.items() if key != options.text_field}
                    yield chunk_record(
                        record_id(point.id, payload, options.id_field, where=where),
                        text,
                        title=title,
                        metadata=metadata,
                        where=where,
                    )
                if offset is None:
                    return
        finally:
            ask(client.close)

    return StoreExport(total=total, records=records())


def _where(options: QdrantOptions) -> str:
    return f"Qdrant collection {options.collection!r} at {options.url or options.path}"


def _server(options: QdrantOptions) -> str:
    return f"the Qdrant server at {options.url}"


def _asker(options: QdrantOptions, timeout: float) -> Callable[[Callable[[], Any]], Any]:
    """How each call to the store is made: a server's answer within ``timeout`` seconds, a local
    folder's directly (local mode is not made for other threads), its warnings kept quiet."""
    if options.url is None:

        def local(call: Callable[[], Any]) -> Any:
            with warnings.catch_warnings():  # "local mode is not recommended for ...": not for users here
                warnings.simplefilter("ignore")
                return call()

        return local
    return lambda call: answered_within(timeout, _server(options), call)


def _open_client(options: QdrantOptions, ask: Callable[[Callable[[], Any]], Any], timeout: float) -> Any:
    require("qdrant_client", extra="qdrant", store="qdrant")
    from qdrant_client import QdrantClient

    if (options.url is None) == (options.path is None):
        raise InputError(
            "the qdrant store needs either url (a Qdrant server) or path (a local-mode folder), not "
            + ("both" if options.url else "neither"),
            hint="e.g. --retriever-option url=http://localhost:6333 or --retriever-option path=qdrant_db",
        )
    if options.path is not None:
        if not options.path.is_dir():
            # Local mode would make an empty store there: a mistyped folder must not.
            raise InputError(
                "no Qdrant folder here", path=options.path, hint="give the folder the local store lives in"
            )
        if not (options.path / "meta.json").is_file():
            # Local mode would write its meta.json (and a lock) into any folder: only into a store's.
            raise InputError(
                "no Qdrant local store here (no meta.json)",
                path=options.path,
                hint="give the folder the local store lives in",
            )
        _check_local_collections(options.path)
        # Local mode locks the folder through its .lock file, and makes one where there is none: such
        # a folder is read from a private copy, so that reading it adds no file to it.
        copy = (
            None
            if (options.path / ".lock").is_file()
            else private_copy(options.path, store="the Qdrant folder")
        )
        release = None if copy is None else releaser(copy)
        try:
            with opening("the Qdrant folder", path=options.path):
                client = QdrantClient(path=str(copy or options.path))
        except InputError as exc:
            if release is not None:
                release()
            if isinstance(exc.__cause__, RuntimeError) and "already accessed" in str(exc.__cause__):
                raise InputError(  # the folder is locked by another client: nothing is damaged
                    f"cannot open the Qdrant folder ({one_line(exc.__cause__)})", path=options.path
                ) from exc.__cause__
            raise
        if release is not None:
            remove_when_unused(client, release)
    else:
        # Its own timeout a little longer than ours: a request left behind by ``ask`` ends too. No
        # version check: it would ask the server from a thread of its own and warn when it cannot.
        client = QdrantClient(
            url=options.url,
            api_key=os.environ.get(options.api_key_env) or None,
            timeout=math.ceil(timeout) + 1,
            check_compatibility=False,
        )
    try:
        exists = ask(lambda: client.collection_exists(options.collection))
    except InputError:
        raise
    except Exception as exc:  # an unreachable server: connection errors of httpx or grpc
        if options.path is not None:
            raise damaged("the Qdrant folder", exc, path=options.path) from exc
        raise InputError(
            f"cannot reach {_server(options)} ({one_line(exc)})", hint="start it or check the url"
        ) from exc
    if not exists:
        names = sorted(item.name for item in ask(client.get_collections).collections)
        raise InputError(
            f"{_where(options)}: no such collection",
            hint=f"collections there: {', '.join(names)}" if names else "the store holds no collection",
        )
    return client


def _check_local_collections(folder: Path) -> None:
    """Refuse a local-mode folder whose meta.json lists a collection without its storage: local mode
    would make an empty one in its place (writing into the folder) and search it, so every query of a
    damaged store would find nothing and score 0, without a word."""
    try:
        listed = json.loads((folder / "meta.json").read_text(encoding="utf-8"))["collections"]
        names = [str(name) for name in listed]
    except Exception:  # unreadable or malformed: opening the client says so, as a damaged folder
        return
    for name in names:
        storage = folder / "collection" / name
        # storage.sqlite, or a legacy storage.dbm* that the client names itself when it refuses it
        if not (storage.is_dir() and any(storage.glob("storage.*"))):
            raise damaged(
                "the Qdrant folder",
                FileNotFoundError(
                    f"meta.json lists collection {name!r}, but collection/{name} holds no storage"
                ),
                path=folder,
            )


RETRIEVER = RetrieverSpec(
    name="qdrant",
    options=QdrantOptions,
    build=build_qdrant,
    summary="a Qdrant collection (server or local mode), queried by an endpoint's embeddings",
    libraries=("qdrant-client",),
    export=export_chunks,
    extra="qdrant",
)

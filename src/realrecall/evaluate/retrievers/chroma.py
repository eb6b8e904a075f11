"""``chroma``: a Chroma collection, on a server (``chroma run``) or in a local persistent folder.

Queries are embedded by the collection's own embedding function (the one it was created with, which
must be known to this process: Chroma's built-in ones, or one registered with Chroma's
``register_embedding_function``), or, with ``embed_model``, by an OpenAI-compatible endpoint (in
Python, any ``Embedder``). Hits are the store's ids, or the metadata field ``id_field``.

The client comes from the ``chromadb`` package (extra ``chroma``), imported only when this retriever
or ``realrecall corpus export --from chroma`` is used. Chroma's anonymous telemetry is turned off for
the clients realrecall opens.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
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

__all__ = ["RETRIEVER", "ChromaOptions", "build_chroma", "collection_index", "export_chunks"]


@dataclass(frozen=True, kw_only=True)
class ChromaOptions:
    """Where the collection is (``host``/``port``, or ``path``) and how its records map to chunks."""

    collection: Annotated[str, "the collection's name"]
    host: Annotated[str | None, "a Chroma server's host, e.g. 127.0.0.1 (or give path)"] = None
    port: Annotated[int, "the Chroma server's port"] = 8000
    ssl: Annotated[bool, "talk to the server over HTTPS"] = False
    path: Annotated[Path | None, "a local persistent Chroma folder, instead of a server"] = None
    id_field: Annotated[str | None, "metadata field holding the chunk id (default: the store's ids)"] = None
    title_field: Annotated[str | None, "metadata field exported as the chunk's title"] = None
    embed_model: Annotated[
        str | None, "embed queries with this endpoint model (default: the collection's own function)"
    ] = None
    base_url: Annotated[str | None, "the OpenAI-compatible endpoint (default OPENAI_BASE_URL)"] = None
    llm_config: Annotated[Any, "a realrecall.llm.LLMConfig, instead of base_url"] = None
    embedder: Annotated[Embedder | None, "any Embedder for the queries, instead of embed_model"] = None


def build_chroma(corpus: Corpus, options: ChromaOptions, settings: RunSettings) -> StoreRetriever:
    """``chroma``: open the collection and check how its queries will be embedded before any query runs."""
    ask = _asker(options, settings.request_timeout)
    collection = _open_collection(options, ask)
    where = _where(options)
    embedder = query_embedder(
        embedder=options.embedder,
        embed_model=options.embed_model,
        base_url=options.base_url,
        llm_config=options.llm_config,
        settings=settings,
    )
    if embedder is None:
        own = _own_function_name(collection, where)
        how = f"the collection's embedding function {own!r}"
    else:
        how = describe_embedder(embedder)
    id_field = options.id_field
    include = ["metadatas"] if id_field else []

    def search_one(query: str, vector: np.ndarray | None, k: int) -> list[str]:
        if vector is None:
            result = ask(lambda: collection.query(query_texts=[query], n_results=k, include=include))
        else:
            result = ask(lambda: collection.query(query_embeddings=[vector], n_results=k, include=include))
        ids = result["ids"][0]
        metadatas = result["metadatas"][0] if id_field else [None] * len(ids)
        return [record_id(i, m, id_field, where=where) for i, m in zip(ids, metadatas, strict=True)]

    approximate, index = collection_index(collection)
    return StoreRetriever(
        name="chroma",
        description=(
            f"chroma: {where} ({ask(collection.count)} records), queries embedded by {how}, "
            f"ids from {id_field or 'the store'}"
        ),
        search_one=search_one,
        embedder=embedder,
        settings=settings,
        fix_hint=f"check that {where} is reachable (run with --debug for the traceback)",
        approximate=approximate,
        index=index,
    )


def export_chunks(
    options: ChromaOptions, *, page_size: int = 500, request_timeout: float = REQUEST_TIMEOUT
) -> StoreExport:
    """Every record of the collection as a corpus chunk, read ``page_size`` records at a time."""
    ask = _asker(options, request_timeout)
    collection = _open_collection(options, ask)
    where = _where(options)

    def records() -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            page = ask(
                functools.partial(
                    collection.get, limit=page_size, offset=offset, include=["documents", "metadatas"]
                )
            )
            ids = page["ids"]
            if not ids:
                return
            documents = page["documents"] or [None] * len(ids)
            metadatas = page["metadatas"] or [None] * len(ids)
            for store_id, document, metadata in zip(ids, documents, metadatas, strict=True):
                title = field_value(metadata, options.title_field) if options.title_field else None
                yield chunk_record(
                    record_id(store_id, metadata, options.id_field, where=where),
                    document,
                    title=title,
                    metadata=metadata,
                    where=where,
                )
            offset += len(ids)

    return StoreExport(total=ask(collection.count), records=records())


def _where(options: ChromaOptions) -> str:
    place = f"{options.host}:{options.port}" if options.host else str(options.path)
    return f"Chroma collection {options.collection!r} at {place}"


def _server(options: ChromaOptions) -> str:
    return f"the Chroma server at {options.host}:{options.port}"


def _asker(options: ChromaOptions, timeout: float) -> Callable[[Callable[[], Any]], Any]:
    """How each call to the store is made: a server's answer within ``timeout`` seconds (Chroma's HTTP
    client waits forever by itself), a local folder's directly, a failure of its database there as
    ``damaged``'s one line."""
    if options.host is not None:
        return lambda call: answered_within(timeout, _server(options), call)

    def local(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            # The folder opens from its collections table alone; a damaged page or a missing table
            # elsewhere in chroma.sqlite3 fails the first count, query or page with Chroma's
            # InternalError ("error returned from database"), where a bad request is another error.
            if type(exc).__name__ == "InternalError" and type(exc).__module__.startswith("chromadb"):
                raise damaged("the Chroma store", exc, path=options.path) from exc
            raise

    return local


def _open_collection(options: ChromaOptions, ask: Callable[[Callable[[], Any]], Any]) -> Any:
    chromadb = require("chromadb", extra="chroma", store="chroma")
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if (options.host is None) == (options.path is None):
        raise InputError(
            "the chroma store needs either host (a Chroma server) or path (a local folder), not "
            + ("both" if options.host else "neither"),
            hint="e.g. --retriever-option host=127.0.0.1 or --retriever-option path=chroma_db",
        )
    if options.path is not None:
        if not options.path.is_dir():
            # PersistentClient would create an empty database there: a mistyped path must not.
            raise InputError(
                "no Chroma folder here", path=options.path, hint="give the folder the store lives in"
            )
        _check_chroma_folder(options.path)
        # Chroma writes into the folder it opens, even to read: it opens a private copy instead.
        copy = private_copy(options.path, store="the Chroma folder")
        try:
            with opening("the Chroma store", path=options.path):
                client = chromadb.PersistentClient(path=str(copy), settings=settings)
        except BaseException:
            releaser(copy)()
            raise
        release = releaser(copy, getattr(client, "close", None))
        try:
            collection = _get_collection(client, options, ask)
        except BaseException:
            release()
            raise
        remove_when_unused(collection, release)
        return collection

    def connect() -> Any:
        try:
            return chromadb.HttpClient(
                host=options.host, port=options.port, ssl=options.ssl, settings=settings
            )
        except Exception as exc:  # an unreachable server: ValueError or httpx errors
            raise InputError(
                f"cannot reach a Chroma server at {options.host}:{options.port} ({one_line(exc)})",
                hint="start it (chroma run --path FOLDER) or check host and port",
            ) from exc

    return _get_collection(ask(connect), options, ask)


def _get_collection(client: Any, options: ChromaOptions, ask: Callable[[Callable[[], Any]], Any]) -> Any:
    try:
        return ask(lambda: client.get_collection(options.collection))
    except InputError:
        raise
    except Exception as exc:
        try:
            names = sorted(str(getattr(item, "name", item)) for item in ask(client.list_collections))
        except InputError:
            raise
        except Exception:
            names = []
        if options.path is not None and options.collection in names:  # listed, yet unreadable: damaged
            raise damaged(f"Chroma collection {options.collection!r}", exc, path=options.path) from exc
        raise InputError(
            f"{_where(options)}: no such collection ({one_line(exc)})",
            hint=f"collections there: {', '.join(names)}" if names else "the store holds no collection",
        ) from exc


def collection_index(collection: Any) -> tuple[str, dict[str, Any]]:
    """How Chroma searches the collection, and what identifies its index.

    Chroma has no exact search: a query walks an HNSW graph (SPANN on a distributed Chroma), so two
    builds of the same vectors can rank differently. A collection made again gets a new id.
    """
    try:
        configuration = collection.configuration_json
    except Exception:  # an older client without it: the index is still approximate
        configuration = None
    configuration = configuration if isinstance(configuration, dict) else {}
    hnsw = configuration.get("hnsw")
    if isinstance(hnsw, dict):
        parameters = ", ".join(f"{key}={hnsw[key]}" for key in ("ef_search", "max_neighbors") if key in hnsw)
        how = f"Chroma's HNSW index ({parameters})" if parameters else "Chroma's HNSW index"
    elif configuration.get("spann"):
        how = "Chroma's SPANN index"
    else:
        how = "Chroma's vector index"
    identity = getattr(collection, "id", None)
    return how, {} if identity is None else {"collection_id": str(identity)}


def _check_chroma_folder(folder: Path) -> None:
    """Refuse a folder that holds no Chroma database, before Chroma opens it: PersistentClient makes a
    database in any folder and migrates any SQLite file named chroma.sqlite3 into one (read only here)."""
    database = folder / "chroma.sqlite3"
    if not database.is_file():
        raise InputError(
            "no Chroma database here (no chroma.sqlite3)",
            path=folder,
            hint="give the folder the store lives in",
        )
    try:
        with contextlib.closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise damaged("the Chroma store", exc, path=folder) from exc
    if "collections" not in tables:
        raise damaged("the Chroma store", ValueError("chroma.sqlite3 holds no Chroma tables"), path=folder)


def _own_function_name(collection: Any, where: str) -> str:
    """The collection's embedding function by name; one line when it has none this process can build."""
    try:
        configuration = collection.configuration
    except ValueError as exc:  # the function it was made with is not registered here
        raise InputError(
            f"{where}: its embedding function cannot be used here ({one_line(exc)})",
            hint="embed queries with embed_model=MODEL (the model its vectors came from), "
            "or register the function in Python",
        ) from exc
    function = configuration.get("embedding_function") if isinstance(configuration, dict) else None
    if function is None:
        raise InputError(
            f"{where} has no embedding function of its own",
            hint="embed queries with embed_model=MODEL, the model its vectors came from",
        )
    name = getattr(function, "name", None)
    return str(name() if callable(name) else type(function).__name__)


RETRIEVER = RetrieverSpec(
    name="chroma",
    options=ChromaOptions,
    build=build_chroma,
    summary="a Chroma collection (server or local folder), queried by its own or an endpoint's embeddings",
    libraries=("chromadb",),
    export=export_chunks,
    extra="chroma",
)

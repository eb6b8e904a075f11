"""``lancedb``: a LanceDB table, embedded (a local folder) or at any URI ``lancedb.connect`` opens.

Queries are embedded by the table's own embedding function (one recorded in its schema by LanceDB's
embedding registry, which this process must know), or, with ``embed_model``, by an OpenAI-compatible
endpoint (in Python, any ``Embedder``). Hits are the ``id_field`` column (``id`` by default); the
export reads ``text_field`` as the text and every other non-vector column as metadata.

The client comes from the ``lancedb`` package (extra ``lancedb``), imported only when used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import Embedder
from realrecall.evaluate.retrievers.dense import describe_embedder
from realrecall.evaluate.retrievers.options import REQUEST_TIMEOUT, RetrieverSpec, RunSettings, StoreExport
from realrecall.evaluate.retrievers.store_common import (
    StoreRetriever,
    answered_within,
    chunk_record,
    damaged,
    one_line,
    query_embedder,
    record_id,
    require,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RETRIEVER", "LanceDBOptions", "build_lancedb", "export_chunks", "table_index"]

_DISTANCES = ("l2", "cosine", "dot")


@dataclass(frozen=True, kw_only=True)
class LanceDBOptions:
    """Where the table is and which columns hold the chunk's id, text and vector."""

    uri: Annotated[str, "the database: a local folder, or a URI lancedb.connect takes"]
    table: Annotated[str, "the table's name"]
    id_field: Annotated[str, "column holding the chunk id"] = "id"
    text_field: Annotated[str, "column holding the chunk text (export)"] = "text"
    title_field: Annotated[str | None, "column exported as the chunk's title"] = None
    vector_column: Annotated[str | None, "the vector column to search (default: LanceDB's choice)"] = None
    distance: Annotated[str | None, "l2, cosine or dot (default: the table's index, else l2)"] = None
    exact: Annotated[bool, "compare each query with every row, bypassing a vector index (slower)"] = False
    embed_model: Annotated[
        str | None, "embed queries with this endpoint model (default: the table's own function)"
    ] = None
    base_url: Annotated[str | None, "the OpenAI-compatible endpoint (default OPENAI_BASE_URL)"] = None
    llm_config: Annotated[Any, "a realrecall.llm.LLMConfig, instead of base_url"] = None
    embedder: Annotated[Embedder | None, "any Embedder for the queries, instead of embed_model"] = None


def build_lancedb(corpus: Corpus, options: LanceDBOptions, settings: RunSettings) -> StoreRetriever:
    """``lancedb``: open the table and check its columns and how queries are embedded, before any query."""
    ask = _asker(options, settings.request_timeout)
    table = _open_table(options, ask)
    where = _where(options)
    columns = set(table.schema.names)
    if options.id_field not in columns:
        raise InputError(
            f"{where} has no column {options.id_field!r} (its columns: {', '.join(table.schema.names)})",
            hint="name the column holding chunk ids with id_field=COLUMN",
        )
    if options.vector_column is not None and options.vector_column not in columns:
        # Checked here, not by the first query: a typo would otherwise end the run on query one.
        vectors = [item.name for item in table.schema if _is_vector(item.type)]
        raise InputError(
            f"{where} has no column {options.vector_column!r} (its vector columns: {', '.join(vectors)})",
            hint="name the column with vector_column=COLUMN, or leave it out for LanceDB's choice",
        )
    if options.distance is not None and options.distance not in _DISTANCES:
        raise InputError(
            f"retriever lancedb option distance must be one of {', '.join(_DISTANCES)}, "
            f"got {options.distance!r}"
        )
    embedder = query_embedder(
        embedder=options.embedder,
        embed_model=options.embed_model,
        base_url=options.base_url,
        llm_config=options.llm_config,
        settings=settings,
    )
    if embedder is None:
        functions = table.embedding_functions
        if not functions:
            raise InputError(
                f"{where} has no embedding function of its own",
                hint="embed queries with embed_model=MODEL, the model its vectors came from",
            )
        how = "the table's embedding function " + ", ".join(
            repr(type(config.function).__name__) for config in functions.values()
        )
    else:
        how = describe_embedder(embedder)
    id_field = options.id_field

    def search_one(query: str, vector: np.ndarray | None, k: int) -> list[str]:
        request = table.search(
            query if vector is None else vector, vector_column_name=options.vector_column, query_type="vector"
        )
        if options.distance is not None:
            request = request.distance_type(options.distance)
        if options.exact:
            request = request.bypass_vector_index()
        rows = ask(request.select([id_field, "_distance"]).limit(k).to_list)
        return [record_id(row.get(id_field), None, None, where=where) for row in rows]

    approximate, index = _search_index(table, options, ask)
    return StoreRetriever(
        name="lancedb",
        description=(
            f"lancedb: {where} ({ask(table.count_rows)} rows), queries embedded by {how}, "
            f"ids from {id_field!r}"
        ),
        search_one=search_one,
        embedder=embedder,
        settings=settings,
        fix_hint=f"check {where} (run with --debug for the traceback)",
        approximate=approximate,
        index=index,
    )


def _search_index(
    table: Any, options: LanceDBOptions, ask: Callable[[Callable[[], Any]], Any]
) -> tuple[str | None, dict[str, Any]]:
    approximate, index = table_index(table, vector_column=options.vector_column, exact=options.exact, ask=ask)
    return (None if approximate is None else f"{approximate} (exact=true searches every row)"), index


def table_index(
    table: Any,
    *,
    vector_column: str | None = None,
    exact: bool = False,
    ask: Callable[[Callable[[], Any]], Any] = lambda call: call(),
) -> tuple[str | None, dict[str, Any]]:
    """Whether a search of the table is approximate, and what identifies the table's state.

    Without a vector index LanceDB compares the query with every row (exact); with one (IVF_PQ,
    IVF_HNSW_SQ...) it searches the partitions the index probes, unless ``exact`` bypasses it. The
    table's version grows with every write (rows, an index), and a table made again starts anew at a
    new time: the version and when it was written identify what the ranking came from. Without a
    ``vector_column``, an index on any vector column counts.
    """
    vectors = {item.name for item in table.schema if _is_vector(item.type)}
    searched = {vector_column} if vector_column else vectors
    indices = [
        item for item in ask(table.list_indices) if set(getattr(item, "columns", ())) & searched & vectors
    ]
    approximate = None
    if indices and not exact:
        kinds = ", ".join(sorted({str(getattr(item, "index_type", "vector")) for item in indices}))
        approximate = f"LanceDB's {kinds} index"
    version = ask(lambda: table.version)
    index: dict[str, Any] = {"table_version": version}
    try:
        written = [entry for entry in ask(table.list_versions) if _field(entry, "version") == version]
    except InputError:
        raise
    except Exception:  # a database that keeps no version list: the version alone
        written = []
    if written and (stamp := _field(written[0], "timestamp")) is not None:
        index["version_written"] = stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp)
    return approximate, index


def _field(entry: Any, name: str) -> Any:
    return entry.get(name) if isinstance(entry, dict) else getattr(entry, name, None)


def export_chunks(
    options: LanceDBOptions, *, page_size: int = 500, request_timeout: float = REQUEST_TIMEOUT
) -> StoreExport:
    """Every row of the table as a corpus chunk, read ``page_size`` rows at a time."""
    ask = _asker(options, request_timeout)
    table = _open_table(options, ask)
    where = _where(options)
    schema = table.schema
    for needed in (options.id_field, options.text_field):
        if needed not in schema.names:
            raise InputError(
                f"{where} has no column {needed!r} (its columns: {', '.join(schema.names)})",
                hint="name the columns with id_field=COLUMN and text_field=COLUMN",
            )
    # Vector columns are the store's business, not the corpus's: everything else is metadata.
    kept = [item.name for item in schema if not _is_vector(item.type)]

    def records() -> Iterator[dict[str, Any]]:
        batches = iter(ask(lambda: table.search().select(kept).limit(None).to_batches(page_size)))
        while (batch := ask(lambda: next(batches, None))) is not None:
            for row in batch.to_pylist():
                metadata = {
                    key: value
                    for key, value in row.items()
                    if key not in (options.id_field, options.text_field)
                }
                yield chunk_record(
                    record_id(row[options.id_field], None, None, where=where),
                    row[options.text_field],
                    title=row.get(options.title_field) if options.title_field else None,
                    metadata=metadata,
                    where=where,
                )

    return StoreExport(total=ask(table.count_rows), records=records())


def _is_vector(kind: Any) -> bool:
    # LanceDB keeps vectors in fixed-size list columns (pyarrow's type name, to leave pyarrow unimported).
    return str(kind).startswith("fixed_size_list")


def _where(options: LanceDBOptions) -> str:
    return f"LanceDB table {options.table!r} at {options.uri}"


def _asker(options: LanceDBOptions, timeout: float) -> Callable[[Callable[[], Any]], Any]:
    """How each call to the database is made: a remote one's answer within ``timeout`` seconds, a
    local folder's directly, a data file it cannot read there as ``damaged``'s one line."""
    if "://" in options.uri:
        return lambda call: answered_within(timeout, f"LanceDB at {options.uri}", call)

    def local(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            if _unreadable_files(exc):
                # Lance ends its messages with the Rust source line that raised: not for users.
                said = RuntimeError(re.sub(r",\s*\S+\.rs:\d+:\d+\s*$", "", str(exc)))
                raise damaged(f"LanceDB table {options.table!r}", said, path=options.uri) from exc
            raise

    return local


def _unreadable_files(exc: Exception) -> bool:
    """Whether LanceDB failed on the table's files rather than on the request: its data files are read
    only when rows are, so a damaged or missing one surfaces at the first query or page (an IO error
    of Lance's, or a file not found), after the table opened fine from its manifest."""
    text = str(exc)
    return (
        isinstance(exc, RuntimeError)
        and text.startswith("lance error:")
        and ("LanceError(IO)" in text or "Not found:" in text)
    )


def _open_table(options: LanceDBOptions, ask: Callable[[Callable[[], Any]], Any]) -> Any:
    lancedb = require("lancedb", extra="lancedb", store="lancedb")
    local = "://" not in options.uri
    if local and not Path(options.uri).expanduser().is_dir():
        # connect() would make an empty database there: a mistyped folder must not.
        raise InputError(
            "no LanceDB folder here", path=options.uri, hint="give the folder the database lives in"
        )
    try:
        database = ask(lambda: lancedb.connect(options.uri))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"cannot open LanceDB at {options.uri} ({one_line(exc)})") from exc
    try:
        return ask(lambda: database.open_table(options.table))
    except InputError:
        raise
    except Exception as exc:
        try:
            listed = ask(database.list_tables)
            names = sorted(str(name) for name in getattr(listed, "tables", listed))
        except InputError:
            raise
        except Exception:
            names = []
        if local and options.table in names:  # listed, yet it cannot be opened: its files are damaged
            raise damaged(f"LanceDB table {options.table!r}", exc, path=options.uri) from exc
        raise InputError(
            f"{_where(options)}: no such table ({one_line(exc)})",
            hint=f"tables there: {', '.join(names)}" if names else "the database holds no table",
        ) from exc


def _local_folder(options: LanceDBOptions) -> dict[str, Path | None]:
    """The database folder, when ``uri`` is one (not a remote URI)."""
    return {"uri": None if "://" in options.uri else Path(options.uri).expanduser()}


RETRIEVER = RetrieverSpec(
    name="lancedb",
    options=LanceDBOptions,
    build=build_lancedb,
    summary="a LanceDB table (embedded), queried by its own or an endpoint's embeddings",
    libraries=("lancedb",),
    inputs=_local_folder,
    export=export_chunks,
    extra="lancedb",
)

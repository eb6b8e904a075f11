"""The corpus from a vector store: the ids, texts and metadata the store serves, as a chunks file.

    export_corpus("chroma", "chunks.jsonl", options={"host": "127.0.0.1", "collection": "docs"})

writes what ``realrecall corpus export --from chroma --option host=127.0.0.1 ...`` writes, so
questions are generated from exactly the chunks the ``chroma`` retriever searches. The options are
the store retriever's own (``--retriever-option`` and ``--option`` take the same keys): where the
store is, ``id_field``/``title_field`` and, for LanceDB and Qdrant, ``text_field``. Each store's
records are read ``page_size`` at a time; the file is written atomically (all of it or nothing) and
its chunk ids must be unique. Metadata is kept as the store holds it (document ids, offsets...).
A store is any registered retriever whose ``RetrieverSpec`` has an ``export``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from realrecall.errors import InputError, RealrecallError
from realrecall.evaluate.retrievers.base import check_timeout
from realrecall.evaluate.retrievers.options import REQUEST_TIMEOUT, StoreExporter, make_options
from realrecall.evaluate.retrievers.registry import store_spec
from realrecall.files import check_distinct, write_jsonl_atomic

__all__ = ["export_corpus"]

# The progress callback hears about every this many records (and the last one).
_PROGRESS_EVERY = 256


def export_corpus(
    store: str,
    output: str | Path,
    *,
    options: Mapping[str, object] | object | None = None,
    page_size: int = 500,
    progress: Callable[[int, int], None] | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
) -> int:
    """Write every record of ``store`` to ``output`` as a corpus (JSON Lines); returns the number written.

    ``options``: the store retriever's options, typed or as text (``{"port": "8000"}``).
    ``progress(done, total)`` is called as records are read. ``request_timeout``: seconds a store's
    server may take to answer one request. Raises ``InputError`` (an unknown store, a missing extra, an
    unreachable or silent server, a damaged store folder, a store with no record, a record without
    text, two records with one id) and ``OutputError``; nothing is written unless the whole export
    succeeds.
    """
    spec = store_spec(store)
    export_chunks = cast("StoreExporter[Any]", spec.export)  # store_spec gives only specs with one
    built = make_options(spec, options)
    if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
        raise InputError(f"page size must be a positive integer, got {page_size!r}")
    check_timeout(request_timeout, setting="request_timeout")
    # Every file of a local store's folder is an input: an output among them would break the store.
    store_paths = {f"--option {key}": path for key, path in spec.input_paths(built).items()}
    check_distinct(store_paths, {"--output": output})
    export = export_chunks(built, page_size=page_size, request_timeout=request_timeout)
    return write_jsonl_atomic(output, _checked(export.records, export.total, spec.name, progress))


def _checked(
    records: Iterator[dict[str, Any]], total: int, store: str, progress: Callable[[int, int], None] | None
) -> Iterator[dict[str, Any]]:
    seen: set[str] = set()
    if progress is not None:
        progress(0, total)
    done = 0
    for record in _reading(records, store):
        chunk_id = record["id"]
        if chunk_id in seen:
            raise InputError(
                f"the {store} store has two records with the chunk id {chunk_id!r}",
                hint="a corpus needs unique ids: give id_field a field unique per chunk, or leave it out",
            )
        seen.add(chunk_id)
        yield record
        done += 1
        if progress is not None and done % _PROGRESS_EVERY == 0:
            progress(done, max(total, done))
    if progress is not None:
        progress(done, max(total, done))
    if not done:  # a corpus of no chunk is refused by every command that reads one
        raise InputError(
            f"the {store} store holds no record to export", hint="check the collection (or table) name"
        )


def _reading(records: Iterator[dict[str, Any]], store: str) -> Iterator[dict[str, Any]]:
    """The records, a client failure mid-way (a server gone, a page refused) as one line."""
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except RealrecallError:
            raise
        except Exception as exc:
            text = " ".join(str(exc).split())[:200]
            raise InputError(
                f"reading the {store} store failed: {type(exc).__name__}: {text}",
                hint="check that the store is reachable and try again (nothing was written)",
            ) from exc
        yield record

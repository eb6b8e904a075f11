"""Embeddings cached on disk, so a rerun over the same corpus embeds nothing.

Entries are keyed by (embedder name, SHA-256 of the text) in one SQLite file,
``<cache_dir>/embeddings.sqlite3``. SQLite gives what a cache shared by concurrent runs needs: each
batch of new vectors is written in one transaction (all or nothing), readers never see a half-written
row, and two processes writing at once wait for each other (WAL journal, busy timeout) instead of
corrupting the file. An entry that does not decode (wrong length, a dimension that disagrees with the
rest, NaN) is ignored and recomputed; a file that is not a database is moved aside and started afresh.
A cache is an optimisation: it never makes a run fail.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from realrecall.evaluate.retrievers.base import Embedder, checked_vectors

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CachedEmbedder", "text_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
)
"""
# SQLite's historical limit on bound parameters is 999; stay under it.
_LOOKUP_CHUNK = 900


def text_key(text: str) -> str:
    """The cache key of a text: SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """An ``Embedder`` that asks ``inner`` only for texts it has not embedded before.

    ``embed`` deduplicates the texts, reads what the cache holds, sends the rest to ``inner`` in one
    call, stores them, and returns vectors in the order asked. ``misses`` counts the texts sent on.
    """

    def __init__(self, inner: Embedder, cache_dir: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.description = str(getattr(inner, "description", f"embedder {inner.name}"))
        self.path = Path(cache_dir) / "embeddings.sqlite3"
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [text_key(text) for text in texts]
        unique: dict[str, str] = dict(zip(keys, texts, strict=True))
        found, (missing,) = self.plan([texts])
        if missing:
            vectors = checked_vectors(self.inner.embed(list(missing.values())), len(missing), self.name)
            self.misses += len(missing)
            new = dict(zip(missing, vectors, strict=True))
            self._write(new)
            found.update(new)
        dims = {vector.shape[0] for vector in found.values()}
        if len(dims) > 1:
            # Cached rows from an older model under the same name: recompute them all, once.
            self.misses += len(unique)
            vectors = checked_vectors(self.inner.embed(list(unique.values())), len(unique), self.name)
            found = dict(zip(unique, vectors, strict=True))
            self._write(found)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def plan(self, calls: Sequence[Sequence[str]]) -> tuple[dict[str, np.ndarray], list[dict[str, str]]]:
        """What ``embed`` of each call, one after the other, would ask ``inner`` for: the vectors the
        cache holds for the calls' texts (by key), and each call's distinct texts (by key, in order)
        that neither the cache nor an earlier call holds."""
        keys = [[text_key(text) for text in call] for call in calls]
        found = self._read(list(dict.fromkeys(key for call in keys for key in call)))
        planned: set[str] = set()
        missing = []
        for call, call_keys in zip(calls, keys, strict=True):
            unique = dict(zip(call_keys, call, strict=True))
            missing.append(
                {key: text for key, text in unique.items() if key not in found and key not in planned}
            )
            planned.update(missing[-1])
        return found, missing

    def store(self, vectors: dict[str, np.ndarray]) -> None:
        """Vectors made elsewhere by this embedder, by key, written in one transaction."""
        self._write(vectors)

    def _read(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._connect() as connection, contextlib.suppress(sqlite3.Error):
            if connection is None:
                return found
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    "SELECT text_sha256, dim, vector FROM embeddings"
                    f" WHERE model = ? AND text_sha256 IN ({marks})",
                    [self.name, *chunk],
                ).fetchall()
                for key, dim, blob in rows:
                    vector = _decode(dim, blob)
                    if vector is not None:
                        found[key] = vector
        return found

    def _write(self, vectors: dict[str, np.ndarray]) -> None:
        rows = [
            (self.name, key, int(vector.shape[0]), vector.astype("<f4").tobytes())
            for key, vector in vectors.items()
        ]
        # A locked or damaged cache only costs the next run a recomputation.
        with self._connect() as connection, contextlib.suppress(sqlite3.Error):
            if connection is None:
                return
            with connection:  # one transaction: the whole batch lands or none of it
                connection.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)",
                    rows,
                )

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection | None]:
        """A connection to the cache, or None when it cannot be used (then the run goes on uncached)."""
        connection = None
        try:
            connection = _open(self.path)
        except (OSError, sqlite3.OperationalError):
            pass  # unwritable folder, or locked past the timeout: this call goes uncached
        except sqlite3.DatabaseError:
            # "file is not a database" and kin: the file is damaged, not busy.
            _move_aside(self.path)
            with contextlib.suppress(OSError, sqlite3.Error):
                connection = _open(self.path)
        try:
            yield connection
        finally:
            if connection is not None:
                connection.close()


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=60.0)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(_SCHEMA)
        connection.execute("SELECT 1 FROM embeddings LIMIT 1").fetchall()
    except BaseException:
        connection.close()
        raise
    return connection


def _move_aside(path: Path) -> None:
    """Rename an unreadable cache file (kept for inspection) so a fresh one can take its place."""
    with contextlib.suppress(OSError):
        path.rename(path.with_name(f"{path.name}.corrupt-{int(time.time())}"))
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            path.with_name(path.name + suffix).unlink()


def _decode(dim: object, blob: object) -> np.ndarray | None:
    import numpy as np

    if not isinstance(dim, int) or dim < 1 or not isinstance(blob, bytes) or len(blob) != 4 * dim:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return vector if np.isfinite(vector).all() else None

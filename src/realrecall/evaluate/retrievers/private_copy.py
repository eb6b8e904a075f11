"""A local store folder copied into a private temporary folder, for a client that writes when it reads.

Chroma's local client writes into its folder every time it opens it, even to read (a row of
chroma.sqlite3's ``acquire_write`` table, the HNSW segment's files); qdrant-client's local mode makes
a ``.lock`` file in a folder without one. A command that only reads a store must leave every file of
it as it was, so such a client is given a copy: ``private_copy`` copies the folder into a new folder
under the system's temporary folder (``TMPDIR``), ``releaser`` makes what deletes it, and
``remove_when_unused`` calls that once the object read through the client is garbage (or when the
process exits).

Each file is cloned where the file system can (a reflink on Btrfs or XFS, when ``TMPDIR`` is on the
store's file system: no data is copied and no space used), else copied byte for byte: time and
space in proportion to the store, once per command. A folder whose files change while it is copied
(another process writing the store) is copied again, and refused after three tries.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path

from realrecall.errors import InputError

__all__ = ["private_copy", "releaser", "remove_when_unused"]

# Linux's FICLONE ioctl (_IOW(0x94, 9, int)): the destination shares the source's blocks.
_FICLONE = 0x40049409
_TRIES = 3


def private_copy(folder: Path, *, store: str) -> Path:
    """A new temporary folder holding a copy of every file under ``folder`` (symbolic links followed).

    ``store`` names the store in errors ("the Chroma folder"). Raises ``InputError`` when the copy
    cannot be made (no space, say) or the folder keeps changing while it is copied.
    """
    for _ in range(_TRIES):
        before = _state(folder)
        copy: Path | None = None
        try:
            copy = Path(tempfile.mkdtemp(prefix=f"realrecall-{folder.name}-"))
            shutil.copytree(folder, copy / "store", copy_function=_clone)
        except OSError as exc:  # shutil.Error too: it gathers each file's failure
            if copy is not None:
                _remove(copy)
            if _state(folder) != before:  # a file went away meanwhile: copy again
                continue
            raise InputError(
                f"cannot copy {store} ({_megabytes(before)} MB) to a private folder under "
                f"{tempfile.gettempdir()}, which realrecall reads it from so its files stay as they are "
                f"({type(exc).__name__}: {exc})",
                path=folder,
                hint="free space there, or set TMPDIR to a folder with room (on the store's own file "
                "system, a Btrfs or XFS one clones the files without using space)",
            ) from exc
        if _state(folder) == before:
            return copy / "store"
        _remove(copy)
    raise InputError(
        f"{store} kept changing while realrecall copied it ({_TRIES} tries)",
        path=folder,
        hint="run again when no other process is writing to the store",
    )


def releaser(copy: Path, close: Callable[[], object] | None = None) -> Callable[[], None]:
    """What deletes ``copy`` (made by ``private_copy``), after calling ``close`` (the client's, so it
    lets go of the files first); it acts once, however often it is called."""
    pending = [copy.parent]

    def release() -> None:
        while pending:
            folder = pending.pop()
            if close is not None:
                with contextlib.suppress(Exception):  # a client already closed, or half torn down at exit
                    close()
            _remove(folder)

    return release


def remove_when_unused(owner: object, release: Callable[[], None]) -> None:
    """Call ``release`` once ``owner`` is garbage, or when the process exits."""
    weakref.finalize(owner, release)


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _clone(source: str, target: str) -> None:
    """Copy one file: a reflink where the file system makes one, else its bytes."""
    try:
        import fcntl

        with open(source, "rb") as reading, open(target, "wb") as writing:
            fcntl.ioctl(writing.fileno(), _FICLONE, reading.fileno())
    except (ImportError, OSError):  # another OS, another file system, or two file systems
        shutil.copyfile(source, target)
    shutil.copystat(source, target)


def _state(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file's size, modification time and inode, to tell whether the folder changed meanwhile."""
    state: dict[str, tuple[int, int, int]] = {}
    for root, _, files in os.walk(folder, followlinks=True):
        for name in files:
            path = os.path.join(root, name)
            with contextlib.suppress(FileNotFoundError):  # deleted meanwhile: missing from the state
                status = os.stat(path)
                state[path] = (status.st_size, status.st_mtime_ns, status.st_ino)
    return state


def _megabytes(state: dict[str, tuple[int, int, int]]) -> str:
    return f"{sum(size for size, _, _ in state.values()) / 1e6:.1f}"

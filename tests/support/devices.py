"""Outputs that are not regular files: a copy of /dev/null made with mknod, and FIFOs read in a thread."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

import pytest

NULL_DEVICE = os.makedev(1, 3)  # the numbers of /dev/null on Linux


def null_device(path: Path) -> Path:
    """A character device at ``path`` with /dev/null's numbers (``mknod PATH c 1 3``).

    Needs root (skipped otherwise) and a file system mounted without ``nodev``.
    """
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, NULL_DEVICE)
    try:
        os.close(os.open(path, os.O_WRONLY))
    except PermissionError:
        pytest.skip(f"{path.parent} is mounted nodev: a device made there cannot be opened")
    return path


def is_null_device(path: Path) -> bool:
    """Still the character device ``null_device`` made (not a file renamed over it)."""
    info = path.lstat()
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == NULL_DEVICE


class FifoReader:
    """A FIFO at ``path`` and a thread reading everything written to it (``text`` once joined)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self._chunks: list[bytes] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        # Reopened after each writer closes, so a command writing two outputs there is read whole.
        while True:
            with self.path.open("rb") as handle:
                self._chunks.append(handle.read())
            if self._stopping.is_set():
                return

    def text(self) -> str:
        """What was written, once every writer is done (stops the reader)."""
        self._stopping.set()
        # A writer that writes nothing wakes a reader waiting for the next writer (ENXIO: no reader is
        # waiting, it has seen the stop already).
        with contextlib.suppress(OSError):
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
        self._thread.join(timeout=30)
        if self._thread.is_alive():
            raise AssertionError(f"the reader of {self.path} did not stop")
        return b"".join(self._chunks).decode("utf-8")

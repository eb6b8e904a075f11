"""Memory pages of the bulk steps: big arrays on ordinary (4 KiB) pages while a reader runs, and freed
pages handed back to the system after a step (``give_back_memory``).

numpy asks the kernel for transparent huge pages (``madvise``) for every array of 4 MiB or more. On
a virtual machine whose memory the host hands out lazily (this project's CI machines), a fresh 2 MiB
page is guest memory nobody has touched for a while, and its first touch is slow: reading a 460 MB
TREC run swung between 2.2 and 3.3 s (one 80 MB concatenation alone took 0.08 to 1.5 s), and took a
steady 2.0 s on small pages, where the kernel hands back the pages just freed, still warm. Scoring is
not wrapped: its arrays are reused while warm, and huge pages were as quick or quicker there.

Like ``realrecall._gc.gc_paused``, the setting is numpy's process-wide one, switched for the call and
put back after (calls nest); an allocation on another thread meanwhile only loses the hint.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["give_back_memory", "small_pages"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def small_pages(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` run with numpy's huge-page hint off (and back as it was after)."""

    @functools.wraps(function)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        switch = _hint_switch()
        if switch is None:
            return function(*args, **kwargs)
        previous = switch(False)
        try:
            return function(*args, **kwargs)
        finally:
            switch(previous)

    return wrapped


def _hint_switch() -> Callable[[bool], bool] | None:
    """numpy's setter of the hint, which returns the previous value (None where numpy lacks it)."""
    import importlib

    try:
        multiarray = importlib.import_module("numpy._core.multiarray")
    except ImportError:
        return None
    setter: Callable[[bool], bool] | None = getattr(multiarray, "_set_madvise_hugepage", None)
    return setter


def give_back_memory() -> None:
    """Hand freed buffers back to the system: a third of the RSS of reading a 460 MB file.

    Arrow's pool keeps freed pages for reuse and so does the C library's heap; after a bulk step (the
    parser, looking judged passages up in a run read into columns) they would stay counted to the end.
    """
    pa = sys.modules.get("pyarrow")  # not imported for this: a small evaluation never loads it
    if pa is not None:
        pa.default_memory_pool().release_unused()
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass

"""Process-wide switches that make realrecall's bulk steps quicker: off unless a caller opts in.

A bulk step reads, scores or writes a whole gold set, run or results file: millions of small objects
that all stay alive, and arrays of hundreds of MB. Three switches help it, each measured:

- the cyclic garbage collector is paused during the step: each full collection its allocations
  trigger walks every object again and frees nothing (3M qrels lines read in 4.6 s, not 7-8.5 s; a
  quarter of the CPU of evaluating 100k queries);
- numpy's transparent huge-page hint is off while a big TREC file is read: on a virtual machine whose
  host hands out memory lazily, a fresh 2 MiB page is slow to touch (a 460 MB run read in 2.2-3.3 s
  with the hint, a steady 2.0 s without; scoring keeps the hint: its arrays are reused while warm);
- freed heap pages go back to the system after a step (``malloc_trim``, Arrow's pool): a third of
  the RSS of reading a 460 MB file.

Each one changes the whole process, every thread of it, not only realrecall. So none is on by
default: a library call leaves the collector, numpy and the heap as they are. The ``realrecall``
command runs inside :func:`bulk_mode`, and so can a program of yours that reads big files. Even then
the switches are on only during the bulk steps themselves, never while code of yours runs: importing
a ``module:function`` retriever, building it, embedding a corpus and searching are not bulk steps.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

__all__ = ["bulk_mode", "bulk_step", "give_back_memory", "in_bulk_mode", "small_pages"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

# A context variable, not a global: the opt-in holds for the code that made it (its thread, its
# asyncio tasks), not for a thread started elsewhere in the process.
_ON: ContextVar[bool] = ContextVar("realrecall_bulk_mode", default=False)


@contextmanager
def bulk_mode() -> Iterator[None]:
    """Within, realrecall's bulk steps pause the collector, read big files on small pages and hand freed
    memory back (see the module docs); each switch is put back as it was after each step."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def in_bulk_mode() -> bool:
    """Whether the calling code runs inside :func:`bulk_mode`."""
    return _ON.get()


def bulk_step(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` run with the collector off in bulk mode (and back on after, if it was on; calls
    nest). The step must make no reference cycles of its own and call no code of the user's."""

    @functools.wraps(function)
    def step(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not _ON.get() or not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return step


def small_pages(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` run with numpy's huge-page hint off in bulk mode (and put back as it was after)."""

    @functools.wraps(function)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        switch = _hint_switch() if _ON.get() else None
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
    """In bulk mode, hand freed buffers back to the system (Arrow's pool, then the C library's heap).

    Both keep freed pages for reuse; after a bulk step (the parser, looking judged passages up in a
    run read into columns) they would stay counted in the RSS to the end of the process.
    """
    if not _ON.get():
        return
    pa = sys.modules.get("pyarrow")  # not imported for this: a small evaluation never loads it
    if pa is not None:
        pa.default_memory_pool().release_unused()
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass

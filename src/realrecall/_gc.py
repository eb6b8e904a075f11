"""The cyclic garbage collector paused while a bulk step builds many objects that all stay alive.

Reading 100k gold queries and a run, labelling and scoring them and writing results.json makes
millions of small objects (dicts, strings, dataclasses) that live to the end of the step: each full
collection the allocations trigger walks all of them again and frees nothing. On 100k queries that is
about a quarter of the CPU of ``realrecall evaluate`` (2.6 of 9.8 s). The steps paused make no
reference cycles of their own; anything cyclic they leave is collected once the collector is back.
Retrieval (user code, HTTP clients) is never paused.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["gc_paused"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def gc_paused(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` run with the collector off (and back on after, if it was on; calls nest)."""

    @functools.wraps(function)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused

"""A retriever over a function ``f(query: str, k: int)`` that returns the ranked hits for one query.

``FunctionRetriever`` is what a ``module:function`` retriever (``custom``), a LangChain or LlamaIndex
object (``frameworks``) and the vector stores (``store_common``) run. A hit may be an id (str or
int), a mapping with an ``"id"`` key (e.g. a vector store's result dict), an object with an ``.id``
attribute (e.g. a LangChain Document or a dataclass) or a LlamaIndex node (its ``node_id``); with
``id_field`` the chunk id is read from that key of the hit's ``metadata`` (or of the mapping) instead.
Results are reduced to ids, duplicates dropped keeping the first, and cut to k. With ``workers`` > 1
the function is called from that many threads at once (it must then be thread-safe); the order of
the results never depends on it.

A failure on a query is a ``RetrieverQueryError`` naming the query, the original exception as its
``__cause__``; a function still running after ``query_timeout`` seconds names the query (``RunSettings``
gives 300 s by default; None is no limit). On the main thread the timeout is a ``SIGALRM`` timer: the
call runs where the function was imported (a resource tied to that thread, such as an SQLite
connection made at import, works) and the timer interrupts it there. Elsewhere (``workers`` > 1, a
caller's own thread) each call runs in a helper thread, which is left behind if it never returns.
"""

from __future__ import annotations

import functools
import inspect
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from realrecall.errors import InputError, QueryTimedOut, RealrecallError, RetrieverQueryError
from realrecall.evaluate.retrievers.base import check_k, check_queries, check_timeout

__all__ = ["FunctionRetriever", "SearchFunction", "describe_exception", "normalise_hits"]

SearchFunction = Callable[[str, int], Any]


class FunctionRetriever:
    """A ``Retriever`` over a per-query search function (see the module docstring).

    ``query_timeout``: seconds one call may run before the query fails with a one-line error
    (None, the default: no limit). ``kind`` and ``fix_hint`` word those errors for callers that wrap
    their own code, not the user's (the vector-store retrievers: ``retriever chroma raised ...``).
    """

    def __init__(
        self,
        function: SearchFunction,
        *,
        name: str | None = None,
        workers: int = 1,
        query_timeout: float | None = None,
        kind: str = "custom retriever",
        fix_hint: str = "fix the function (run with --debug for its traceback)",
        id_field: str | None = None,
    ) -> None:
        if not callable(function):
            raise InputError(f"custom retriever {name or function!r} is not callable")
        check_timeout(query_timeout)
        _check_signature(function, name or _qualified_name(function))
        self._function = function
        self._workers = workers
        self._timeout = query_timeout
        self._kind = kind
        self._fix_hint = fix_hint
        self._id_field = id_field
        self.name = name or _qualified_name(function)
        self.description = f"custom function {self.name} (workers={workers})"

    @property
    def function(self) -> SearchFunction:
        return self._function

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        if self._workers == 1 or len(queries) == 1:
            return [self._one(query, k, position) for position, query in enumerate(queries)]
        with ThreadPoolExecutor(max_workers=min(self._workers, len(queries))) as pool:
            futures = [pool.submit(self._one, query, k, position) for position, query in enumerate(queries)]
            try:
                return [future.result() for future in futures]
            except BaseException:
                # The first failure ends the search: queries not yet started are not run.
                for future in futures:
                    future.cancel()
                raise

    def _one(self, query: str, k: int, position: int) -> list[str]:
        try:
            hits = self._call(query, k)
        except QueryTimedOut:
            raise RetrieverQueryError(
                f"gave no answer within {self._timeout:g} s",
                retriever=self.name,
                query=query,
                position=position,
                hint="make the function faster, or allow more time per query (query timeout)",
                kind=self._kind,
            ) from None
        except RealrecallError:  # one line already (a store's server that never answered, say)
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a retriever is its failure, not ours
            # The user's bug: one line here, its traceback kept as the cause (shown with --debug).
            raise RetrieverQueryError(
                f"raised {describe_exception(exc)}",
                retriever=self.name,
                query=query,
                position=position,
                hint=self._fix_hint,
                kind=self._kind,
            ) from exc
        try:
            return normalise_hits(
                hits, k, source=self.name, query=query, position=position, id_field=self._id_field
            )
        except RetrieverQueryError:
            raise
        except (Exception, SystemExit) as exc:  # a generator of hits, or a hit's .id, can raise as it is read
            raise RetrieverQueryError(
                f"raised {describe_exception(exc)} as its hits were read",
                retriever=self.name,
                query=query,
                position=position,
                hint=self._fix_hint,
                kind=self._kind,
            ) from exc

    def _call(self, query: str, k: int) -> Any:
        if self._timeout is None:
            return self._function(query, k)
        if threading.current_thread() is threading.main_thread():
            return _within_on_main_thread(self._timeout, functools.partial(self._function, query, k))
        # A daemon thread: one that never returns is left behind and cannot keep the process alive.
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def run() -> None:
            try:
                outcome["hits"] = self._function(query, k)
            except BaseException as exc:  # handed over to the caller's thread below
                outcome["error"] = exc
            finally:
                finished.set()

        threading.Thread(target=run, name=f"realrecall retriever {self.name}", daemon=True).start()
        if not finished.wait(self._timeout):
            raise QueryTimedOut
        if "error" in outcome:
            raise outcome["error"]
        return outcome["hits"]


Answer = TypeVar("Answer")


def _within_on_main_thread(seconds: float, call: Callable[[], Answer]) -> Answer:
    """``call()`` on the main thread, or ``QueryTimedOut`` raised inside it by a SIGALRM timer once
    ``seconds`` have passed. A timer already set (by the caller's own code) is put back afterwards with
    what was left of it; a call that catches the timeout and returns anyway still times out."""
    armed = fired = False

    def alarm(signum: int, frame: object) -> None:
        nonlocal fired
        if armed:
            fired = True
            raise QueryTimedOut

    earlier_handler = signal.signal(signal.SIGALRM, alarm)
    started = time.monotonic()
    earlier_delay = earlier_interval = 0.0
    armed = True
    try:
        earlier_delay, earlier_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
        answer = call()
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, earlier_handler)
        if earlier_delay:
            left = earlier_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), earlier_interval)
    if fired:
        raise QueryTimedOut
    return answer


def describe_exception(exc: BaseException) -> str:
    """``KeyError: 'index missing'`` on one line, cut to a readable length."""
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:199] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def normalise_hits(
    hits: object, k: int, *, source: str, query: str, position: int = 0, id_field: str | None = None
) -> list[str]:
    """The ids of ``hits`` in order, first occurrence kept, at most ``k`` (``id_field``: see ``_hit_id``)."""
    if isinstance(hits, str | bytes | Mapping) or not isinstance(hits, Iterable):
        raise RetrieverQueryError(
            f"returned {type(hits).__name__}",
            retriever=source,
            query=query,
            position=position,
            hint="return a list of ids, of dicts with an 'id', or of objects with an .id",
        )
    ids: list[str] = []
    seen: set[str] = set()
    for number, hit in enumerate(hits, start=1):
        chunk_id = _hit_id(hit, id_field)
        if chunk_id is None:
            raise RetrieverQueryError(
                _no_id(hit, number, id_field),
                retriever=source,
                query=query,
                position=position,
                hint=_no_id_hint(hit, id_field),
            )
        if chunk_id not in seen:
            seen.add(chunk_id)
            ids.append(chunk_id)
            if len(ids) == k:
                break
    return ids


def _hit_id(hit: object, id_field: str | None = None) -> str | None:
    """A hit's chunk id: the hit itself, its ``"id"``/``.id``, a LlamaIndex node's ``node_id``; with
    ``id_field``, that key of its ``metadata`` (a Document's, a node's) or of the mapping itself."""
    node = getattr(hit, "node", hit)  # a LlamaIndex NodeWithScore holds its node
    value: object
    if id_field is not None:
        metadata = hit if isinstance(hit, Mapping) else getattr(node, "metadata", None)
        value = None
        if isinstance(metadata, Mapping):
            value = metadata.get(id_field)
            inner = metadata.get("metadata")
            if value is None and isinstance(inner, Mapping):
                value = inner.get(id_field)
    elif isinstance(hit, Mapping):
        value = hit.get("id")
    elif hasattr(node, "node_id") and not hasattr(node, "id"):
        value = node.node_id
    else:
        value = getattr(hit, "id", hit)
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value)


def _no_id(hit: object, number: int, id_field: str | None) -> str:
    node = getattr(hit, "node", hit)
    if id_field is not None and (isinstance(hit, Mapping) or hasattr(node, "metadata")):
        return f"returned hit {number} ({type(hit).__name__}) without a metadata field {id_field!r}"
    if hasattr(node, "metadata"):
        return f"returned hit {number} ({type(hit).__name__}) without an id"
    return f"returned a {type(hit).__name__} as hit {number}"


def _no_id_hint(hit: object, id_field: str | None) -> str:
    if id_field is not None:
        return f"store the chunk id in each hit's metadata as {id_field!r}, or fix id_field"
    if hasattr(getattr(hit, "node", hit), "metadata"):
        return (
            "add the chunks with their ids (ids=[...]), or name the metadata field holding the chunk id: "
            "--retriever-option id_field=NAME"
        )
    return "each hit must be an id (str), a dict with an 'id', or an object with an .id"


def _check_signature(function: SearchFunction, name: str) -> None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # builtins and some C callables have no signature to check; the call will tell
    try:
        signature.bind("query", 10)
    except TypeError as exc:
        raise InputError(
            f"custom retriever {name} cannot be called as f(query, k): {exc}",
            hint="define it as def search(query: str, k: int)",
        ) from exc


def _qualified_name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None) or type(function).__name__
    return f"{module}:{qualname}" if module else qualname

"""Your own retriever: a function ``f(query: str, k: int)`` that returns the ranked hits for one query.

Named on the command line as ``package.module:function`` (importable from the Python path) or
``path/to/file.py:function``; passed in Python as the callable itself. A hit may be an id (str or int),
a mapping with an ``"id"`` key (e.g. a vector store's result dict) or an object with an ``.id``
attribute (e.g. a LangChain/LlamaIndex node or a dataclass). Results are reduced to ids, duplicates
dropped keeping the first, and cut to k. With ``workers`` > 1 the function is called from that many
threads at once (it must then be thread-safe); the order of the results never depends on it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import check_k, check_queries

__all__ = ["FunctionRetriever", "load_function"]

SearchFunction = Callable[[str, int], Any]


class FunctionRetriever:
    """A ``Retriever`` over a per-query search function (see the module docstring)."""

    def __init__(self, function: SearchFunction, *, name: str | None = None, workers: int = 1) -> None:
        if not callable(function):
            raise InputError(f"custom retriever {name or function!r} is not callable")
        _check_signature(function, name or _qualified_name(function))
        self._function = function
        self._workers = workers
        self.name = name or _qualified_name(function)
        self.description = f"custom function {self.name} (workers={workers})"

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        check_k(k)
        check_queries(queries)
        if self._workers == 1 or len(queries) == 1:
            return [self._one(query, k) for query in queries]
        with ThreadPoolExecutor(max_workers=min(self._workers, len(queries))) as pool:
            return list(pool.map(lambda query: self._one(query, k), queries))

    def _one(self, query: str, k: int) -> list[str]:
        try:
            hits = self._function(query, k)
        except Exception as exc:
            # The user's bug keeps its traceback; the note says which query set it off.
            exc.add_note(f"raised by custom retriever {self.name} for query {_shorten(query)!r}")
            raise
        return normalise_hits(hits, k, source=self.name, query=query)


def normalise_hits(hits: object, k: int, *, source: str, query: str) -> list[str]:
    """The ids of ``hits`` in order, first occurrence kept, at most ``k``."""
    if isinstance(hits, str | bytes | Mapping) or not isinstance(hits, Iterable):
        raise InputError(
            f"custom retriever {source} returned {type(hits).__name__} for query {_shorten(query)!r}",
            hint="return a list of ids, of dicts with an 'id', or of objects with an .id",
        )
    ids: list[str] = []
    seen: set[str] = set()
    for position, hit in enumerate(hits, start=1):
        chunk_id = _hit_id(hit)
        if chunk_id is None:
            raise InputError(
                f"custom retriever {source} returned a {type(hit).__name__} as hit {position} "
                f"for query {_shorten(query)!r}",
                hint="each hit must be an id (str), a dict with an 'id', or an object with an .id",
            )
        if chunk_id not in seen:
            seen.add(chunk_id)
            ids.append(chunk_id)
            if len(ids) == k:
                break
    return ids


def _hit_id(hit: object) -> str | None:
    value = hit.get("id") if isinstance(hit, Mapping) else getattr(hit, "id", hit)
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value)


def load_function(spec: str) -> SearchFunction:
    """Import ``module:function`` or ``path/to/file.py:function`` and return the callable."""
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise InputError(
            f"custom retriever {spec!r} is not of the form module:function",
            hint="e.g. my_search:search or path/to/file.py:search",
        )
    module = _load_file(Path(target), spec) if _is_path(target) else _import_module(target, spec)
    for part in attribute.split("."):
        if not hasattr(module, part):
            raise InputError(
                f"{target!r} has no attribute {attribute!r}",
                hint=f"define def {attribute}(query: str, k: int) there, or fix the name",
            )
        module = getattr(module, part)
    if not callable(module):
        raise InputError(f"{spec!r} is a {type(module).__name__}, not a function", hint="name a function")
    function: SearchFunction = module
    return function


def _is_path(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


def _import_module(name: str, spec: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise InputError(
                f"custom retriever {spec!r}: module {name!r} not found",
                hint="put it on PYTHONPATH, or give a file path: path/to/file.py:function",
            ) from exc
        raise InputError(f"custom retriever {spec!r}: importing {name!r} failed: {exc}") from exc


def _load_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise InputError("custom retriever file not found", path=path, hint=f"check the path in {spec!r}")
    # A name unique to the file, so two retrievers in files of the same name do not collide.
    module_name = "realrecall_custom_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise InputError("cannot load this file as Python", path=path, hint="give a .py file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look their module up here
    try:
        module_spec.loader.exec_module(module)
    except ModuleNotFoundError as exc:
        del sys.modules[module_name]
        raise InputError(f"importing it failed: {exc}", path=path) from exc
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


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


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

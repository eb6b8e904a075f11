"""Your own retriever: a function ``f(query: str, k: int)`` that returns the ranked hits for one query.

Named on the command line as ``package.module:function`` (importable from the Python path) or
``path/to/file.py:function``; passed in Python as the callable itself. A hit may be an id (str or int),
a mapping with an ``"id"`` key (e.g. a vector store's result dict), an object with an ``.id``
attribute (e.g. a LangChain Document or a dataclass) or a LlamaIndex node (its ``node_id``); with the
option ``id_field`` the chunk id is read from that key of the hit's ``metadata`` (or of the mapping)
instead. Results are reduced to ids, duplicates dropped keeping the first, and cut to k. The name may
also point at a LangChain retriever or vector store or a LlamaIndex retriever or index, which
``frameworks`` adapts. With ``workers`` > 1 the function is called from that many
threads at once (it must then be thread-safe); the order of the results never depends on it.

Failures are the user's code, so they are :class:`UserCodeError` lines with the original exception as
``__cause__`` (the CLI shows its traceback with ``--debug``): a file with a syntax error names the file
and line; a function that raises names the query and the exception; a function still running after
``query_timeout`` seconds names the query (by default there is no limit: a hung function hangs the
run). With a timeout each call runs in a helper thread, which is left behind if it never returns.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError, QueryTimedOut, RetrieverQueryError, UserCodeError
from realrecall.evaluate.retrievers.base import check_k, check_queries, check_timeout
from realrecall.evaluate.retrievers.options import RetrieverSpec, RunSettings

__all__ = ["RETRIEVER", "CustomOptions", "FunctionRetriever", "code_identity", "load_function"]

SearchFunction = Callable[[str, int], Any]


@dataclass(frozen=True, kw_only=True)
class CustomOptions:
    """The options of a ``module:function`` retriever.

    The function is the one thing to choose: ``build_retriever`` fills it in from the name given
    (``--retriever path/to/file.py:search``) or the callable itself. How it is called (``workers``,
    ``query_timeout``) is in ``RunSettings``, as those have their own flags.
    """

    function: Annotated[
        str | SearchFunction | None, "module:function or path/to/file.py:function (taken from --retriever)"
    ] = None
    id_field: Annotated[
        str | None, "metadata field (or dict key) of each hit that holds the chunk id (default: its id)"
    ] = None


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
        except (Exception, SystemExit) as exc:  # sys.exit() in a retriever is its failure, not ours
            # The user's bug: one line here, its traceback kept as the cause (shown with --debug).
            raise RetrieverQueryError(
                f"raised {_describe(exc)}",
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
                f"raised {_describe(exc)} as its hits were read",
                retriever=self.name,
                query=query,
                position=position,
                hint=self._fix_hint,
                kind=self._kind,
            ) from exc

    def _call(self, query: str, k: int) -> Any:
        if self._timeout is None:
            return self._function(query, k)
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


def build_custom(corpus: Corpus, options: CustomOptions, settings: RunSettings) -> FunctionRetriever:
    """The function of ``options`` (a callable, or a ``module:function`` name to import) as a retriever.

    A LangChain or LlamaIndex object, named or given, becomes a ``FrameworkRetriever``.
    """
    from realrecall.evaluate.retrievers.frameworks import framework_retriever

    target = options.function
    if target is None:
        raise InputError("no custom retriever function given", hint="give --retriever module:function")
    name = target if isinstance(target, str) else None
    found: object = load_object(target) if isinstance(target, str) else target
    adapted = framework_retriever(
        found,
        name=name,
        id_field=options.id_field,
        workers=settings.workers,
        query_timeout=settings.query_timeout,
    )
    if adapted is not None:
        return adapted
    if not callable(found):
        raise InputError(
            f"{name or 'the custom retriever'!r} is a {type(found).__name__}, not a function",
            hint="name a function f(query, k), a LangChain retriever or vector store, or a LlamaIndex "
            "retriever",
        )
    return FunctionRetriever(
        found,
        name=name,
        workers=settings.workers,
        query_timeout=settings.query_timeout,
        id_field=options.id_field,
    )


# Not a name in the registry's table: any name with a colon, or a callable, is built by this entry.
RETRIEVER = RetrieverSpec(
    name="module:function",
    options=CustomOptions,
    build=build_custom,
    summary="your own function f(query, k) returning ranked ids, imported from a module or a file",
)


def _describe(exc: BaseException) -> str:
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


def load_function(spec: str) -> SearchFunction:
    """Import ``module:function`` or ``path/to/file.py:function`` and return the callable."""
    found = load_object(spec)
    if not callable(found):
        raise InputError(f"{spec!r} is a {type(found).__name__}, not a function", hint="name a function")
    function: SearchFunction = found
    return function


def load_object(spec: str) -> object:
    """Import ``module:name`` or ``path/to/file.py:name`` and return what the name holds."""
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
    found: object = module
    return found


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
        raise _import_failed(exc, spec, f"importing {name!r} failed", _module_file(name)) from exc
    except (Exception, SystemExit) as exc:
        raise _import_failed(exc, spec, f"importing {name!r} failed", _module_file(name)) from exc


def _module_file(name: str) -> Path | None:
    """The file of a module that failed to import, to place its error (None if it cannot be told)."""
    try:
        found = importlib.util.find_spec(name)
    except Exception:
        return None
    origin = getattr(found, "origin", None)
    return Path(origin) if origin and Path(origin).is_file() else None


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
    except (Exception, SystemExit) as exc:
        del sys.modules[module_name]
        raise _import_failed(exc, spec, "importing it failed", path) from exc
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _import_failed(exc: BaseException, spec: str, what: str, path: Path | None) -> UserCodeError:
    """One line for code that could not be imported, at the file and line where it went wrong.

    A syntax error carries its own file and line; any other exception is placed at the deepest line
    of the user's own file in its traceback (or, for a module, the deepest line outside the import
    machinery), which is where the failing import or statement is.
    """
    if isinstance(exc, SyntaxError):
        return UserCodeError(
            f"custom retriever {spec!r}: syntax error: {exc.msg}",
            path=exc.filename or path,
            line=exc.lineno,
            hint="fix the file",
        )
    where, line = _where(exc, path)
    hint = (
        _missing_package_hint(exc)
        if isinstance(exc, ImportError)
        else "fix the code that runs at import (run with --debug for its traceback)"
    )
    return UserCodeError(
        f"custom retriever {spec!r}: {what}: {_describe(exc)}", path=where, line=line, hint=hint
    )


def _missing_package_hint(exc: ImportError) -> str:
    """Name the extra that installs a missing framework (LangChain, LlamaIndex), else the general fix."""
    from realrecall.evaluate.retrievers.frameworks import EXTRAS, extra_for_module

    framework = extra_for_module(exc.name or "")
    if framework is not None:
        return f"pip install '{EXTRAS[framework][1]}'"
    return "install the missing package, or fix the import"


def _where(exc: BaseException, path: Path | None) -> tuple[str | None, int | None]:
    """The file and line to name: the deepest frame in ``path``, else the deepest frame of user code."""
    machinery = (__file__, importlib.__file__ or "")
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith("<") and frame.filename not in machinery
    ]
    if path is not None:
        own = [frame for frame in frames if _same_file(frame.filename, path)]
        if own:
            return str(path), own[-1].lineno
    if frames:
        return frames[-1].filename, frames[-1].lineno
    return (None if path is None else str(path)), None


def _same_file(filename: str, path: Path) -> bool:
    try:
        return Path(filename).resolve() == path.resolve()
    except OSError:
        return False


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


def code_identity(function: Callable[..., Any]) -> dict[str, str]:
    """What decides a custom function's rankings, for its fingerprint: its qualified name and the
    SHA-256 of its module's source, not the path it was loaded from.

    The same file under another path is the same retriever; a function rewritten behind the same
    ``file.py:function`` is another (its source hash changes). A function whose source cannot be read
    (a builtin, a C extension) is named by module and qualified name alone.
    """
    target = inspect.unwrap(function)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    module = inspect.getmodule(target if inspect.isroutine(target) else type(target))
    source = _module_source(module)
    if source is None:
        return {"function": f"{getattr(module, '__name__', '?')}:{name}"}
    return {"function": name, "source_sha256": hashlib.sha256(source).hexdigest()}


def _module_source(module: object) -> bytes | None:
    path = getattr(module, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return None
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _qualified_name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None) or type(function).__name__
    return f"{module}:{qualname}" if module else qualname

"""Your own retriever: a function ``f(query: str, k: int)`` that returns the ranked hits for one query.

Named on the command line as ``package.module:function`` (importable from the Python path) or
``path/to/file.py:function``; passed in Python as the callable itself. The name may also point at a
LangChain retriever or vector store or a LlamaIndex retriever or index, which ``frameworks`` adapts.
The function runs in a ``FunctionRetriever`` (``function``: what a hit may be, workers, timeouts).

Failures are the user's code, so they are :class:`UserCodeError` lines with the original exception as
``__cause__`` (the CLI shows its traceback with ``--debug``): a file with a syntax error names the file
and line; a function that raises names the query and the exception; a function still running after
``query_timeout`` seconds names the query.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError, UserCodeError
from realrecall.evaluate.retrievers.frameworks import EXTRAS, extra_for_module, framework_retriever
from realrecall.evaluate.retrievers.function import FunctionRetriever, SearchFunction, describe_exception
from realrecall.evaluate.retrievers.options import RetrieverSpec, RunSettings

__all__ = ["RETRIEVER", "CustomOptions", "code_identity", "load_function"]


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


def build_custom(corpus: Corpus, options: CustomOptions, settings: RunSettings) -> FunctionRetriever:
    """The function of ``options`` (a callable, or a ``module:function`` name to import) as a retriever.

    A LangChain or LlamaIndex object, named or given, becomes a ``FrameworkRetriever``.
    """
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


def source_file(target: str | object | None) -> Path | None:
    """The file a custom retriever's code is read from (None when it cannot be told).

    ``path/to/file.py:name`` is that file; ``module:name`` the module's file, found without running
    the module (a dotted name imports its parent packages); a Python function its own source file.
    """
    if target is None:
        return None
    if not isinstance(target, str):
        try:
            found = inspect.getsourcefile(target)  # type: ignore[arg-type]
        except TypeError:  # a builtin, or an object that is not a function (a framework's)
            return None
        return Path(found) if found else None
    module, _, _ = target.rpartition(":")
    if not module:
        return None
    if _is_path(module):
        return Path(module).expanduser()
    try:
        spec = importlib.util.find_spec(module)
    except (Exception, SystemExit):  # a parent package failing at import: reported when it is imported
        return None
    origin = getattr(spec, "origin", None)
    return Path(origin) if origin and Path(origin).is_file() else None


def _source_files(options: CustomOptions) -> dict[str, Path | None]:
    return {"function": source_file(options.function)}


# Not a name in the registry's table: any name with a colon, or a callable, is built by this entry.
RETRIEVER = RetrieverSpec(
    name="module:function",
    options=CustomOptions,
    build=build_custom,
    summary="your own function f(query, k) returning ranked ids, imported from a module or a file",
    inputs=_source_files,
)


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
        f"custom retriever {spec!r}: {what}: {describe_exception(exc)}", path=where, line=line, hint=hint
    )


def _missing_package_hint(exc: ImportError) -> str:
    """Name the extra that installs a missing framework (LangChain, LlamaIndex), else the general fix."""
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

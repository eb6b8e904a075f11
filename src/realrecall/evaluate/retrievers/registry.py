"""From a name on the command line (or a function in Python) to a ready retriever.

``RETRIEVERS`` maps each name to its ``RetrieverSpec`` (options type, build function, summary), one
line per retriever below; anything with a colon is a user's ``module:function`` (``CUSTOM``). Adding
a retriever is one new module defining its options and ``RETRIEVER = RetrieverSpec(...)``, plus one
line here (or a ``register(spec)`` call from your own code). Help text, "choose from" messages and
the option lists in errors are all read from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import bm25, custom, dense, hybrid, local_dense
from realrecall.evaluate.retrievers import chroma as chroma_store
from realrecall.evaluate.retrievers import lancedb as lancedb_store
from realrecall.evaluate.retrievers import qdrant as qdrant_store
from realrecall.evaluate.retrievers.base import Retriever
from realrecall.evaluate.retrievers.function import FunctionRetriever, SearchFunction
from realrecall.evaluate.retrievers.options import (
    RetrieverSpec,
    RunSettings,
    make_options,
    option_rows,
    retriever_fingerprint,
)

__all__ = [
    "CUSTOM",
    "RETRIEVERS",
    "About",
    "DeferredRetriever",
    "RetrieverRecipe",
    "build_retriever",
    "choices",
    "find_spec",
    "options_help",
    "register",
    "retriever_inputs",
    "store_choices",
    "store_spec",
    "unregister",
]

_REGISTRY: dict[str, RetrieverSpec[Any]] = {
    spec.name: spec
    for spec in (
        bm25.RETRIEVER,
        dense.RETRIEVER,
        local_dense.RETRIEVER,
        hybrid.RETRIEVER,
        chroma_store.RETRIEVER,
        lancedb_store.RETRIEVER,
        qdrant_store.RETRIEVER,
    )
}
RETRIEVERS: Mapping[str, RetrieverSpec[Any]] = MappingProxyType(_REGISTRY)
"""Name -> spec of every registered retriever (read-only; add with ``register``)."""

CUSTOM: RetrieverSpec[custom.CustomOptions] = custom.RETRIEVER
"""The spec of ``module:function`` retrievers, and of a function passed in Python."""


def register(spec: RetrieverSpec[Any], *, replace: bool = False) -> None:
    """Make ``spec.name`` a retriever ``build_retriever``, ``--retriever`` and pipeline.toml know."""
    name = spec.name
    if not isinstance(name, str) or not name or name != name.strip() or ":" in name:
        raise InputError(
            f"retriever name {name!r} cannot be registered",
            hint="use a non-empty name without spaces at its ends or a colon (module:function is taken)",
        )
    if name in _REGISTRY and not replace:
        raise InputError(f"a retriever named {name!r} is already registered", hint="pass replace=True")
    _REGISTRY[name] = spec


def unregister(name: str) -> None:
    """Forget a registered retriever (a test's toy one, say)."""
    _REGISTRY.pop(name, None)


def find_spec(name: str) -> RetrieverSpec[Any]:
    """The spec a name on the command line means: a registered name, or ``CUSTOM`` for module:function."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"no retriever given ({name!r}); choose from {choices()}")
    name = name.strip()
    spec = _REGISTRY.get(name)
    if spec is not None:
        return spec
    if ":" in name:
        return CUSTOM
    raise InputError(f"unknown retriever {name!r}; choose from {choices()}")


def build_retriever(
    name: str | SearchFunction | object,
    corpus: Corpus,
    *,
    options: Mapping[str, object] | object | None = None,
    settings: RunSettings | None = None,
    defaults: Mapping[str, object] | None = None,
) -> Retriever:
    """The retriever ``name`` means, over ``corpus``.

    ``name`` is a registered name (bm25, dense, local-dense, hybrid...), ``module:function``,
    ``path/to/file.py:function``, or in Python a function ``f(query, k)`` itself or a LangChain
    retriever or vector store or LlamaIndex retriever or index (see ``frameworks``). ``options`` is the
    retriever's options dataclass (``BM25Options(k1=1.2)``) or a mapping of its fields, values typed
    or as text (``{"k1": "1.2"}``, as ``--retriever-option`` gives them). ``settings`` says how the run
    calls it (cache folder, workers, query timeout, progress). ``defaults``: values of older specific
    flags, used only by a retriever that has such an option (see ``make_options``).
    """
    settings = settings if settings is not None else RunSettings()
    if not isinstance(name, str):  # a function, or a framework's object (its options: id_field)
        spec: RetrieverSpec[Any] = CUSTOM
        given = make_options(CUSTOM, cast("Mapping[str, object] | custom.CustomOptions | None", options))
        built: Any = dataclasses.replace(given, function=cast(Any, name))
    else:
        spec = find_spec(name)
        built = make_options(spec, options, defaults=defaults)
        if spec is CUSTOM:
            built = _with_function(built, name.strip())
    retriever = spec.build(corpus, built, settings)
    # Recorded by evaluate in results.json, so calibrate can tell whether two results share a retriever.
    # A framework's retriever fingerprints itself (its class and the framework's version, not its data).
    own = getattr(retriever, "fingerprint", None)
    fingerprint = own or retriever_fingerprint(spec, built)
    if own is None and spec is CUSTOM and isinstance(retriever, FunctionRetriever):
        # The function's code, not the path it was named by: a rewrite behind the same name is another
        # retriever, and the same file under another path the same one.
        fingerprint["options"] = {**fingerprint["options"], **custom.code_identity(retriever.function)}
    # A store's index: a rebuild (a new collection id, a new table version) is another retriever, as
    # an approximate index ranks two builds of the same vectors differently.
    index = getattr(retriever, "index", None)
    if index:
        fingerprint["index"] = dict(index)
    approximate = getattr(retriever, "approximate", None)
    if approximate:
        fingerprint["approximate"] = str(approximate)
    retriever.fingerprint = fingerprint  # type: ignore[attr-defined]
    # How to build it again elsewhere: the Ray engine builds one in each of its retrieval actors.
    retriever.recipe = RetrieverRecipe(  # type: ignore[attr-defined]
        name, corpus, options=built, settings=dataclasses.replace(settings, index_progress=None)
    )
    return retriever


@dataclass(frozen=True)
class RetrieverRecipe:
    """``build_retriever``'s arguments: how to build a retriever where it will search.

    Calling it builds the retriever. The Ray engine sends it to each retrieval actor, which builds
    its own (an index is built once per actor, never sent); ``settings.index_progress`` stays None.
    """

    name: str | SearchFunction | object
    corpus: Corpus
    options: Mapping[str, object] | object | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    defaults: Mapping[str, object] | None = None

    def __call__(self) -> Retriever:
        return build_retriever(
            self.name, self.corpus, options=self.options, settings=self.settings, defaults=self.defaults
        )


@dataclass(frozen=True)
class About:
    """What a built retriever reports of itself, as results.json records it."""

    name: str
    description: str
    fingerprint: Mapping[str, Any] | None
    approximate: str | None

    @classmethod
    def of(cls, retriever: object) -> About:
        own = getattr(retriever, "fingerprint", None)
        approximate = getattr(retriever, "approximate", None)
        return cls(
            str(getattr(retriever, "name", type(retriever).__name__)),
            str(getattr(retriever, "description", "")),
            own if isinstance(own, Mapping) else None,
            str(approximate) if approximate else None,
        )


class DeferredRetriever:
    """A retriever to be built where it searches: what ``load_inputs`` gives for the Ray engine.

    The engine builds it from ``recipe`` in each retrieval actor and records what the built one
    reports (``About``: name, description, fingerprint, approximate); searched or described before
    that (the local engine, say), it is built here, once. The options are checked when it is made.
    """

    def __init__(self, recipe: RetrieverRecipe) -> None:
        retriever_inputs(recipe.name, recipe.options, defaults=recipe.defaults)  # a bad option, now
        self.recipe = recipe
        self._built: Retriever | None = None
        self._about: About | None = None

    def built_as(self, about: About) -> None:
        """What the retriever built elsewhere reported of itself."""
        self._about = about

    @property
    def name(self) -> str:
        return self._reported().name

    @name.setter
    def name(self, value: str) -> None:
        self._about = dataclasses.replace(self._reported(), name=value)

    @property
    def description(self) -> str:
        return self._reported().description

    @description.setter
    def description(self, value: str) -> None:
        self._about = dataclasses.replace(self._reported(), description=value)

    @property
    def fingerprint(self) -> Mapping[str, Any] | None:
        return self._reported().fingerprint

    @property
    def approximate(self) -> str | None:
        return self._reported().approximate

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        return self._here().search(queries, k)

    def _reported(self) -> About:
        if self._about is None:
            self._about = About.of(self._here())
        return self._about

    def _here(self) -> Retriever:
        if self._built is None:
            self._built = self.recipe()
        return self._built


def retriever_inputs(
    name: str | SearchFunction | object,
    options: Mapping[str, object] | object | None = None,
    *,
    defaults: Mapping[str, object] | None = None,
) -> dict[str, Path]:
    """The files and folders the retriever ``name`` reads, by option name (``function`` for the source
    file of a ``module:function``): a local store's folder, a model folder, the user's own code.

    Takes what ``build_retriever`` takes and reads nothing but the options (a bad one is the same
    one-line error), so every command can check its outputs against these before any work.
    """
    if not isinstance(name, str):
        given = make_options(CUSTOM, cast("Mapping[str, object] | custom.CustomOptions | None", options))
        return CUSTOM.input_paths(dataclasses.replace(given, function=cast(Any, name)))
    spec = find_spec(name)
    built = make_options(spec, options, defaults=defaults)
    if spec is CUSTOM:
        built = _with_function(built, name.strip())
    return spec.input_paths(built)


def choices() -> str:
    """``bm25, dense, local-dense, hybrid, or module:function``: what ``--retriever`` takes."""
    return ", ".join([*_REGISTRY, f"or {CUSTOM.name}"])


def store_spec(name: str) -> RetrieverSpec[Any]:
    """The spec of a vector store (a registered retriever with an ``export``), as ``--from`` names it."""
    spec = _REGISTRY.get(name.strip()) if isinstance(name, str) else None
    if spec is None or spec.export is None:
        raise InputError(f"unknown store {name!r}; choose from {store_choices()}")
    return spec


def store_choices() -> str:
    """``chroma, lancedb, qdrant``: the registered retrievers that are vector stores."""
    return ", ".join(name for name, spec in _REGISTRY.items() if spec.export is not None)


def _with_function(options: custom.CustomOptions, target: str) -> custom.CustomOptions:
    if options.function is not None and options.function != target:
        raise InputError(
            f"custom retriever {target!r} was also given the option function={options.function!r}",
            hint="name the function once, in --retriever",
        )
    return dataclasses.replace(options, function=target)


def options_help() -> str:
    """What ``--retriever-option`` reaches, per retriever: ``bm25: k1, b, ...; dense: ...``."""
    parts = []
    for spec in _REGISTRY.values():
        rows = [row for row in option_rows(spec) if "Python only" not in row[1]]
        own = set(vars(spec.options).get("__annotations__", {}))
        names = [row[0] for row in rows if row[0] in own]
        inherited = "" if len(names) == len(rows) else " and its parts' options"
        parts.append(f"{spec.name}: {', '.join(names) or 'none'}{inherited}")
    return "; ".join(parts)

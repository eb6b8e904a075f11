"""How a retriever declares itself: a ``RetrieverSpec`` (name, options type, build function, summary).

Each retriever module defines a frozen dataclass of its own options, one field per knob, each with
one line of help in its annotation (``k1: Annotated[float, "term-frequency saturation"] = 0.9``),
and one ``RETRIEVER = RetrieverSpec(...)``; the registry maps the name to it. Everything else is
derived from the dataclass: ``make_options`` turns ``{"k1": "1.2"}`` (from ``--retriever-option
k1=1.2``, a pipeline.toml table or a Python dict) into ``BM25Options(k1=1.2)`` by the fields' types,
and the help text, the error messages and docs/retrievers.md list the fields.

``RunSettings`` holds what is not a retriever's option but a property of the run that calls it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, Protocol, TypeVar

from realrecall.errors import InputError, SettingError
from realrecall.evaluate.retrievers.base import check_timeout, library_version
from realrecall.settings import Settings, setting_fields

if typing.TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.evaluate.retrievers.base import Retriever

__all__ = [
    "QUERY_TIMEOUT",
    "REQUEST_TIMEOUT",
    "CorpusEmbeddings",
    "RetrieverSpec",
    "RunSettings",
    "StoreExport",
    "StoreExporter",
    "default_cache_dir",
    "make_options",
    "option_rows",
    "parse_option_assignments",
    "retriever_fingerprint",
]

Options = TypeVar("Options")
_Options_contra = TypeVar("_Options_contra", contravariant=True)


QUERY_TIMEOUT = 300.0
"""Seconds one query to a custom retriever (or a vector store, a LangChain or LlamaIndex object) may
take by default: generous for any real search, and a function that never returns ends the run in one
line instead of hanging a scheduled job."""

REQUEST_TIMEOUT = 60.0
"""Seconds one request to a server a retriever talks to (a vector store, an embeddings endpoint) may
take by default: a server that accepts and never answers must not hang a job."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/realrecall/embeddings``, or ``~/.cache/realrecall/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "realrecall" / "embeddings"


@dataclass(frozen=True, eq=False)
class CorpusEmbeddings:
    """A corpus's embeddings made elsewhere: the Ray engine embeds the corpus of ``local-dense`` in its
    actor pool and hands the rows to each retrieval actor, which then embeds only its queries.

    ``rows``: one raw (not yet normalised) float32 vector a chunk, in the order of ``ids``;
    ``embedder``: the name of the embedder that made them; ``query_embedder``: an ``Embedder`` of that
    name for the queries (the Ray engine's pool of embedding actors), used instead of loading the
    model again. Compared by identity (an array has no one truth value)."""

    embedder: str
    ids: tuple[str, ...]
    rows: Any
    query_embedder: Any = None


# Why a shared type beside each retriever's options: these settings say how this run calls a
# retriever (where embeddings are cached, how many threads call a custom function, how long a call may
# take, who hears about indexing progress). No ranking depends on them, every retriever that embeds or
# calls user code reads the same ones (hybrid passes them to both halves), and they keep their own
# flags (--cache-dir, --workers, --query-timeout, --request-timeout), so they are not repeated in every
# options type, and a timeout changed never changes a retriever's fingerprint.
# They are settings of the evaluate stage too (``EvaluateSettings.run_settings``, flattened), so the
# command line and pipeline.toml take them by these fields' names.
@dataclass(frozen=True, kw_only=True)
class RunSettings(Settings):
    """How this run calls the retriever; never changes a ranking.

    ``index_progress(done, total)``: called as a dense retriever embeds the corpus (Python only).
    ``corpus_embeddings``: the corpus's embeddings made elsewhere (Python only, the Ray engine's): a
    dense retriever whose embedder and corpus they match uses them instead of embedding the corpus.
    """

    cache_dir: Annotated[
        Path | None, "Embedding cache folder (default: $XDG_CACHE_HOME/realrecall/embeddings)."
    ] = None
    use_cache: Annotated[bool, "Read and write the embedding cache of dense retrievers."] = True
    workers: Annotated[int, "Threads calling a custom retriever function at once."] = 1
    query_timeout: Annotated[
        float | None,
        "Seconds a custom retriever (or a store) may take per query; a hung one ends the run in one line.",
    ] = QUERY_TIMEOUT
    request_timeout: Annotated[
        float,
        "Seconds a vector store's server or an embeddings endpoint may take to answer one request; a "
        "silent server ends the run in one line naming it.",
    ] = REQUEST_TIMEOUT
    index_progress: Callable[[int, int], None] | None = None
    corpus_embeddings: CorpusEmbeddings | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_timeout(self.query_timeout)
        if self.workers < 1:
            raise SettingError("workers", f"must be a whole number >= 1, got {self.workers!r}", hint="e.g. 4")
        check_timeout(self.request_timeout, setting="request_timeout")  # never None: no limit would hang

    @property
    def resolved_cache_dir(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()


@dataclass(frozen=True)
class StoreExport:
    """A store's records as corpus chunks: ``total`` (for a progress bar) and the records, paged."""

    total: int
    records: Iterator[dict[str, Any]]


class StoreExporter(Protocol[_Options_contra]):
    """Reads every record of a vector store as corpus chunks, ``page_size`` records a request, each
    request to a store's server answered within ``request_timeout`` seconds."""

    def __call__(
        self, options: _Options_contra, *, page_size: int, request_timeout: float = ...
    ) -> StoreExport: ...


@dataclass(frozen=True)
class RetrieverSpec(Generic[Options]):
    """One registry entry: the name, the options dataclass, ``build(corpus, options, settings)``.

    ``summary`` is one line for ``--help`` and the docs. ``libraries``: the distributions whose
    versions can change a ranking; with the name and the options they make the retriever's
    fingerprint, which calibrate compares before carrying a gap from one results file to another.
    ``inputs(options)``: the files and folders the retriever reads that are not ``Path`` options
    (those count already), by option name, e.g. a local store given as text; see ``input_paths``.
    ``export``: for a vector store, how ``realrecall corpus export --from NAME`` reads its records
    (with the same options); a retriever with one is a store wherever stores are listed.
    ``extra``: the optional extra that installs them (``pip install 'realrecall[chroma]'``), if any.
    """

    name: str
    options: type[Options]
    build: Callable[[Corpus, Options, RunSettings], Retriever]
    summary: str
    libraries: tuple[str, ...] = ()
    inputs: Callable[[Options], Mapping[str, Path | None]] | None = None
    export: StoreExporter[Options] | None = None
    extra: str | None = None

    def input_paths(self, options: Options) -> dict[str, Path]:
        """Every file and folder the retriever reads, by option name: each ``Path`` option given, and
        what ``inputs`` adds. Commands check their outputs against these before any work, so an
        output never lands on a store's files or the user's own retriever code."""
        paths = {
            item.name: value
            for item in dataclasses.fields(self.options)  # type: ignore[arg-type]
            if isinstance(value := getattr(options, item.name), Path)
        }
        if self.inputs is not None:
            paths.update({key: value for key, value in self.inputs(options).items() if value is not None})
        return paths

    def option_names(self) -> list[str]:
        return [item.name for item in dataclasses.fields(self.options)]  # type: ignore[arg-type]


def make_options(
    spec: RetrieverSpec[Options],
    given: Mapping[str, object] | Options | None = None,
    *,
    defaults: Mapping[str, object] | None = None,
    base: Path | None = None,
) -> Options:
    """The options of ``spec`` from an instance, or from a mapping of values or of strings to convert.

    ``defaults`` are values from older specific flags (``--embed-model``...): each is used only by a
    retriever that has such an option, only when not None and not given in ``given``. ``base``: the
    folder relative paths are read from (a config file's). Unknown keys and bad values are one-line
    InputErrors naming the retriever, the key and what it takes.
    """
    if isinstance(given, spec.options):
        return given
    if given is not None and not isinstance(given, Mapping):
        raise InputError(
            f"options of retriever {spec.name} must be a {spec.options.__name__} or a mapping, "
            f"got {type(given).__name__}"
        )
    values: dict[str, object] = dict(given or {})
    names = spec.option_names()
    for key in values:
        if key not in names:
            raise _unknown(spec, key, names)
    for key, value in (defaults or {}).items():
        if value is not None and key in names and key not in values:
            values[key] = value
    for item in dataclasses.fields(spec.options):  # type: ignore[arg-type]
        required = item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        if required and item.name not in values:
            raise InputError(
                f"retriever {spec.name} needs the option {item.name}", hint=f"give {item.name}=VALUE"
            )
    hints = typing.get_type_hints(spec.options)
    converted = {key: _convert(spec, key, value, hints[key], base) for key, value in values.items()}
    return spec.options(**converted)


def parse_option_assignments(values: Iterable[str], *, flag: str = "--retriever-option") -> dict[str, str]:
    """``["k1=1.2", "stemmer=none"]`` -> ``{"k1": "1.2", "stemmer": "none"}``; no key given twice."""
    parsed: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"{flag} {value!r} is not KEY=VALUE", hint=f"write e.g. {flag} k1=1.2")
        if key in parsed:
            raise InputError(f"{flag} {key} is given twice", hint="give each option once")
        parsed[key] = text.strip()
    return parsed


def option_rows(spec: RetrieverSpec[Any]) -> list[tuple[str, str, str, str]]:
    """``(name, type, default, help)`` of each option, as the docs and ``--help`` show them.

    The options type's own fields come first, then those it inherits (hybrid's from its components).
    """
    hints = typing.get_type_hints(spec.options, include_extras=True)
    own = set(vars(spec.options).get("__annotations__", {}))
    rows = []
    for item in sorted(dataclasses.fields(spec.options), key=lambda item: item.name not in own):
        hint = hints[item.name]
        extras = getattr(hint, "__metadata__", ())
        help_text = next((extra for extra in extras if isinstance(extra, str)), "")
        default = "(required)" if item.default is dataclasses.MISSING else _show(item.default)
        rows.append((item.name, _type_name(typing.get_args(hint)[0] if extras else hint), default, help_text))
    return rows


def _unknown(spec: RetrieverSpec[Any], key: str, names: list[str]) -> InputError:
    valid = ", ".join(names) if names else "none"
    hint: str | None
    # A run setting given as a retriever option is named with its own flag.
    settings = {item.name: item.option for item in setting_fields(RunSettings) if item.has_text_form}
    if key in settings:
        hint = f"{key} is a setting of the run, not a retriever option: use {settings[key]}"
    else:
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else None
    return InputError(f"retriever {spec.name} has no option {key!r} (its options: {valid})", hint=hint)


def _convert(spec: RetrieverSpec[Any], key: str, value: object, hint: object, base: Path | None) -> object:
    """``value`` as the field's type wants it: a string is parsed, a typed value is checked."""
    members = _members(hint)
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null")):
        if type(None) in members:
            return None
        if value is None:
            raise _bad(spec, key, value, hint)
    for member in members:
        converted = _as(member, value)
        if converted is not _NO:
            if isinstance(converted, Path) and base is not None and not converted.is_absolute():
                return base / converted.expanduser()
            return converted
    raise _bad(spec, key, value, hint)


class _Missing:
    pass


_NO = _Missing()
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _as(member: object, value: object) -> object:
    """``value`` as ``member`` (int, float, bool, str, Path, or a Python-only type), else ``_NO``."""
    text = value.strip() if isinstance(value, str) else None
    if member is bool:
        if isinstance(value, bool):
            return value
        if text is not None and text.lower() in (*_TRUE, *_FALSE):
            return text.lower() in _TRUE
        return _NO
    if member is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if text is not None:
            try:
                return int(text)
            except ValueError:
                return _NO
        return _NO
    if member is float:
        number: float
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif text is not None:
            try:
                number = float(text)
            except ValueError:
                return _NO
        else:
            return _NO
        return number if math.isfinite(number) else _NO
    if member is str:
        return value if isinstance(value, str) else _NO
    if member is Path:
        if isinstance(value, Path):
            return value
        return Path(text) if text else _NO
    if member is Any:
        return value if not isinstance(value, str) else _NO
    if member is type(None):
        return _NO
    # An object only Python can give (an embedder, a function): taken as is, never parsed from text.
    return value if not isinstance(value, str) else _NO


def _members(hint: object) -> tuple[object, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _bad(spec: RetrieverSpec[Any], key: str, value: object, hint: object) -> InputError:
    example = _example(hint)
    return InputError(
        f"retriever {spec.name} option {key} must be {_type_name(hint)}, got {value!r}",
        hint=f"e.g. {key}={example}" if example else f"give {key} in Python, as {spec.options.__name__}",
    )


_NAMES: dict[object, str] = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "text",
    Path: "a path",
    type(None): "none",
}
_PYTHON_ONLY = "a Python object (Python only)"


def _type_name(hint: object) -> str:
    names = list(dict.fromkeys(_NAMES.get(member, _PYTHON_ONLY) for member in _members(hint)))
    return " or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1]


def _example(hint: object) -> str | None:
    examples = {int: "10", float: "0.5", bool: "true", str: "text", Path: "path/to/folder"}
    for member in _members(hint):
        if member in examples:
            return examples[member]
    return None


def _show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def retriever_fingerprint(spec: RetrieverSpec[Options], options: Options) -> dict[str, Any]:
    """What makes a retriever's rankings what they are: its name, its options, its libraries' versions.

    Recorded in results.json; calibrate refuses to carry a gap measured with one fingerprint to
    results of another (a gap belongs to the retriever: it even changes sign between retrievers).
    Run settings (cache folder, workers, timeouts) are not in it: they never change a ranking.
    """
    values = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}  # type: ignore[arg-type]
    return {
        "name": spec.name,
        "options": {key: _plain(value) for key, value in sorted(values.items())},
        "versions": {library: library_version(library) for library in spec.libraries},
    }


def _plain(value: object) -> object:
    """An option value as JSON: numbers, text and None as they are, a function by its dotted name."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', repr(value))}"
    return str(value)

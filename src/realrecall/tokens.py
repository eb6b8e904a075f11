"""Token counts, one rule for the whole project: generate's dry run and the budgeted metrics use it.

tiktoken counts exactly when its encoding is in tiktoken's local cache (``TIKTOKEN_CACHE_DIR``,
``DATA_GYM_CACHE_DIR`` or ``<tmp>/data-gym-cache``); tiktoken otherwise downloads encodings, which this
tool never does at run time, so the fallback is OpenAI's rule of thumb of about four characters a
token (``ceil(len(text) / 4)``, at least 1). Every count says which method made it (``TokenCounter.method``),
and results.json records it (``token_method``): figures counted two ways are not compared silently.

- :func:`token_counter` counts for a model (the dry run prices the prompts a model will read);
- :func:`metric_token_counter` counts retrieved context for ``recall@Ntok`` and ``ndcg@Ntok`` with one
  fixed encoding (``METRIC_ENCODING``), whatever model a team uses, so budgets mean the same everywhere.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ESTIMATE_METHOD", "METRIC_ENCODING", "TokenCounter", "metric_token_counter", "token_counter"]

ESTIMATE_METHOD = "estimate: 4 characters a token"
"""The method name of the fallback count."""

METRIC_ENCODING = "cl100k_base"
"""The encoding the budgeted metrics count with when tiktoken has it cached."""


@dataclass(frozen=True)
class TokenCounter:
    """A token count (``count(text)``) and the name of the method behind it (``method``)."""

    count: Callable[[str], int]
    method: str


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one: ``max(1, ceil(len(text) / 4))``."""
    return max(1, (len(text) + 3) // 4)


def token_counter(model: str) -> tuple[Callable[[str], int], str]:
    """A function counting the tokens of a text for ``model``, and the name of the method used."""
    try:
        import tiktoken.model

        counter = _tiktoken_counter(tiktoken.model.encoding_name_for_model(model))
    except (ImportError, KeyError, ValueError, OSError):
        counter = None  # not installed, unknown model, or an unreadable cache: fall back
    if counter is None:
        return estimate_tokens, ESTIMATE_METHOD
    return counter.count, counter.method


def metric_token_counter() -> TokenCounter:
    """The counter of the budgeted metrics: tiktoken ``METRIC_ENCODING`` when cached, else the estimate."""
    try:
        counter = _tiktoken_counter(METRIC_ENCODING)
    except (ImportError, KeyError, ValueError, OSError):
        counter = None
    return counter if counter is not None else TokenCounter(estimate_tokens, ESTIMATE_METHOD)


def _tiktoken_counter(name: str) -> TokenCounter | None:
    """tiktoken's count for encoding ``name`` when it loads without downloading, else None."""
    if not _encoding_cached(name):
        return None
    import tiktoken

    encoding = tiktoken.get_encoding(name)
    return TokenCounter(lambda text: len(encoding.encode(text, disallowed_special=())), f"tiktoken {name}")


def _encoding_cached(name: str) -> bool:
    """Whether tiktoken can load encoding ``name`` from its local cache, i.e. without downloading.

    tiktoken caches each file it downloads under ``sha1(url)`` in ``TIKTOKEN_CACHE_DIR`` (or
    ``DATA_GYM_CACHE_DIR``, or ``<tmp>/data-gym-cache``); the URLs are read from the encoding's own
    constructor, so no address is written here.
    """
    import inspect
    import tempfile

    from tiktoken_ext import openai_public

    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        return False
    urls = re.findall(r"\"(https?://[^\"]+)\"", inspect.getsource(constructor))
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    folder = folder or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return bool(urls) and all(
        os.path.isfile(os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())) for url in urls
    )

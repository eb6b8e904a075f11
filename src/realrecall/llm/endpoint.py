"""Which endpoint to talk to, with which key, and the one place an SDK client is made.

The key is read from the environment when a client is made and lives only inside the SDK client
and the ``Endpoint`` (whose repr hides it). A local server (loopback address) needs no key: a
placeholder is sent, because the SDK refuses to start without one.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from realrecall.errors import InputError
from realrecall.llm.types import BASE_URL_HINT, ChatResult, LLMConfig, base_url_problem

if TYPE_CHECKING:
    import openai

__all__ = [
    "PLACEHOLDER_KEY",
    "Endpoint",
    "is_loopback",
    "open_sdk_client",
    "redact",
    "redact_result",
    "resolve_endpoint",
]

PLACEHOLDER_KEY = "sk-local-placeholder"

# Shortest key worth redacting piecewise: real keys are far longer, and a short one would blank out words.
_MIN_SECRET = 8


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    api_key: str = field(repr=False)
    timeout: float

    @property
    def name(self) -> str:
        """The endpoint as an error names it: its base URL, or the SDK's default (OpenAI's API)."""
        return self.base_url or "the OpenAI API"


def is_loopback(url: str) -> bool:
    """True when ``url`` names this machine (localhost, 127.0.0.0/8 or ::1)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_endpoint(config: LLMConfig) -> Endpoint:
    """Base URL and key for ``config``: InputError when the URL is unusable or a needed key is missing."""
    base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
    problem = None if base_url is None else base_url_problem(base_url)
    if problem is not None:
        raise InputError(f"base_url {base_url!r} {problem}", hint=BASE_URL_HINT)
    api_key = os.environ.get(config.api_key_env, "").strip()
    if not api_key:
        if base_url is None or not is_loopback(base_url):
            raise InputError(
                f"the environment variable {config.api_key_env} is not set",
                hint="export your API key in it, or point base_url at a local server",
            )
        api_key = PLACEHOLDER_KEY
    return Endpoint(base_url=base_url, api_key=api_key, timeout=config.timeout)


def open_sdk_client(endpoint: Endpoint) -> openai.AsyncOpenAI:
    """An AsyncOpenAI that never retries by itself: tenacity owns retries, or attempts would multiply."""
    import openai  # here, not above: resolving an endpoint (DeferredChatClient) loads no SDK

    return openai.AsyncOpenAI(
        api_key=endpoint.api_key,
        base_url=endpoint.base_url,
        timeout=endpoint.timeout,
        max_retries=0,
    )


def redact(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` (and of its long pieces) replaced by ``[redacted]``."""
    if not secret or secret == PLACEHOLDER_KEY or not text:
        return text
    if len(secret) < _MIN_SECRET:
        # A key of a few characters ('x', 'none', a local server's dummy) is a word: blanking it
        # inside other words would wreck every answer, so it goes only where it stands alone.
        alone = rf"(?<![A-Za-z0-9_\-]){re.escape(secret)}(?![A-Za-z0-9_\-])"
        return re.sub(r"(\[redacted\])+", "[redacted]", re.sub(alone, "[redacted]", text))
    text = text.replace(secret, "[redacted]")
    if len(secret) >= 2 * _MIN_SECRET and _shares_a_piece(text, secret):
        # Servers echo keys half-masked ("sk-abc1****wxyz"): blank any long run copied from the key.
        for size in range(len(secret) - 1, _MIN_SECRET - 1, -1):
            for start in range(0, len(secret) - size + 1):
                piece = secret[start : start + size]
                if piece in text:
                    text = text.replace(piece, "[redacted]")
    return re.sub(r"(\[redacted\])+", "[redacted]", text)


def redact_result(result: ChatResult, secret: str) -> ChatResult:
    """``result`` with the key blanked out of everything the endpoint wrote (answer, refusal, model name).

    An endpoint that echoes the key inside an answer must not get it into the cache, the gold set or
    a summary: every answer passes here before anyone stores it.
    """
    return replace(
        result,
        text=redact(result.text, secret),
        refusal=None if result.refusal is None else redact(result.refusal, secret),
        model=redact(result.model, secret),
        finish_reason=redact(result.finish_reason, secret),
    )


@functools.lru_cache(maxsize=8)
def _pieces(secret: str) -> frozenset[str]:
    return frozenset(secret[start : start + _MIN_SECRET] for start in range(len(secret) - _MIN_SECRET + 1))


def _shares_a_piece(text: str, secret: str) -> bool:
    """Whether ``text`` holds any ``_MIN_SECRET``-long run of ``secret``: one pass over the text, so
    the slow piecewise scan above runs only for the rare answer that echoes part of the key."""
    pieces = _pieces(secret)
    return any(text[start : start + _MIN_SECRET] in pieces for start in range(len(text) - _MIN_SECRET + 1))

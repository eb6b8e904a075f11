"""Normal forms used to match what users wrote against what the corpus holds.

Two spellings of the same question, URL or page title should meet: case, Unicode forms, repeated
spaces and (for URLs) scheme, ``www.``, trailing slashes and tracking parameters do not make a
different passage or a different question.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["normalise_question", "normalise_title", "normalise_url", "stable_query_id"]

_SPACE = re.compile(r"\s+")
_PUNCTUATION = re.compile(r"[^\w\s]")
# Parameters added by analytics and mail tools; they never change which page a link names.
_TRACKING = re.compile(r"^(utm_\w+|gclid|fbclid|mc_cid|mc_eid|ref|source)$", re.IGNORECASE)


def normalise_question(text: str) -> str:
    """Case-folded NFKC text with single spaces, trimmed: what decides that two questions are one."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def normalise_title(text: str) -> str:
    """A question's normal form, also without punctuation (``Sync > Conflicts`` == ``sync conflicts``)."""
    return _SPACE.sub(" ", _PUNCTUATION.sub(" ", normalise_question(text))).strip()


def normalise_url(url: str) -> str:
    """A URL without scheme, ``www.``, default port, trailing slash, tracking parameters or case in the host.

    The fragment is kept: ``page#install`` and ``page#upgrade`` are often different chunks.
    """
    text = url.strip()
    if not text:
        return ""
    parts = urlsplit(text if "://" in text else f"//{text}")
    host = (parts.hostname or "").lower().removeprefix("www.")
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    for suffix in ("/index.html", "/index.htm"):
        path = path.removesuffix(suffix)
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query) if not _TRACKING.match(k)))
    return urlunsplit(("", host, path, query, parts.fragment)).removeprefix("//")


def stable_query_id(question: str) -> str:
    """``q-`` and 12 hex digits of the SHA-256 of the normalised question: same question, same id."""
    return "q-" + hashlib.sha256(normalise_question(question).encode()).hexdigest()[:12]

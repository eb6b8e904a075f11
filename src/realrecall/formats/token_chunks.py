"""Chunks of a whitespace-separated file as C-level ``str.split`` tokens: the fast TREC readers' loop.

Each line end becomes a NUL token, so one ``str.split`` of a chunk yields ``fields + 1`` tokens a line,
and a line with a field more or less shows up as a misplaced NUL. A chunk the exact reader must see
(bytes that are not UTF-8, a NUL or ``#`` in the text, a character Python splits on but trec_eval does
not, a line of another length) is ``None``: the caller stops and hands the file to its exact reader.

trec_eval splits fields on C whitespace (``isspace``: space, tab, CR, LF, VT, FF) only; ``c_split``
is that split for the exact readers.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import BinaryIO

# Small chunks keep the freshly made strings in the CPU cache: 4 MB chunks read a run 3x slower.
CHUNK_BYTES = 1 << 15

__all__ = ["CHUNK_BYTES", "c_split", "has_non_c_space", "token_chunks"]

# Characters Python's str.split() treats as whitespace but C's isspace() does not.
_NON_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_SPACE = re.compile("[ \t\n\v\f\r]+")


def c_split(line: str) -> list[str]:
    """Fields of a line split on C whitespace only, as trec_eval splits them."""
    stripped = line.strip(" \t\n\v\f\r")
    return _C_SPACE.split(stripped) if stripped else []


def has_non_c_space(text: str) -> bool:
    """True when ``str.split`` would split ``text`` somewhere trec_eval does not."""
    if text.isascii():
        return any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _NON_C_SPACE.search(text) is not None


def token_chunks(handle: BinaryIO, fields: int) -> Iterator[tuple[str, list[str], int] | None]:
    """Per chunk of whole lines: its text, its tokens (``fields`` a line, then a NUL) and its line count.

    Yields None, and nothing after it, for a chunk the fast path cannot take exactly.
    """
    first = True
    width = fields + 1
    while chunk := handle.readlines(CHUNK_BYTES):
        data = b"".join(chunk)
        if first and data.startswith(codecs.BOM_UTF8):
            data = data[3:]
        first = False
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            yield None
            return
        if "\0" in text or "#" in text or has_non_c_space(text):
            yield None
            return
        if not text.endswith("\n"):
            text += "\n"
        tokens = text.replace("\n", " \0 ").split()
        lines = len(tokens) // width
        if len(tokens) != width * lines or tokens[fields::width].count("\0") != lines:
            yield None
            return
        yield text, tokens, lines

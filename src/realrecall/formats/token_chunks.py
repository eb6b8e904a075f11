"""Chunks of a whitespace-separated file as C-level ``str.split`` tokens: the fast TREC readers' loop.

Each line end becomes a NUL token, so one ``str.split`` of a chunk yields each line's fields and a NUL,
and a line with a field more or less than the others shows up as a misplaced NUL. Lines trec_eval
skips (blank, or a first field starting with ``#``: a comment) are dropped first; a ``#`` anywhere
else is part of an id (segment ids such as ``msmarco_v2.1_doc_00_0#1_100``), as it is to trec_eval.
Fields after those trec_eval reads are ignored, when every line of the chunk has as many. A chunk the
exact reader must see (bytes that are not UTF-8, a NUL, a character Python splits on but trec_eval
does not, a line short of fields, lines of different lengths) is ``None``: the caller stops and hands
the file to its exact reader.

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

__all__ = ["CHUNK_BYTES", "C_SPACE", "C_SPACE_BUT_LF", "c_split", "has_non_c_space", "token_chunks"]

C_SPACE = " \t\n\v\f\r"
"""C's isspace(), what trec_eval splits fields on: space, tab, LF, VT, FF, CR."""
C_SPACE_BUT_LF = C_SPACE.replace("\n", "")
"""The whitespace within a line (LF alone ends one, for trec_eval)."""

# Characters Python's str.split() treats as whitespace but C's isspace() does not.
_NON_C_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_SPACE_RUN = re.compile(f"[{C_SPACE}]+")


def c_split(line: str) -> list[str]:
    """Fields of a line split on C whitespace only, as trec_eval splits them."""
    stripped = line.strip(C_SPACE)
    return _C_SPACE_RUN.split(stripped) if stripped else []


def has_non_c_space(text: str) -> bool:
    """True when ``str.split`` would split ``text`` somewhere trec_eval does not."""
    if text.isascii():
        return any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _NON_C_SPACE.search(text) is not None


def token_chunks(handle: BinaryIO, fields: int) -> Iterator[tuple[str, list[str], int] | None]:
    """Per chunk of whole lines: its text, its tokens (each line's fields, then a NUL) and the tokens a
    line takes (its width). Every line of a chunk has ``width - 1`` fields, at least ``fields``: the
    fields after those trec_eval reads are ignored by it, and sliced past by the callers.

    Yields None, and nothing after it, for a chunk the fast path cannot take exactly.
    """
    first = True
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
        if "\0" in text or has_non_c_space(text):
            yield None
            return
        if not text.endswith("\n"):
            text += "\n"
        aligned = _aligned_tokens(text, fields)
        if aligned is None or ("#" in text and _comment_among(aligned[0][0 :: aligned[1]])):
            # A blank or comment line (rare: a header, say): drop the lines trec_eval skips, split again.
            text = _kept_lines(text)
            aligned = _aligned_tokens(text, fields)
            if aligned is None:
                yield None
                return
        tokens, width = aligned
        if tokens:
            yield text, tokens, width


def _aligned_tokens(text: str, fields: int) -> tuple[list[str], int] | None:
    """The tokens of ``text`` (its lines, each ended by a NUL token) and the tokens a line takes, or
    None unless every line has the same number of fields, at least ``fields``. The NULs then sit
    exactly at every ``width``-th place, and nowhere else (a blank line before a line a field short
    would otherwise pass for one line)."""
    tokens = text.replace("\n", " \0 ").split()
    lines = text.count("\n")
    if not lines:
        return tokens, fields + 1
    width, rest = divmod(len(tokens), lines)
    if rest or width <= fields or tokens[width - 1 :: width].count("\0") != lines:
        return None
    return tokens, width


def _comment_among(first_fields: list[str]) -> bool:
    # The join is a C-level look for any "#" (ids may hold one, as segment ids do); the loop, only then.
    return "#" in "".join(first_fields) and any(field[0] == "#" for field in first_fields)


def _kept_lines(text: str) -> str:
    """``text`` without the lines trec_eval skips: blank ones, and those whose first field starts with
    ``#`` (comments)."""
    kept = [line for line in text.split("\n") if line.lstrip(C_SPACE_BUT_LF)[:1] not in ("", "#")]
    return "".join(line + "\n" for line in kept)

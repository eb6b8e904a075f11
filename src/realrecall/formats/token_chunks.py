"""Chunks of a whitespace-separated file as C-level ``str.split`` tokens: the fast TREC readers' loop.

Each line end becomes a NUL token, so one ``str.split`` of a chunk yields ``fields + 1`` tokens a line,
and a line with a field more or less shows up as a misplaced NUL. A chunk the exact reader must see
(bytes that are not UTF-8, a NUL or ``#`` in the text, a line of another length, or whatever
``declines`` says) is ``None``: the caller stops and hands the file to its exact reader.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from typing import BinaryIO

# Small chunks keep the freshly made strings in the CPU cache: 4 MB chunks read a run 3x slower.
CHUNK_BYTES = 1 << 15

__all__ = ["CHUNK_BYTES", "token_chunks"]


def token_chunks(
    handle: BinaryIO, fields: int, *, declines: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, list[str], int] | None]:
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
        if "\0" in text or "#" in text or (declines is not None and declines(text)):
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

"""Ids as every format spells them: a non-empty string, or an integer read as its text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from realrecall.errors import InputError

__all__ = ["parse_id", "text_id"]


def parse_id(
    value: Any,
    what: str,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    hint: str = 'write ids as non-empty strings, e.g. "doc1-chunk3"',
) -> str:
    """An id as text: a string with something besides spaces in it, or an integer (``7`` -> ``"7"``).

    An empty id (``""``, ``"  "``) matches nothing a user can name and a float id (``1.5``, ``1e3``)
    has no single text form, so both are refused naming the file, the line and the fix.
    """
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    got = "an empty string" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
    raise InputError(
        f"{what} must be a non-empty string, got {got}",
        path=path,
        line=line,
        hint=hint,
    )


def text_id(value: Any, what: str, path: Path, line: int, *, example: str = '"doc1-chunk3"') -> str:
    """``parse_id`` with a hint naming an example id of the right kind (a passage's or a query's)."""
    return parse_id(value, what, path=path, line=line, hint=f"write ids as non-empty strings, e.g. {example}")

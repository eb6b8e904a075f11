"""Text from data made safe to show: control characters written as escapes, never sent raw.

A query, a passage, a slice value or a file name comes from a user's files or an endpoint. Printed raw,
an ESC sequence in it recolours or clears the terminal, retitles the window or fakes output; ``\\r``
overwrites the line; ``\\x07`` rings the bell; a bidi control (U+202E) shows the text around it in
another order than it is stored. Every renderer passes data through :func:`printable` (terminal
tables and text, Markdown, HTML, error lines), and JSON output through :func:`printable_json`.

Escaped: the C0 controls but newline and tab (which lay text out), DEL and the C1 controls (U+0080 to
U+009F: 8-bit terminals read U+009B as an escape sequence), the line and paragraph separators
(U+2028, U+2029) and the bidi controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069).
They are written as Python writes them in a string (``\\x1b``, ``\\r``, ``\\u202e``). Other format
characters (the zero-width joiners of emoji and Persian, the soft hyphen) are text and stay.
"""

from __future__ import annotations

import re

__all__ = ["UNPRINTABLE", "printable", "printable_json"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_ESCAPED = (
    *(code for code in range(0x20) if chr(code) not in "\n\t"),
    *range(0x7F, 0xA0),
    0x2028,
    0x2029,
    *_BIDI,
)
_NAMED = {0x0D: "\\r", 0x0B: "\\x0b", 0x0C: "\\x0c"}

UNPRINTABLE = re.compile("[" + "".join(f"\\u{code:04x}" for code in _ESCAPED) + "]")
"""A pattern finding any character :func:`printable` escapes (tests scan output with it)."""

_TEXT_TABLE = {
    code: _NAMED.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") for code in _ESCAPED
}
# Inside a JSON string the same characters become JSON escapes, so the value reads back unchanged.
# json.dumps already escapes the C0 controls; DEL, C1, the separators and bidi controls pass raw.
_JSON_TABLE = {code: f"\\u{code:04x}" for code in _ESCAPED}


def printable(text: str) -> str:
    """``text`` with every control character (see the module doc) written as its escape."""
    if UNPRINTABLE.search(text) is None:  # the usual case: no copy
        return text
    return text.translate(_TEXT_TABLE)


def printable_json(text: str) -> str:
    """JSON text (from ``json.dumps``) with the control characters its strings hold as ``\\uXXXX``.

    These characters can stand only inside strings (JSON's own whitespace is space, tab, newline and
    carriage return, which ``json.dumps`` never writes raw in a string), so the text parses to the same
    value.
    """
    if UNPRINTABLE.search(text) is None:
        return text
    return text.translate(_JSON_TABLE)

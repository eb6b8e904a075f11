"""Text from data made safe to show: control characters written as escapes, never sent raw.

A query, a passage, a slice value or a file name comes from a user's files or an endpoint. Printed raw,
an ESC sequence in it recolours or clears the terminal, retitles the window or fakes output; ``\\r``
overwrites the line; ``\\x07`` rings the bell; a bidi control (U+202E) shows the text around it in
another order than it is stored. Every renderer passes its text through :func:`printable` (terminal
tables and text, Markdown, HTML, JSON, error lines), and the CLI passes everything it writes.

Escaped: the C0 controls but newline and tab (which lay text out), DEL and the C1 controls (U+0080 to
U+009F: 8-bit terminals read U+009B as an escape sequence), the line and paragraph separators
(U+2028, U+2029) and the bidi controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069).
Other format characters (the zero-width joiners of emoji and Persian, the soft hyphen) are text.

A C0 control is written as Python writes it (``\\x1b``, ``\\r``), every other as ``\\u007f``,
``\\u202e``. So the escaping holds for JSON too: ``json.dumps`` writes no C0 control raw, and the others
become JSON's own escapes, which read back as the same value.
"""

from __future__ import annotations

import re

__all__ = ["UNPRINTABLE", "printable"]

_ESCAPED = (
    *(code for code in range(0x20) if chr(code) not in "\n\t"),
    *range(0x7F, 0xA0),
    0x2028,
    0x2029,
    0x061C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)

UNPRINTABLE = re.compile("[" + "".join(f"\\u{code:04x}" for code in _ESCAPED) + "]")
"""A pattern finding any character :func:`printable` escapes (tests scan output with it)."""

_TABLE = {
    code: "\\r" if code == 0x0D else f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"
    for code in _ESCAPED
}


def printable(text: str) -> str:
    """``text`` with every control character (see the module doc) written as its escape."""
    if UNPRINTABLE.search(text) is None:  # the usual case: no copy
        return text
    return text.translate(_TABLE)

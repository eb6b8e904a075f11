"""The frame every HTML report shares: one self-contained page (inline CSS, no script), and tables.

Every string from data is escaped here or by the caller: text from files and endpoints never becomes
markup. Control characters in it are shown as escapes (``realrecall.printable``): a browser shows a
bidi control as reordered text, and the file may be read in a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from realrecall.printable import printable

__all__ = ["CSS", "page", "table"]

CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1180px; color: #1b1b1b;
       padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.45rem; margin: 0 0 .4rem; }
.headline { font-size: 1.25rem; font-weight: 600; background: #f1f6fd; border-left: 5px solid #1c7ed6;
            padding: .8rem 1rem; margin: 0 0 1rem; }
.warning { color: #8a5300; background: #fff6e0; padding: .3rem .6rem; margin: .2rem 0; }
.gate-failed { color: #b00020; font-weight: 600; }
.gate-passed { color: #2b7a0b; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.charts figure { margin: 0; border: 1px solid #e3e3e3; padding: .5rem; background: #fff; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-size: .9rem; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .25rem .6rem; text-align: right; white-space: nowrap; }
table.slices td:last-child { white-space: normal; text-align: left; color: #666; }
th:first-child, td:first-child { text-align: left; }
tr.empty td { color: #999; }
.note { color: #666; font-size: .85rem; }
"""


def page(title: str, body: Sequence[str]) -> str:
    """One HTML document titled ``title`` (escaped here) around ``body``, parts already markup; its
    control characters written as escapes."""
    head = escape(title)
    return printable(
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{head}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], empty: Sequence[bool] = (), css_class: str = ""
) -> str:
    """An HTML table; every header and cell is escaped. ``empty`` greys out the rows marked True."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    lines = []
    for i, row in enumerate(rows):
        css = ' class="empty"' if i < len(empty) and empty[i] else ""
        lines.append(f"<tr{css}>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
    css = f' class="{css_class}"' if css_class else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"

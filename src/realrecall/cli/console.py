"""The rich console every command prints through, which shows text from data with its control
characters escaped (see ``realrecall.printable``).

Commands print queries, passages, slice values, file names and error messages inside ``Text`` objects,
tables and groups; escaping them one call at a time would leave the next new call raw. The console
escapes what it is given before laying it out, so a table's columns are measured on the text as it is
shown: strings, ``Text`` (its styles kept on the same characters), tables (title, caption, headers,
cells), groups and rules. A renderable of any other kind has the text of its segments escaped as it is
drawn. Rich's own output (colours, cursor moves of a progress bar) is not text and is left alone.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.control import Control
from rich.segment import Segment
from rich.text import Span, Text

from realrecall.printable import UNPRINTABLE, printable

__all__ = ["DataConsole", "escaped"]


class DataConsole(Console):
    """A ``Console`` whose ``print`` (and so ``rule``) shows control characters in data as escapes."""

    def print(self, *objects: Any, **options: Any) -> None:
        super().print(*(escaped(o) for o in objects), **options)


def escaped(renderable: Any) -> Any:
    """``renderable`` with the control characters of its text escaped (a copy; the original is kept)."""
    if isinstance(renderable, str):
        return printable(renderable)
    if isinstance(renderable, Text):
        return _escaped_text(renderable)
    if isinstance(renderable, Group):
        return Group(*(escaped(r) for r in renderable.renderables), fit=renderable.fit)
    # Imported here: most commands print only text, and rich.table costs start-up time (decimal,
    # fractions); whoever made a table has imported it already.
    from rich.rule import Rule
    from rich.table import Table

    if isinstance(renderable, Table):
        return _escaped_table(renderable)
    if isinstance(renderable, Rule):
        rule = copy.copy(renderable)
        rule.title = escaped(renderable.title)
        return rule
    if isinstance(renderable, Control) or not hasattr(renderable, "__rich_console__"):
        return renderable
    return _EscapedSegments(renderable)


def _escaped_text(text: Text) -> Text:
    plain = text.plain
    if UNPRINTABLE.search(plain) is None:
        return text
    # Where each character of the original starts in the escaped text, so every style stays on the
    # characters it covered.
    starts = [0]
    for character in plain:
        starts.append(starts[-1] + len(printable(character)))
    shown = text.blank_copy(printable(plain))
    shown.spans = [
        Span(starts[min(s.start, len(plain))], starts[min(s.end, len(plain))], s.style) for s in text.spans
    ]
    return shown


def _escaped_table(table: Any) -> Any:
    shown = copy.copy(table)
    shown.title = None if table.title is None else escaped(table.title)
    shown.caption = None if table.caption is None else escaped(table.caption)
    # Column is a dataclass whose cells are its ``_cells`` field; replace() copies it with new ones.
    shown.columns = [
        dataclasses.replace(
            column,
            header=escaped(column.header),
            footer=escaped(column.footer),
            _cells=[escaped(cell) for cell in column.cells],
        )
        for column in table.columns
    ]
    return shown


class _EscapedSegments:
    """Another kind of renderable: its text segments escaped as drawn (laid out on the raw text)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control:
                yield segment
            else:
                yield Segment(printable(segment.text), segment.style)


def plain(value: str, style: str = "") -> Text:
    """Text from data as a ``Text``, its control characters escaped first.

    Escaped here, not only by the console: ``Text`` itself drops ``\\r``, ``\\x07``, ``\\b``, ``\\v`` and
    ``\\f`` without a trace, so a query holding them would be shown as another text.
    """
    return Text(printable(value), style=style)

"""Chunk screening: skip the chunks no user would ask about, before any question is asked for them.

A question written for a chunk that holds only code, template tags, a list of links or a navigation
bar is a question no user types ("what does `{% Tab label="python" %}` do?"), and it counts in every
figure like a real one. The rules below read the chunk's lines; a chunk is skipped when it has too
little prose, and the reason names what it holds instead:

- every line is one of: ``code`` (inside a fenced block, a fence line, indented by four spaces or a
  tab, or before the closing fence of a block opened in the previous chunk), ``template`` (a line
  made only of tags: ``{% ... %}``, ``{{ ... }}``, ``<...>``), ``link`` (a line that is links and at
  most two other words), ``heading`` (``#``), ``short`` (text of at most ``SHORT_LINE_WORDS`` words:
  menus, breadcrumbs, labels) or ``text``;
- prose is the words of paragraphs of text lines (links read as their text, inline code as words)
  with at least ``MIN_SENTENCE_WORDS`` words;
- ``too_short``: fewer than ``MIN_CHUNK_WORDS`` words (numbers included) in the whole chunk;
- otherwise, with fewer than ``MIN_PROSE_WORDS`` words of prose and more lines of code, tags, links
  and short text than of text, the chunk is skipped for what most of its lines are: ``code_only``,
  ``template_tags``, ``link_list`` or ``navigation`` (``MIN_MENU_LINES`` short lines or more). A
  short chunk of plain prose (one sentence) is kept: it is a fact a user may ask about.

The rules are on by default and ``--no-screen`` turns them off. ``--screen`` adds a model screen
(``generate.model_screen``) after them. Every skipped chunk is counted by reason in the summary, never
dropped silently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from realrecall.corpus import Chunk

__all__ = [
    "MIN_CHUNK_WORDS",
    "MIN_PROSE_WORDS",
    "REASONS",
    "line_kinds",
    "looks_like_code",
    "prose_paragraphs",
    "prose_text",
    "prose_words",
    "screen_chunks",
    "screen_reason",
]

# Why a chunk was skipped, as the summary and the docs say it.
REASONS: Mapping[str, str] = {
    "too_short": "too few words to ask about",
    "code_only": "code and no prose",
    "template_tags": "template tags and no prose",
    "link_list": "a list of links",
    "navigation": "short lines only (a menu, breadcrumbs, labels)",
    "model_screen": "the model screen found nothing a user would ask about",
    "language_undetermined": "its language could not be told (see --languages)",
    "language_not_requested": "written in a language --languages does not ask for",
}

MIN_CHUNK_WORDS = 3
MIN_PROSE_WORDS = 12
MIN_SENTENCE_WORDS = 5
SHORT_LINE_WORDS = 4
MIN_MENU_LINES = 3

_FENCE = re.compile(r"^\s*(```|~~~)")
# A line of code outside a fence: a statement, an assignment, a call, a bracket, a shell prompt.
_CODE_LINE = re.compile(
    r"^\s*(?:import\s|from\s+\S+\s+import\s|const\s|let\s|var\s|def\s|class\s|return\b|await\s|"
    r"async\s|//|/\*|\*/|\$\s|>>>\s|pip\s|npm\s|docker\s|curl\s|export\s|[\w.\[\]'\"]+\s*[:+-]?=[^=]|"
    r"[\w.]+\(.*\)\s*;?\s*$|[\w.]+\($|[}\])]|[{\[]\s*$|\S+\s*[:=]\s*[\[{(]\s*$)"
)
_SYMBOLS = frozenset("{}[]()=;<>\"'$_.,:/\\|")
_INDENTED = re.compile(r"^(    |\t)\S")
_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|<[^<>\n]+>")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)|\bhttps?://\S+|\bwww\.\S+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•|]|\d+[.)])\s*")
_WORD = re.compile(r"[^\W\d_][\w'-]*")


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def line_kinds(text: str) -> list[tuple[str, str]]:
    """``(kind, line)`` for every line of ``text`` (kinds: see module doc; ``blank`` too)."""
    lines = _dedent(text.splitlines())
    fences = [line.strip() for line in lines if _FENCE.match(line)]
    # A chunk cut from a page may start inside a code block: its first fence is then a bare closer,
    # told by an odd number of fences or by the next fence naming a language (an opener).
    bare = ("```", "~~~")
    inside = bool(fences) and fences[0] in bare and (len(fences) % 2 == 1 or fences[1:2] != ["```"])
    kinds: list[tuple[str, str]] = []
    for line in lines:
        if _FENCE.match(line):
            kinds.append(("code", line))
            inside = line.strip() not in bare or not inside  # a fence naming a language always opens
        elif inside or _INDENTED.match(line):
            kinds.append(("code", line))
        elif not any(character.isalpha() for character in line):
            kinds.append(("blank", line))  # blank, or decoration: a rule, a table separator, a brace
        elif looks_like_code(line):
            kinds.append(("code", line))
        else:
            kinds.append((_text_kind(line), line))
    return kinds


def _dedent(lines: list[str]) -> list[str]:
    """Lines without the indentation they all share (pages copied from a browser are indented whole)."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def looks_like_code(line: str) -> bool:
    """Whether a line outside a fence reads as code (a statement, an assignment, a call, symbols)."""
    if line.lstrip().startswith("#"):
        return False  # a heading (or a comment: neither is prose)
    if _CODE_LINE.match(line):
        return True
    visible = [character for character in line if not character.isspace()]
    return sum(character in _SYMBOLS for character in visible) > 0.3 * len(visible)


def _text_kind(line: str) -> str:
    if line.lstrip().startswith("#"):
        return "heading"
    if line.count("|") >= 2:
        return "table"  # a row: content, but not prose (kept for a model, no sentence to cut)
    bare = _LIST_MARK.sub("", line).strip()
    if not _TAG.sub("", bare).strip():
        return "template"
    if _LINK.search(bare) and len(_words(_LINK.sub(" ", _TAG.sub(" ", bare)))) <= 2:
        return "link"
    if len(_words(_readable(line))) <= SHORT_LINE_WORDS:
        return "short"
    return "text"


def _readable(line: str) -> str:
    """A line as a reader takes it: links as their text, tags and list marks gone."""
    line = _LINK.sub(lambda match: match.group(1) or " ", line)
    return _TAG.sub(" ", _LIST_MARK.sub("", line))


def prose_paragraphs(text: str, min_words: int = MIN_SENTENCE_WORDS) -> list[str]:
    """The paragraphs of text lines of ``text`` with at least ``min_words`` words, as read (links as
    their text, tags and list marks gone, inline code without its backticks)."""
    found: list[str] = []
    paragraph: list[str] = []
    for kind, line in [*line_kinds(text), ("blank", "")]:
        if kind in ("text", "short"):
            paragraph.append(" ".join(_readable(line).replace("`", "").split()))
            continue
        joined = " ".join(part for part in paragraph if part)
        if len(_words(joined)) >= min_words:
            found.append(joined)
        paragraph = []
    return found


def prose_text(text: str) -> str:
    """The prose of ``text`` (``prose_paragraphs``), one paragraph a line."""
    return "\n".join(prose_paragraphs(text))


def prose_words(text: str) -> int:
    """Words of ``text`` in paragraphs of text lines with at least ``MIN_SENTENCE_WORDS`` words."""
    return sum(len(_words(paragraph)) for paragraph in prose_paragraphs(text))


_KIND_REASONS = {"code": "code_only", "template": "template_tags", "link": "link_list", "short": "navigation"}


def screen_reason(chunk: Chunk) -> str | None:
    """Why the rules skip ``chunk`` (a key of ``REASONS``), or None to keep it."""
    text = chunk.text
    if len(re.findall(r"\w+", text)) < MIN_CHUNK_WORDS:  # numbers count: "Desk 4 has a printer."
        return "too_short"
    if prose_words(text) >= MIN_PROSE_WORDS:
        return None
    kinds = Counter(kind for kind, _ in line_kinds(text))
    if kinds["short"] < MIN_MENU_LINES:  # a short line or two is a short text, not a menu
        kinds["text"] += kinds.pop("short", 0)
    counts = Counter({kind: kinds[kind] for kind in _KIND_REASONS if kinds[kind]})
    if sum(counts.values()) <= kinds["text"]:
        return None  # a short text, but plain prose (one sentence is a fact a user may ask about)
    # The most frequent kind; on a tie the first in _KIND_REASONS' order (code before links ...).
    kind = max(_KIND_REASONS, key=lambda name: counts[name])
    return _KIND_REASONS[kind]


def screen_chunks(chunks: Iterable[Chunk]) -> tuple[list[Chunk], dict[str, str]]:
    """The chunks the rules keep (in order) and ``{chunk id: reason}`` of those they skip."""
    kept: list[Chunk] = []
    skipped: dict[str, str] = {}
    for chunk in chunks:
        reason = screen_reason(chunk)
        if reason is None:
            kept.append(chunk)
        else:
            skipped[chunk.id] = reason
    return kept, skipped

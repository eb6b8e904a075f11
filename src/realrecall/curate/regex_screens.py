"""A quick test that a regular expression cannot match a text, from the literals every match holds.

``search`` with a pattern of many alternatives tries each of them at every position of the text:
the built-in troubleshooting rule took 16-24 us on a 50-character question, and classifying a
million distinct questions took 35 s. Most of its alternatives are words (``error``, ``can't log``,
``timed out``), so a match holds at least one of a set of strings; a text holding none of them
cannot match, and one ``search`` for those strings (plain literals, lower-cased) says so in a few us.

The strings are read off the pattern's parse tree (``re._parser``, the standard library's own
parser). Only what is certain is used: a run of literal characters, a class of listed characters,
every branch of an alternation, the body of a group or of a repeat that happens at least once.
Anything else (ranges, categories, anchors, lookarounds, backreferences, a parser the next Python
changes) gives no string, and a pattern with nothing certain is searched as it is. The screen is
applied to ASCII texts only: under ``IGNORECASE`` a few characters outside ASCII match ASCII letters
(the Kelvin sign matches ``k``), and lower-casing ASCII is exact.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["literal_screen", "screened_search"]

# The standard library's own parser: private (and untyped), so a Python without it gives no screen.
try:
    _sre: Any = importlib.import_module("re._constants")
    _sre_parse: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - every supported Python has them
    _sre = _sre_parse = None

_Needed = frozenset[str]  # one of these strings is in every match (lower-cased ASCII)


def literal_screen(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """A pattern of plain lower-case literals that finds something in the lower-cased text of every
    ASCII text ``pattern`` matches; None when no such literals are certain, or when ``pattern`` is
    anchored at the start and they are many (see ``_ANCHORED_SCREEN_STRINGS``)."""
    if _sre is None or not isinstance(pattern.pattern, str):
        return None
    try:
        tree = _sre_parse.parse(pattern.pattern, pattern.flags)
        candidates = _candidates(tree)
        if _anchored(list(tree), tree.state.flags):
            candidates = [strings for strings in candidates if len(strings) <= _ANCHORED_SCREEN_STRINGS]
    except Exception:  # a parser we do not know: the pattern is searched as it is
        return None
    needed = _best(candidates)
    if needed is None:
        return None
    # Longest first: the alternation stops at the first literal found at a position.
    ordered = sorted(needed, key=lambda text: (-len(text), text))
    return re.compile("|".join(map(re.escape, ordered)))


# A pattern anchored at the start is tried at one position, quicker than a screen of many strings
# (the question-word rules: 54 words); a few characters are still worth looking for first (the
# full-stop rule backtracks through every word of a question that has no full stop).
_ANCHORED_SCREEN_STRINGS = 4


def screened_search(
    pattern: re.Pattern[str], screen: re.Pattern[str] | None, text: str, lowered: str | None
) -> bool:
    """``pattern.search(text)`` found something, asked of ``screen`` first when it can answer.

    ``lowered``: ``text.lower()`` for an ASCII text, None for any other (made once per text by the
    caller, for all its patterns).
    """
    if screen is not None and lowered is not None and screen.search(lowered) is None:
        return False
    return pattern.search(text) is not None


def _anchored(nodes: list[tuple[Any, Any]], flags: int) -> bool:
    if not nodes or nodes[0][0] is not _sre.AT:
        return False
    where = nodes[0][1]
    return where is _sre.AT_BEGINNING_STRING or (where is _sre.AT_BEGINNING and not flags & re.MULTILINE)


def _needed(nodes: Iterable[tuple[Any, Any]]) -> _Needed | None:
    """Strings one of which every match of the node sequence holds, or None when none is certain."""
    return _best(_candidates(nodes))


def _best(candidates: list[_Needed]) -> _Needed | None:
    """The surest screen: its shortest string as long as can be, then the fewest strings."""
    if not candidates:
        return None
    return max(candidates, key=lambda needed: (min(map(len, needed)), -len(needed)))


def _candidates(nodes: Iterable[tuple[Any, Any]]) -> list[_Needed]:
    """Sets of strings, each set such that every match of the node sequence holds one of its strings."""
    found: list[_Needed] = []
    run: list[str] = []

    def end_run() -> None:
        # A character outside ASCII matches an ASCII text only through case folding (the long s,
        # the Kelvin sign), so only the ASCII pieces of a run are certain to be in the text.
        for piece in re.split(r"[^\x00-\x7f]", "".join(run)):
            if piece:
                found.append(frozenset({piece.lower()}))
        run.clear()

    for op, argument in nodes:
        if op is _sre.LITERAL:
            run.append(chr(argument))
            continue
        end_run()
        if op is _sre.BRANCH:
            branches = [needed for branch in argument[1] if (needed := _needed(branch))]
            if len(branches) == len(argument[1]):  # every branch holds a certain literal
                found.append(frozenset().union(*branches))
        elif op is _sre.SUBPATTERN:  # what the group needs, the sequence needs
            found.extend(_candidates(argument[-1]))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            if argument[0] >= 1:  # at least once
                found.extend(_candidates(argument[2]))
        elif op is _sre.ATOMIC_GROUP:
            found.extend(_candidates(argument))
        elif op is _sre.IN:  # a class of listed ASCII characters: one of them
            members = [chr(value) for kind, value in argument if kind is _sre.LITERAL]
            if len(members) == len(argument) and "".join(members).isascii():
                found.append(frozenset(member.lower() for member in members))
        # Anything else (a range, an anchor, a lookaround, a backreference...) holds no certain literal.
    end_run()
    return found

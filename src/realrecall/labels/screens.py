"""A quick test that a regular expression cannot match a text, from the literals every match holds.

``search`` with a pattern of many alternatives tries each of them at every position of the text:
the built-in troubleshooting rule took 16-24 us on a 50-character question, and classifying a
million distinct questions took 35 s. Most of its alternatives are words (``error``, ``can't log``,
``timed out``), so a match holds at least one of a set of strings; a text holding none of them
cannot match, and one ``search`` for those strings (plain literals, lower-cased) says so in a few us.

The strings are read off the pattern's parse tree (``re._parser``, the standard library's own
parser). Only what is certain is used: a run of nodes that each match a few known strings (letters,
a class of listed characters, a group of words), every branch of an alternation, the body of a group
or of a repeat that happens at least once, and a ``\b`` written right next to a literal (kept in the
screen: "or" as a word, not inside "for"). Anything else (ranges, categories, other anchors,
lookarounds, backreferences, a parser the next Python changes) gives no string, and a pattern with
nothing certain is searched as it is. The screen is
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

# One of these is in every match: (lower-cased ASCII text, a word boundary before it, one after it).
_Literal = tuple[str, bool, bool]
_Needed = frozenset[_Literal]


def literal_screen(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """A pattern of lower-case literals (with the word boundaries ``pattern`` writes next to them)
    that finds something in the lower-cased text of every ASCII text ``pattern`` matches; None when
    no such literals are certain, or when ``pattern`` is anchored at the start and they are many
    (see ``_ANCHORED_SCREEN_STRINGS``)."""
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
    ordered = sorted(needed, key=lambda literal: (-len(literal[0]), literal))
    # A boundary in the screen is one in the pattern (ASCII lower-casing keeps word characters word
    # characters): "or" as a word, not in "store". The literals after one are grouped behind a single
    # \b: the parser then sees branches that start with a letter, which the search tries only where
    # that letter is; a \b heading some branches and not others made a screen 10-20 times slower.
    loose = [_fragment(text, after) for text, before, after in ordered if not before]
    bounded = [_fragment(text, after) for text, before, after in ordered if before]
    if bounded:
        loose.append(r"\b(?:" + "|".join(bounded) + ")")
    return re.compile("|".join(loose))


def _fragment(text: str, after: bool) -> str:
    return re.escape(text) + (r"\b" if after else "")


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


def _needed(nodes: Iterable[tuple[Any, Any]], before: bool = False, after: bool = False) -> _Needed | None:
    """Literals one of which every match of the node sequence holds, or None when none is certain."""
    return _best(_candidates(nodes, before, after))


def _best(candidates: list[_Needed]) -> _Needed | None:
    """The surest and quickest screen: its shortest text as long as can be up to
    ``_SELECTIVE_LENGTH``, then the fewest literals, the most word boundaries, the longest text."""
    if not candidates:
        return None

    def rank(needed: _Needed) -> tuple[int, int, int, int]:
        shortest = min(len(text) for text, _, _ in needed)
        bounds = sum(before + after for _, before, after in needed)
        return min(shortest, _SELECTIVE_LENGTH), -len(needed), bounds, shortest

    return max(candidates, key=rank)


def _candidates(nodes: Iterable[tuple[Any, Any]], before: bool = False, after: bool = False) -> list[_Needed]:
    """Sets of literals, each set such that every match of the node sequence holds one of its literals.

    A run of nodes that match few known strings each (letters, a group of words, a class of listed
    characters) gives the strings the run matches: ``(or|oder)``, which the parser reads as ``o``
    then ``r|der``, gives ``or`` and ``oder``. ``before`` / ``after``: a word boundary is certain
    just before / after the sequence's match (a ``\\b`` next to the group holding it).
    """
    sequence = list(nodes)
    found: list[_Needed] = []
    run: frozenset[str] | None = None  # the strings the current run of known nodes matches
    run_before = False
    boundary = before  # a \b since the last node that consumes text

    def end_run(boundary_after: bool) -> None:
        nonlocal run
        if run and "" not in run:
            found.append(frozenset((text, run_before, boundary_after) for text in run))
        run = None

    for position, (op, argument) in enumerate(sequence):
        if op in _ZERO_WIDTH:
            boundary = boundary or (op is _sre.AT and argument is _sre.AT_BOUNDARY)
            continue
        strings = _strings(op, argument)
        if strings is not None:
            joined = strings if run is None else _joined(run, strings)
            if joined is None:  # too many strings: the run so far is a candidate of its own
                end_run(False)
                joined = strings
            if run is None:
                run_before = boundary
            run = joined
            boundary = False
            continue
        end_run(boundary)
        found.extend(_inner(op, argument, boundary, _boundary_after(sequence, position, after)))
        boundary = False
    end_run(boundary or after)
    return found


def _inner(op: Any, argument: Any, before: bool, after: bool) -> list[_Needed]:
    """The candidates of a node that consumes text but matches no few known strings."""
    if op is _sre.BRANCH:
        branches = [needed for branch in argument[1] if (needed := _needed(branch, before, after))]
        if len(branches) == len(argument[1]):  # every branch holds a certain literal
            return [frozenset().union(*branches)]
    elif op is _sre.SUBPATTERN:  # what the group needs, the sequence needs
        return _candidates(argument[-1], before, after)
    elif op is _sre.ATOMIC_GROUP:
        return _candidates(argument, before, after)
    elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT) and argument[0] >= 1:
        # At least once. No boundary is passed in: one outside the repeat is next to the first
        # time or the last, and a literal may be read from either.
        return _candidates(argument[2])
    # Anything else (a range, a category, a backreference...) holds no certain literal.
    return []


def _strings(op: Any, argument: Any) -> frozenset[str] | None:
    """The few strings a node that consumes text matches (lower-cased ASCII), or None."""
    if op is _sre.LITERAL:
        char = chr(argument)
        # A character outside ASCII matches an ASCII text only through case folding (the long s,
        # the Kelvin sign): it is not certain to be in the text.
        return frozenset({char.lower()}) if char.isascii() else None
    if op is _sre.IN:  # a class of listed ASCII characters: one of them
        members = [chr(value) for kind, value in argument if kind is _sre.LITERAL]
        if len(members) == len(argument) and "".join(members).isascii():
            return frozenset(member.lower() for member in members)
        return None
    if op is _sre.SUBPATTERN:
        return _sequence_strings(argument[-1])
    if op is _sre.ATOMIC_GROUP:
        return _sequence_strings(argument)
    if op is _sre.BRANCH:
        strings: frozenset[str] = frozenset()
        for branch in argument[1]:
            more = _sequence_strings(branch)
            if more is None:
                return None
            strings |= more
        return strings if len(strings) <= _MAX_STRINGS else None
    return None


def _sequence_strings(nodes: Iterable[tuple[Any, Any]]) -> frozenset[str] | None:
    strings: frozenset[str] | None = frozenset({""})
    for op, argument in nodes:
        if op in _ZERO_WIDTH:  # it consumes nothing: the strings matched are the same
            continue
        more = _strings(op, argument)
        strings = None if more is None or strings is None else _joined(strings, more)
        if strings is None:
            return None
    return strings


def _joined(heads: frozenset[str], tails: frozenset[str]) -> frozenset[str] | None:
    """Every head followed by every tail; None when they would be more than ``_MAX_STRINGS``."""
    if len(heads) * len(tails) > _MAX_STRINGS:
        return None
    return frozenset(head + tail for head in heads for tail in tails)


def _boundary_after(sequence: list[tuple[Any, Any]], position: int, after: bool) -> bool:
    """Whether a word boundary is certain just after node ``position``: a ``\\b`` among the nodes
    that consume nothing after it, or the sequence's own boundary when nothing consuming follows."""
    for op, argument in sequence[position + 1 :]:
        if op not in _ZERO_WIDTH:
            return False
        if op is _sre.AT and argument is _sre.AT_BOUNDARY:
            return True
    return after


# Strings a run of nodes may stand for: enough for a group of words, few enough to search quickly.
_MAX_STRINGS = 128
_ZERO_WIDTH = frozenset({_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT}) if _sre is not None else frozenset()
# A literal this long is rare enough in a question: beyond it, fewer literals make a quicker screen.
_SELECTIVE_LENGTH = 3

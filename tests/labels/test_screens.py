"""Literal screens: a rule's pattern is skipped only for a text it cannot match (issue 13, labels).

The screen is checked against the plain ``search`` it stands in for: on patterns of every shape the
parser knows, on texts made from those patterns' own pieces (so that matches happen) and characters
that fold into ASCII letters, and on every built-in rule with real questions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.labels import TypeRules, default_type_rules
from realrecall.labels.screens import literal_screen, screened_search

BUILT_IN = default_type_rules()

# Patterns of every construct the screen reads, and of those it must read as "nothing certain".
PATTERNS = [
    *(rule.pattern.pattern for rule in BUILT_IN.rules),
    *(rule.pattern.pattern for rule in BUILT_IN.forms.rules),
    r"\berror(s)?\b",
    r"(?i)ſtop|kelvin",  # the long s folds to s: an ASCII text "stop" matches
    r"(?i:Can)'?t (log|sign) in",
    r"(?x) time d? \s? out  # verbose",
    r"(ab|a)(?=c)d|xy{2,3}z|(?>atomic)|q++r",
    r"(?<!no)thing|(?P<w>wo)rd(?P=w)",
    r"(a|)bc|(?:de)*f|(gh)+i",
    r"schlägt fehl|stürzt ab|grö[sß]e",
    r"(?m)^\s*(how|why)\b|^end",
    r"[0-9]{3}-[0-9]+|\d\d",
    r"(?(1)a|b)|(c)",
    r"x.y|p[^q]r|\Bin\B",
    r"^\s*(\S+\s+){2,}.*\S[.!]\s*$",  # anchored, a class of two characters
    r"(?i)[ſx]top|[sß]ee|[^.]+\.|[a-c]d",
]
PIECES = ["error", "errors", "can", "Can't", "log", "sign in", "time", "d", " ", "out", "ab", "a", "c",
          "xyy", "z", "atomic", "qq", "r", "no", "thing", "wo", "rd", "bc", "de", "f", "gh", "i",
          "schlägt fehl", "stürzt", "grösse", "how", "why", "end", "\n", "404", "-", "12", "x", "y",
          "p", "vs", "or", "which", "?", ".", "README.md", "foo_bar", "fooBar", "--flag", "/etc/x",
          "ſ", "\u212a", "İ", "ı", "ß", "ä", "E", "Error", "TIMED OUT", "not working", "won't",
          "!", "stop", "Xtop", "see", "bd", "a b c."]  # fmt: skip


@settings(max_examples=400)
@given(st.sampled_from(PATTERNS), st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_a_screened_search_finds_what_the_pattern_finds(pattern_text: str, text: str) -> None:
    pattern = re.compile(pattern_text)
    lowered = text.lower() if text.isascii() else None
    assert screened_search(pattern, literal_screen(pattern), text, lowered) == bool(pattern.search(text))


# Random patterns: literals (with characters that fold into ASCII letters), classes, sequences,
# groups of every kind, alternations, repeats (bounded: an unbounded one over overlapping branches
# backtracks for ever), anchors and lookarounds, under any global flags.
ATOMS = ["a", "b", "ab", "Ab", "err", "or", "K", "k", "s", "ſ", "\u212a", "ß", "ä", "x", ".", "!", "?"]
CLASSES = [r"[ab]", r"[.!]", r"[^a]", r"[a-c]", r"\d", r"\w", r"\s", r".", r"[kK]", r"[ſs]", r"[.?!]"]
CLASSES.append("[ſ\u212a]")  # the long s and the Kelvin sign: s and k, under IGNORECASE
ZERO_WIDTH = [r"\b", r"\B", "^", "$", r"\A", "(?=a)", "(?!b)", "(?<=a)"]
REPEATS = ["?", "{2}", "{0,2}", "{1,3}", "{0,2}?", "{1,2}+", "{2,3}"]  # greedy, lazy, possessive
# No capturing group: inside a possessive repeat one trips a CPython 3.11 bug in search itself.
GROUPS = ["?:", "?>", "?i:", "?-i:"]
REGEXES = st.recursive(
    st.sampled_from([*ATOMS, " ", "-"]).map(re.escape) | st.sampled_from(CLASSES),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map("".join),
        st.tuples(st.sampled_from(GROUPS), st.lists(inner, min_size=1, max_size=4)).map(
            lambda group: f"({group[0]}{'|'.join(group[1])})"
        ),
        st.tuples(inner, st.sampled_from(REPEATS)).map(lambda repeat: f"(?:{repeat[0]}){repeat[1]}"),
        st.tuples(st.sampled_from(ZERO_WIDTH), inner).map("".join),
    ),
    max_leaves=8,
)
FLAGS = st.sampled_from(["", "(?i)", "(?m)", "(?im)", "(?x)", "(?s)"])
PIECES_OF_TEXT = [*ATOMS, " ", "A", "ERR", "Or", "S", "aa", "\n", "err or", "İ", "ı"]
TEXTS = st.lists(st.sampled_from(PIECES_OF_TEXT), max_size=8)


@settings(max_examples=300)
@given(FLAGS, REGEXES, st.lists(TEXTS, min_size=1, max_size=10))
def test_a_screened_search_finds_what_any_pattern_finds(
    flags: str, body: str, texts: list[list[str]]
) -> None:
    pattern = re.compile(flags + body)
    screen = literal_screen(pattern)
    for text in map("".join, texts):
        lowered = text.lower() if text.isascii() else None
        assert screened_search(pattern, screen, text, lowered) == bool(pattern.search(text)), text


@pytest.mark.parametrize(
    ("pattern", "screen"),
    [
        # A word boundary next to a literal is kept; the literals after one share it.
        (r"\berror(s)?\b", r"\b(?:error)"),
        (r"not working|\bfail(s|ed)?\b|time ?out", r"not\ working|time|\b(?:fail)"),
        (r"\b(or|oder)\b", r"\b(?:oder\b|or\b)"),  # the parser reads o(?:r|der): joined again
        (r"\b(?:or){2}\b", "or"),  # the boundaries are next to different repeats
        (r"\b(a|an|the)\s", r"\b(?:the|an|a)"),  # only a written boundary is read
        # Past three characters, fewer literals win: one "can", not " log", " sign" and " get".
        (r"\b(can'?t|cannot) (log|sign|get)\b", r"\b(?:can)"),
        (r"(?i)Can'?t log in", r"t\ log\ in"),  # lower-cased; the longest certain run
        (r"schlägt fehl", r"gt\ fehl"),  # the ASCII pieces of a run
        (r"(?i)ſtop", "top"),
        (r"^\s*(\S+\s+){3,}.*\S[.!]\s*$", r"!|\."),  # anchored: a few characters still pay
        (r"(?i)ab[CD]", "abc|abd"),  # a class of listed characters joins the run
        (r"x[.!]y?|[.?]z", r"\.z|\?z|x!|x\."),
        (r"[.!?]\s*$", r"!|\.|\?"),
    ],
)
def test_the_screen_holds_the_literals_every_match_holds(pattern: str, screen: str) -> None:
    found = literal_screen(re.compile(pattern))
    assert found is not None
    assert found.pattern == screen


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\s*(What|How|Why|When|Where)\b",  # anchored, many words: one position beats a screen
        r"\A\w+",
        r"[A-Z]{2,}\d+",  # classes only
        r"(a|\d)b?",  # one branch without a literal
        r"(?:abc)?x*",  # nothing certain to happen
        r"[a-c.]|[^x]|[\d!]|[ſ.]",  # ranges, negations, categories, a class with a letter outside ASCII
    ],
)
def test_patterns_with_nothing_certain_get_no_screen(pattern: str) -> None:
    assert literal_screen(re.compile(pattern)) is None


def test_a_text_outside_ascii_is_always_searched() -> None:
    pattern = re.compile(r"(?i)kelvin")
    screen = literal_screen(pattern)
    assert screen is not None
    # The Kelvin sign matches k under IGNORECASE: lower-casing it would not give a k.
    assert screened_search(pattern, screen, "\u212aelvin", None)


def test_a_class_of_characters_outside_ascii_gives_no_screen() -> None:
    # The long s and the Kelvin sign match "S" and "k" under IGNORECASE: the class screens nothing.
    assert literal_screen(re.compile("(?i)[ſ\u212a]")) is None
    pattern = re.compile("(?i)x[ſ\u212a]")
    screen = literal_screen(pattern)
    assert screen is not None
    assert screen.pattern == "x"
    assert screened_search(pattern, screen, "XS", "xs")


def test_user_rules_get_screens_and_label_as_before() -> None:
    rules = TypeRules(rules=BUILT_IN.rules, default="other", forms=BUILT_IN.forms)
    assert rules.screens == BUILT_IN.screens
    assert rules.classify("the sync keeps failing") == ("troubleshooting", "troubleshooting")
    assert rules.classify("grüne Wiese") == ("other", None)


def _plain(rules: TypeRules, text: str) -> tuple[str, str | None, str, str | None]:
    """The rules tried with a plain search each, as before screens."""
    kind = next(((r.type, r.name) for r in rules.rules if r.pattern.search(text)), (rules.default, None))
    form = next(
        ((r.form, r.name) for r in rules.forms.rules if r.pattern.search(text)), (rules.forms.default, None)
    )
    return (*kind, *form)


def _real_questions(reference: Path | None) -> list[str]:
    package = Path(__file__).parents[2] / "src" / "realrecall" / "data" / "real_questions.jsonl"
    texts = [json.loads(line)["query"] for line in package.read_text(encoding="utf-8").splitlines()]
    if reference is not None:
        tsv = reference / "trec-dl-2023-real-vs-synthetic" / "2023_queries.tsv"
        texts += [line.split("\t", 1)[1] for line in tsv.read_text(encoding="utf-8").splitlines()]
        scifact = (reference / "scifact" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["text"] for line in scifact]
    return texts


def test_real_questions_are_labelled_as_a_plain_search_labels_them() -> None:
    from support.reference import find_reference_data

    texts = _real_questions(find_reference_data())
    assert len(texts) > 10
    for text in texts:
        assert (*BUILT_IN.classify(text), *BUILT_IN.classify_form(text)) == _plain(BUILT_IN, text), text


def test_built_in_screens_pass_over_words_that_only_hold_a_literal() -> None:
    # The comparison rule's "or" is a word: before 3dd0c76 its screen was the letter "o" and let
    # nearly every question through to the full search ("store", "for", "how").
    screens = {rule.type: screen for rule, screen in zip(BUILT_IN.rules, BUILT_IN.screens, strict=True)}
    comparison = screens["comparison"]
    assert comparison is not None
    assert comparison.search("how do i store vectors for retrieval in the index?") is None
    assert comparison.search("should i pick bm25 or dense retrieval?") is not None
    assert comparison.search("elasticsearch vs. opensearch") is not None

"""Text features: words, stems, stopwords, lexical overlap, shingles and Jaccard similarity.

The one place that tokenises text. Its users: generate's overlap filter and near-duplicate question
filter, calibrate's diagnostics (question length, overlap with the gold passage) and curate's
near-duplicate passage finder. BM25 is not a user: it tokenises with bm25s and PyStemmer, as its
retriever module says.

Words are runs of word characters (``\\w+``). Each user folds case before tokenising and says how:
stems lower-case each word, shingles case-fold the text. The two differ only on a few characters
(``ß``, ``ﬁ``), and each is kept so that the duplicate pairs found stay what they were.

Lexical overlap: how much of a question's vocabulary is copied from its source passage. A question
written by someone who has read the passage reuses its distinctive words, and a lexical retriever
(BM25) then finds the passage easily; real users, who have not read it, use their own words. Generate
stores the overlap of every synthetic question and ``--max-overlap`` regenerates or drops those above
a bound; calibrate compares the overlap of the two sets with the same function. Definition::

    overlap(q, p) = |C(q) ∩ W(p)| / |C(q)|

where ``W(x)`` is the set of word stems of text ``x`` (the parts of its identifiers included) and
``C(q)`` the stems of the question's content words: words that are neither stopwords of the language
nor part of an identifier. Stems are Snowball stems in the text's language (PyStemmer; English for a
language without a stemmer) of the lower-cased words of at least two characters, cut to
``STEM_LENGTH`` (8) characters. Every word length is stemmed (``id`` and ``ids`` match), and a stem is
long enough not to join unrelated words (``confidence`` -> ``confid``, ``configure`` -> ``configur``);
the cut joins what Snowball leaves apart within a word family (``Konfiguration`` and ``konfigurieren``).
A question with no content word has overlap 0.0. Stopword lists (``en``, ``de``) are package data under
``stopwords/`` beside this module; for a language without a list the union of all lists is used.

Identifiers are counted apart, because the question prompt lets a user type them (a setting, a
function, an error code) and the ``--max-overlap`` filter should not punish that: code-like tokens
(``snake_case``, ``camelCase`` and ``PascalCase`` with an inner capital, dotted paths like
``os.path.join`` or ``backup.toml``, words mixing letters and digits like ``E404`` or ``utf8``) and
anything between backticks. ``identifier_overlap(q, p)`` is the share of the question's identifiers
(case-folded) that the passage holds as a whole token sequence; 0.0 for a question without any.
Generate stores both per question (``provenance.overlap``, ``provenance.identifier_overlap``).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Set
from importlib import resources
from importlib.resources.abc import Traversable

import Stemmer

__all__ = [
    "STEM_LENGTH",
    "content_stems",
    "identifier_overlap",
    "identifiers",
    "jaccard",
    "lexical_overlap",
    "shingles",
    "stem",
    "stems",
    "stopword_languages",
    "stopwords",
    "words",
]

STEM_LENGTH = 8
# Shorter words ("a", "I", "x") carry no topic; stems leave them out.
_MIN_STEM_WORD = 2
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The runs of word characters of ``text``, in order, as written (fold case before, if wanted)."""
    return _WORD.findall(text)


# --- stopwords ----------------------------------------------------------------------------------


def _stopword_folder() -> Traversable:
    return resources.files("realrecall").joinpath("stopwords")


@functools.cache
def stopword_languages() -> tuple[str, ...]:
    """Languages that have a stopword list (the file names under ``stopwords/``)."""
    names = (entry.name for entry in _stopword_folder().iterdir())
    return tuple(sorted(name.removesuffix(".txt") for name in names if name.endswith(".txt")))


@functools.cache
def stopwords(language: str | None) -> frozenset[str]:
    """The stopwords of ``language`` (ISO 639-1 code); the union of all lists for a language without one."""
    code = _code(language)
    if code not in stopword_languages():
        return frozenset().union(*(stopwords(known) for known in stopword_languages()))
    text = _stopword_folder().joinpath(f"{code}.txt").read_text("utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _code(language: str | None) -> str:
    return (language or "").lower().split("-")[0]


# --- identifiers --------------------------------------------------------------------------------

# Code-like tokens, each matched as whole word-character runs (joined by dots for a path), so that
# removing them never cuts a word in two. Backticks mark anything as an identifier.
_IDENTIFIER = re.compile(
    r"`(?P<quoted>[^`\n]{1,100})`"
    r"|(?<![\w.])(?P<dotted>[^\W\d]\w*(?:\.[^\W\d]\w*)+)(?![\w.])"  # os.path.join, backup.toml
    r"|\b(?P<snake>\w*[^\W_]_+[^\W_]\w*)\b"  # snake_case, MAX_SIZE
    r"|\b(?P<camel>[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b"  # camelCase, PascalCase
    r"|\b(?P<mixed>(?=\w*\d)(?=\w*[^\W\d_])\w+)\b"  # E404, utf8, v2
)
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _identifier_matches(text: str) -> list[re.Match[str]]:
    matches = []
    for match in _IDENTIFIER.finditer(text):
        dotted = match.group("dotted")
        # "e.g" and "i.e" are abbreviations, not paths: a path has a part of two characters or more.
        if dotted is not None and max(len(part) for part in dotted.split(".")) < 2:
            continue
        matches.append(match)
    return matches


def _identifier(match: re.Match[str]) -> str:
    quoted = match.group("quoted")
    return " ".join((quoted if quoted is not None else match.group(0)).split()).casefold()


def identifiers(text: str) -> set[str]:
    """The identifiers of ``text``, case-folded (backticked text without its backticks; see module doc)."""
    return {name for name in map(_identifier, _identifier_matches(text)) if name}


def _without_identifiers(text: str) -> str:
    """``text`` with its identifiers blanked (a space each, so the words around them stay apart)."""
    pieces: list[str] = []
    last = 0
    for match in _identifier_matches(text):
        pieces.append(text[last : match.start()])
        pieces.append(" ")
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _identifier_parts(text: str) -> list[str]:
    """The words inside the identifiers of ``text`` (``backup_dir`` -> backup, dir; ``maxResults`` ->
    max, Results), so a question that spells an identifier out in words still counts as copying it."""
    parts: list[str] = []
    for match in _identifier_matches(text):
        for word in words(match.group(0)):
            for piece in word.split("_"):
                parts.extend(_CAMEL_PART.findall(piece) or [piece])
    return parts


def identifier_overlap(question: str, passage: str) -> float:
    """Share of the question's identifiers that occur in the passage, in [0, 1] (see module doc)."""
    names = identifiers(question)
    if not names:
        return 0.0
    text = " ".join(passage.split()).casefold()
    found = sum(1 for name in names if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text))
    return found / len(names)


# --- stems and lexical overlap ------------------------------------------------------------------

# ISO 639-1 codes of the Snowball stemmers PyStemmer ships; any other language is stemmed as English.
_SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian", "fi": "finnish",
    "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian", "id": "indonesian",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch", "no": "norwegian", "nb": "norwegian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "sv": "swedish",
    "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
# A Stemmer object is not safe to share between threads (calibrate and curate may use several).
_local = threading.local()


def _stemmer(language: str | None) -> Stemmer.Stemmer:
    algorithm = _SNOWBALL.get(_code(language), "english")
    stemmers: dict[str, Stemmer.Stemmer] = _local.__dict__.setdefault("stemmers", {})
    if algorithm not in stemmers:
        try:
            stemmers[algorithm] = Stemmer.Stemmer(algorithm)
        except KeyError:  # a PyStemmer built without this language
            stemmers[algorithm] = Stemmer.Stemmer("english")
    return stemmers[algorithm]


def _stem_words(tokens: list[str]) -> list[str]:
    # Each word is lower-cased alone, so a question and its passage fold a word the same way whatever
    # surrounds it (the Greek final sigma depends on the next letter).
    return [lowered for lowered in (word.lower() for word in tokens) if len(lowered) >= _MIN_STEM_WORD]


def _stem_all(tokens: list[str], language: str | None) -> list[str]:
    return [word[:STEM_LENGTH] for word in _stemmer(language).stemWords(tokens)]


def stem(word: str, language: str | None = None) -> str:
    """A lower-case word's stem: its Snowball stem in ``language`` cut to ``STEM_LENGTH`` characters."""
    return _stem_all([word], language)[0]


def stems(text: str, language: str | None = None) -> set[str]:
    """The set of word stems of ``text`` (see the module doc)."""
    return set(_stem_all(_stem_words(words(text)), language))


def content_stems(text: str, language: str | None) -> set[str]:
    """Stems of the words of ``text`` that are not stopwords of ``language``."""
    stop = stopwords(language)
    return set(_stem_all([word for word in _stem_words(words(text)) if word not in stop], language))


def lexical_overlap(question: str, passage: str, language: str | None) -> float:
    """Share of the question's content-word stems that occur in the passage, in [0, 1] (see module doc).

    Identifiers of the question are left out (``identifier_overlap`` measures them); the passage's
    words include the parts of its identifiers.
    """
    content = content_stems(_without_identifiers(question), language)
    if not content:
        return 0.0
    passage_words = _stem_words([*words(passage), *_identifier_parts(passage)])
    return len(content & set(_stem_all(passage_words, language))) / len(content)


# --- shingles and Jaccard -----------------------------------------------------------------------


def shingles(text: str, size: int) -> frozenset[str]:
    """The set of ``size``-word shingles of ``text``; a shorter text is one shingle of all its words.

    Words are those of the case-folded text, joined by one space.
    """
    folded = words(text.casefold())
    if len(folded) <= size:
        return frozenset([" ".join(folded)]) if folded else frozenset()
    return frozenset(" ".join(folded[i : i + size]) for i in range(len(folded) - size + 1))


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)

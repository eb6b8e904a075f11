"""Style examples: a few real questions shown to the model so synthetic ones match their length and tone.

Only the question texts are shown, never their gold passages. Their ids are written into every
synthetic record's provenance (``style_example_ids``), so that evaluating on a real set that contains
them can warn: those questions shaped the generator, and scoring on them leaks the test into it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from realrecall.errors import InputError
from realrecall.gold import load_gold

__all__ = ["StyleExamples", "format_style_examples", "load_style_examples"]


@dataclass(frozen=True)
class StyleExamples:
    """The chosen real questions (ids and texts, in the order shown)."""

    ids: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()


def load_style_examples(path: str | Path, n: int, *, seed: int) -> StyleExamples:
    """``n`` questions of the real set at ``path``, chosen by ``hash(seed, query id)``."""
    gold = load_gold(path, origin="real")
    usable = [query for query in gold if query.query.strip()]
    if not usable:
        raise InputError("style examples hold no question text", path=path, hint="give a JSONL real set")
    ranked = sorted(
        usable, key=lambda q: (hashlib.sha256(f"{seed}\x1f{q.query_id}".encode()).hexdigest(), q.query_id)
    )
    chosen = ranked[:n]
    return StyleExamples(tuple(q.query_id for q in chosen), tuple(" ".join(q.query.split()) for q in chosen))


def format_style_examples(examples: StyleExamples) -> str:
    """The examples as the prompt shows them: one quoted question a line."""
    if not examples.questions:
        return "(none given: write as a typical user would)"
    return "\n".join(f'- "{question}"' for question in examples.questions)

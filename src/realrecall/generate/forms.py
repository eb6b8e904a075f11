"""Query forms with a target mix: how each synthetic query is written, and about how long it is.

Real users type ``dog age by teeth`` as often as a full question (TREC DL 2023's human queries: 5.8
words, 4% end in "?"). Each question slot of the ``llm`` backend draws a *form* from a target mix
(``--forms keywords=2,question=2,typo=1``) and a target length in words, and the prompt asks for
both. The draw is a function of the seed, the chunk id and the question index only, like the
planner's other draws, so adding chunks leaves the others' forms (and cached answers) unchanged.

Forms (``QUERY_FORMS``): ``keywords`` (a few words, no sentence), ``question`` (a natural question),
``statement`` (the need stated, not asked) and ``typo`` (typed in a hurry: misspelt or ungrammatical).
The record keeps the form asked for (``requested_form``) beside the form the type rules read in the
written text (``form``), as it keeps ``requested_type`` beside ``type``.

Without ``--forms`` the mix is measured from the real questions of ``--style-examples`` (all of
them, not only those shown): their forms by the same rules (``realrecall.labels`` form rules; forms
the rules give that are not in ``QUERY_FORMS`` are left out) and their lengths, so the synthetic set
matches the real one. A ``typo`` cannot be read off a text by rules, so a measured mix never holds
one; ask for it with ``--forms``. Without style examples the default mix is ``DEFAULT_FORMS``.

Lengths: a slot's target is the word count of a real example of its form, drawn at random, when the
style examples hold one; otherwise a number drawn from ``DEFAULT_LENGTHS`` (short and long alike).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from realrecall.errors import InputError
from realrecall.gold import load_gold
from realrecall.labels import TypeRules

__all__ = [
    "DEFAULT_FORMS",
    "DEFAULT_LENGTHS",
    "QUERY_FORMS",
    "FormChoice",
    "FormPlan",
    "check_forms",
    "measure_forms",
    "plan_forms",
]

# The forms a query can be asked in, with the instruction the prompt gives the model.
QUERY_FORMS: Mapping[str, str] = {
    "keywords": (
        "a few keywords as typed into a search box: no full sentence, no question mark "
        '(like "dog age by teeth")'
    ),
    "question": "a natural question in full words, as typed into a search box or a support chat",
    "statement": "the need or problem stated in the user's words, not asked as a question",
    "typo": (
        "typed in a hurry: one or two misspelt words, missing capitals or a small grammar slip, "
        "as real users type"
    ),
}
DEFAULT_FORMS: Mapping[str, float] = {"keywords": 2.0, "question": 2.0, "typo": 1.0}
# Word counts (lowest, highest) a target is drawn from when no real example of the form is known.
DEFAULT_LENGTHS: Mapping[str, tuple[int, int]] = {
    "keywords": (2, 5),
    "question": (5, 14),
    "statement": (5, 14),
    "typo": (3, 10),
}


def check_forms(forms: Mapping[str, float]) -> None:
    """Refuse an unknown form or a mix without a positive weight (one line, naming the fix)."""
    for name in forms:
        if name not in QUERY_FORMS:
            raise InputError(f"unknown query form {name!r}", hint=f"choose from {', '.join(QUERY_FORMS)}")
    if any(weight < 0 for weight in forms.values()) or not any(forms.values()):
        raise InputError(
            "give at least one query form with a positive weight (and none negative)",
            hint="e.g. --forms keywords=2,question=2,typo=1",
        )


@dataclass(frozen=True)
class FormChoice:
    """The form one slot asks for and its target length in words."""

    form: str
    words: int

    @property
    def instruction(self) -> str:
        """What the prompt says about the form (the ``form_instruction`` placeholder)."""
        return f"{self.form}, {QUERY_FORMS[self.form]}; about {self.words} words"


@dataclass(frozen=True)
class FormPlan:
    """The target mix and the length pools a run draws each slot's form from."""

    mix: Mapping[str, float]
    lengths: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """Form -> the word counts of the real examples of that form (empty: ``DEFAULT_LENGTHS``)."""
    source: str = "default"
    """Where the mix comes from: ``forms`` (given), ``style examples`` (measured) or ``default``."""

    def choose(self, seed: int, chunk_id: str, index: int) -> FormChoice:
        """The form and length of question ``index`` of a chunk (a function of these three only)."""
        digest = hashlib.sha256(json.dumps(["form", seed, chunk_id, index]).encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        names = list(self.mix)
        form = rng.choices(names, weights=[self.mix[name] for name in names], k=1)[0]
        pool = self.lengths.get(form)
        if pool:
            return FormChoice(form, pool[rng.randrange(len(pool))])
        low, high = DEFAULT_LENGTHS[form]
        return FormChoice(form, rng.randint(low, high))

    def describe(self) -> dict[str, object]:
        """What goes into the generator description (and so into every slot's cache key)."""
        lengths = json.dumps({name: list(pool) for name, pool in sorted(self.lengths.items())})
        return {
            "forms": dict(sorted(self.mix.items())),
            "forms_source": self.source,
            "lengths_sha256": hashlib.sha256(lengths.encode()).hexdigest() if self.lengths else None,
        }


def measure_forms(path: str | Path, rules: TypeRules) -> tuple[dict[str, float], dict[str, tuple[int, ...]]]:
    """The form mix and the word counts by form of the real questions at ``path`` (see module doc)."""
    shares: Counter[str] = Counter()
    lengths: dict[str, list[int]] = {}
    for query in load_gold(path, origin="real"):
        text = " ".join(query.query.split())
        if not text:
            continue
        form, _ = rules.classify_form(text)
        if form not in QUERY_FORMS:
            continue
        shares[form] += 1
        lengths.setdefault(form, []).append(len(text.split()))
    return {name: float(count) for name, count in shares.items()}, {
        name: tuple(sorted(pool)) for name, pool in lengths.items()
    }


def plan_forms(
    forms: Mapping[str, float] | None, style_examples: str | Path | None, rules: TypeRules
) -> FormPlan:
    """The run's form plan: ``forms`` when given, else measured from the style examples, else default.

    Lengths come from the style examples whenever they are given, whichever mix is used.
    """
    measured: dict[str, float] = {}
    lengths: dict[str, tuple[int, ...]] = {}
    if style_examples is not None:
        measured, lengths = measure_forms(style_examples, rules)
    if forms is not None:
        return FormPlan(dict(forms), lengths, "forms")
    if measured:
        return FormPlan(measured, lengths, "style examples")
    return FormPlan(dict(DEFAULT_FORMS), lengths, "default")

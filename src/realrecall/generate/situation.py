"""Situation-first generation (``--strategy situation``, the default of the ``llm`` backend).

A model shown the passage and asked not to copy it copies it anyway; withholding works better than
forbidding. So a question is written in two calls:

1. ``prompts/situation.md`` sees the passage and writes, as strict JSON, who would need it
   (``user``), what they are trying to do in their own words (``situation``) and the passage's words
   that answer them (``answer``, a quote);
2. ``prompts/situation_query.md`` does **not** see the passage (nor its title): it writes the query
   from the situation alone, in the requested form, length and language.

Answerability of the final query: with ``--judge`` the judge checks the query against the passage,
as in the direct strategy (the stated answer is then not checked). Without it, the first call's
stated answer must be in the passage (``answer_in_passage``: a quote of at least ``MIN_QUOTE_WORDS``
content words, found word for word or with at least ``ANSWER_SUPPORT`` of its content stems), so
every situation is grounded in the passage; the query written from it is not checked again, which is
the judge's job. A quote of fewer content words grounds nothing: "the" is in almost every passage.

A situation is measured for passage wording before any query is written from it: its ``user`` and
``situation`` (what step 2 sees) get the lexical overlap questions get (``text_features.lexical_overlap``:
the share of their content stems found in the passage, identifiers counted apart), recorded with each
question as ``situation_overlap``. Above ``max_overlap`` the situation is rejected
(``situation_overlap``), and with or without a bound so is one holding a run of ``VERBATIM_WORDS``
words of the passage (``situation_verbatim``); a new one is then asked for, with the rejected one and
why shown back (``prompts/situation_feedback.md``, as after any rejected situation); step 2 is never
asked from it, so a copied passage cannot reach the query through the situation.

A question over two chunks (``multi_chunk``, ``slot.partner``) is written the same way: step 1
(``prompts/situation_pair.md``) sees both passages and writes one situation that needs both, with a
quote of each (``answer``, ``answer_b``; both must ground it, each in its own passage, unless the judge
checks the query); step 2 writes the query from the situation alone, in the form asked for, so no
writer of the query sees either passage.

Both steps say who searches and where (``{{audience}}``, ``audience_of``): ``audience`` when given,
else the people who typed the style examples (which step 1 then sees too), else ``DEFAULT_AUDIENCE``;
``prompt_situation`` and ``prompt_query`` replace each step's prompt file (``step_prompt`` refuses a
variable the step does not fill, so step 2 can never ask for the passage).

A rejected query is asked again from the same situation, with the rejection fed back (the passage
still withheld), unless the rejection says the situation itself is spent (``NEW_SITUATION``: a
near-duplicate or an unanswerable query, or no valid situation): then the next attempt starts from a
new situation. Every answer is cached under the slot key (which holds the strategy and both prompt
hashes), so reruns replay both calls for free.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from realrecall.errors import InputError
from realrecall.generate.answers import ANSWER_TOKENS, _json_object, parse_question
from realrecall.generate.asking import RequestCollector, ask, derive_seed
from realrecall.generate.languages import LANGUAGE_NAMES
from realrecall.generate.question_types import PAIR_TYPES, QUESTION_TYPES
from realrecall.generate.sources import Candidate, question_request, slot_searchable_text
from realrecall.generate.strategy import PlannedRequest, SourceContext, StrategySpec
from realrecall.generate.templates import PromptTemplate, builtin_prompt, delimit_data, load_prompt, render
from realrecall.llm.types import ChatClient, ChatRequest, Usage
from realrecall.provenance import PromptRef
from realrecall.text_features import content_stems, lexical_overlap, shingles, stems, words

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.forms import FormPlan
    from realrecall.generate.planner import Slot
    from realrecall.generate.store import GenerationStore
    from realrecall.generate.summary import StageCounter

__all__ = [
    "ANSWER_SUPPORT",
    "COPIED_SITUATION",
    "DEFAULT_AUDIENCE",
    "MIN_QUOTE_WORDS",
    "NEW_SITUATION",
    "QUERY_VARIABLES",
    "SITUATION_SCHEMA",
    "SITUATION_TOKENS",
    "SITUATION_VARIABLES",
    "STRATEGY",
    "VERBATIM_WORDS",
    "Situation",
    "SituationCandidate",
    "SituationQuestions",
    "SituationStrategy",
    "answer_in_passage",
    "audience_of",
    "copied_situations_warning",
    "copies_passage",
    "parse_situation",
    "query_messages",
    "situation_messages",
    "situation_overlap",
    "situation_problem",
    "step_prompt",
    "strategy_prompt_ref",
]

SITUATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "user": {"type": "string", "description": "who needs the passage, in a few words"},
        "situation": {"type": "string", "description": "what they are trying to do, in their own words"},
        "answer": {"type": "string", "description": "the passage's words that answer them, quoted"},
    },
    "required": ["user", "situation", "answer"],
    "additionalProperties": False,
}
PAIR_SITUATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **SITUATION_SCHEMA["properties"],
        "answer": {"type": "string", "description": "the first passage's words that answer them, quoted"},
        "answer_b": {"type": "string", "description": "the second passage's words that answer them, quoted"},
    },
    "required": ["user", "situation", "answer", "answer_b"],
    "additionalProperties": False,
}
"""Step 1's answer over two passages (``--multi-chunk``): a quote of each."""

ANSWER_SUPPORT = 0.8
MIN_QUOTE_WORDS = 3
"""The fewest content words (distinct stems of words that are not stopwords) a stated answer must hold
to count as grounding; the help of ``--judge`` and docs/generate.md state the same number."""
SITUATION_TOKENS = 120
"""About the tokens of step 1's answer (the user, their situation, the quoted answer): for the dry run."""
MAX_SITUATION_CHARS = 1200
# Rejections after which the next attempt needs a new situation, not just a new query from it.
NEW_SITUATION = frozenset({"near_duplicate", "unanswerable"})


@dataclass(frozen=True)
class Situation:
    """Step 1's answer: who needs the passage, their situation in their words, the passage's answer."""

    user: str
    situation: str
    answer: str
    answer_b: str | None = None
    """Over two passages: the second passage's answer (None over one)."""

    def to_dict(self) -> dict[str, str]:
        answers = {"answer": self.answer} | ({} if self.answer_b is None else {"answer_b": self.answer_b})
        return {"user": self.user, "situation": self.situation, **answers}


@dataclass(frozen=True)
class SituationCandidate(Candidate):
    """A candidate of the situation strategy: the situation it was written from travels with it."""

    situation: Situation | None = None
    situation_number: int = 0
    """Which situation of the slot this is (0, 1, ...: part of the first call's cache key)."""
    situation_overlap: float | None = None
    """The situation's lexical overlap with the passage (``situation_overlap``); None without one."""


def parse_situation(text: str, *, pair: bool = False) -> tuple[Situation, None] | tuple[None, str]:
    """``(situation, None)`` for a valid step-1 answer, ``(None, reason)`` otherwise; ``pair``: the
    answer over two passages (``PAIR_SITUATION_SCHEMA``)."""
    parsed = _json_object(text)
    if parsed[0] is None:
        return None, parsed[1]
    value = parsed[0]
    keys = ("user", "situation", "answer", "answer_b") if pair else ("user", "situation", "answer")
    if set(value) != set(keys) or not all(isinstance(v, str) for v in value.values()):
        return None, "schema_mismatch"
    user, situation, answer, *second = (" ".join(value[key].split()) for key in keys)
    if not any(character.isalpha() for character in situation):
        return None, "empty_situation"
    if len(user) + len(situation) > MAX_SITUATION_CHARS:
        return None, "situation_too_long"
    return Situation(user, situation, answer, second[0] if second else None), None


_TOKEN = re.compile(r"\w+")


def answer_in_passage(answer: str, passage: str, language: str | None) -> bool:
    """Whether the stated answer grounds the situation in the passage: it holds at least
    ``MIN_QUOTE_WORDS`` content words (stems of words that are not stopwords of ``language``), and it
    is in the passage word for word (case and punctuation aside), or ``ANSWER_SUPPORT`` of its
    content-word stems are the passage's. A shorter quote ("the", "is used") is in nearly any passage
    and grounds nothing."""
    content = content_stems(answer, language)
    if len(content) < MIN_QUOTE_WORDS:
        return False
    quote = " ".join(_TOKEN.findall(answer.casefold()))
    if f" {quote} " in f" {' '.join(_TOKEN.findall(passage.casefold()))} ":
        return True
    return len(content & stems(passage, language)) / len(content) >= ANSWER_SUPPORT


def situation_overlap(situation: Situation, slot: Slot) -> float:
    """The lexical overlap of what step 2 sees of a situation (``user`` and ``situation``) with the
    slot's passage: the measure questions get (``text_features.lexical_overlap``)."""
    seen = f"{situation.user}\n{situation.situation}"
    return lexical_overlap(seen, slot_searchable_text(slot), slot.language)


COPIED_SITUATION = 0.8
"""A situation overlap at or above which ``copied_situations_warning`` speaks (without ``max_overlap``)."""


def copied_situations_warning(records: Iterable[Mapping[str, Any]], config: GenerateConfig) -> str | None:
    """Without ``max_overlap``, how many questions of the output were written from a situation that
    reuses the passage's words (``situation_overlap`` at least ``COPIED_SITUATION``), or None: nothing
    rejects those, and step 2 may carry the passage's wording into the query."""
    if config.max_overlap is not None:
        return None
    overlaps = [(record.get("provenance") or {}).get("situation_overlap") for record in records]
    measured = [value for value in overlaps if isinstance(value, int | float)]
    copied = sum(1 for value in measured if value >= COPIED_SITUATION)
    if not copied:
        return None
    return (
        f"{copied} of {len(measured)} question(s) were written from a situation that reuses the passage's "
        f"words (situation_overlap >= {COPIED_SITUATION}); --max-overlap 0.6 (max_overlap in a pipeline) "
        "rejects such situations and asks for new ones"
    )


VERBATIM_WORDS = 8
"""A run of this many words of the passage, in order, in the situation's ``user`` or ``situation``
rejects it (``situation_verbatim``) with or without ``max_overlap``: step 2 must never see the passage's
text, and a copied run of eight words is never a user's own wording."""


def copies_passage(situation: Situation, slot: Slot) -> bool:
    """Whether what step 2 sees of ``situation`` holds a run of ``VERBATIM_WORDS`` words of the slot's
    passage (or its partner's), case and punctuation aside."""
    passage = shingles(slot_searchable_text(slot), VERBATIM_WORDS)
    for field in (situation.user, situation.situation):
        if len(words(field)) >= VERBATIM_WORDS and shingles(field, VERBATIM_WORDS) & passage:
            return True
    return False


def situation_problem(reason: str) -> str:
    """What the situation feedback tells the model about a rejected situation."""
    if reason in ("situation_overlap", "situation_verbatim"):
        return (
            "it repeats the passage's own words; describe the person and their situation in their "
            "everyday words, as someone who has not read the passage would tell a colleague"
        )
    if reason == "answer_not_in_passage":
        return (
            f'its "answer" is not a quote of the passage holding at least {MIN_QUOTE_WORDS} content '
            "words; copy the passage's words that meet the need exactly"
        )
    return 'it is not a JSON object {"user": "...", "situation": "...", "answer": "..."} as asked'


def _rejects_situation(reason: str) -> bool:
    """Whether a rejection was of the situation itself (not of a query written from it)."""
    return reason == "answer_not_in_passage" or reason.startswith("situation_")


def _type_description(slot: Slot) -> str:
    if slot.partner is not None:
        return PAIR_TYPES.get(slot.type, slot.type)
    return QUESTION_TYPES.get(slot.type, slot.type)


def grounded(situation: Situation, slot: Slot) -> bool:
    """Whether the stated answers ground the situation: the answer in the chunk, and over two chunks
    the second answer in the partner (``answer_in_passage``)."""
    if not answer_in_passage(situation.answer, slot.chunk.text, slot.language):
        return False
    partner = slot.partner
    return partner is None or answer_in_passage(situation.answer_b or "", partner.text, slot.language)


DEFAULT_AUDIENCE = "people searching a documentation site or asking a support chat"
"""Who searches, when neither ``audience`` nor style examples say it."""
EXAMPLES_AUDIENCE = "the people who typed the real queries shown"
"""Who searches, when the style examples show it (and no ``audience`` is given)."""
NO_EXAMPLES = "(none given)"
ANY_PERSONA = "any one of them with a real need"
"""Who might need the passage, when no ``--persona`` says it."""

# What each step's prompt file may use: a replacement (--prompt-situation, --prompt-query) declaring
# another variable is refused, above all step 2 asking for the passage it must never see.
SITUATION_VARIABLES = (
    "passage",
    "title",
    "question_type",
    "type_description",
    "language",
    "persona",
    "audience",
    "style_examples",
)
QUERY_VARIABLES = (
    "user",
    "situation",
    "question_type",
    "type_description",
    "language",
    "form_instruction",
    "style_examples",
    "audience",
)


def audience_of(config: GenerateConfig) -> str:
    """Who searches and where, as the prompts say it: ``audience``, else the people who typed the
    style examples, else ``DEFAULT_AUDIENCE``."""
    if config.audience is not None:
        return config.audience
    return EXAMPLES_AUDIENCE if config.style_examples is not None else DEFAULT_AUDIENCE


def _as_data(text: str) -> str:
    """Text placed in a prompt (the audience): it cannot open or close a data block."""
    return delimit_data(delimit_data(text, "passage"), "situation")


def situation_messages(
    template: PromptTemplate,
    slot: Slot,
    *,
    audience: str = DEFAULT_AUDIENCE,
    style_examples: str = NO_EXAMPLES,
) -> tuple[dict[str, str], ...]:
    """Step 1's messages: the passage (delimited as data), who searches and what kind of need to
    imagine; ``style_examples``: real queries, which show who searches. A slot over two chunks also
    fills ``passage_b`` and ``title_b`` (its prompt is ``situation_pair``)."""
    partner = slot.partner
    values = {
        "passage": delimit_data(slot.chunk.text, "passage"),
        "title": " ".join(slot.chunk.title.split()) or "(none)",
        "question_type": slot.type,
        "type_description": _type_description(slot),
        "language": LANGUAGE_NAMES.get(slot.language, slot.language),
        "persona": slot.persona or ANY_PERSONA,
        "audience": _as_data(audience),
        "style_examples": style_examples,
    }
    if partner is not None:
        values["passage_b"] = delimit_data(partner.text, "passage")
        values["title_b"] = " ".join(partner.title.split()) or "(none)"
    return render(template, {name: values.get(name, "") for name in template.variables})


def query_messages(
    template: PromptTemplate,
    slot: Slot,
    situation: Situation,
    form_instruction: str,
    style_examples: str,
    *,
    audience: str = DEFAULT_AUDIENCE,
) -> tuple[dict[str, str], ...]:
    """Step 2's messages: the situation (delimited as data), never the passage or its title."""
    values = {
        "user": delimit_data(situation.user, "situation"),
        "situation": delimit_data(situation.situation, "situation"),
        "question_type": slot.type,
        "type_description": _type_description(slot),
        "language": LANGUAGE_NAMES.get(slot.language, slot.language),
        "form_instruction": form_instruction,
        "style_examples": style_examples,
        "audience": _as_data(audience),
    }
    return render(template, {name: values.get(name, "") for name in template.variables})


def step_prompt(path: Path | None, builtin: str, allowed: tuple[str, ...], option: str) -> PromptTemplate:
    """A step's prompt: the file that replaces it (``option``), or the built-in one. A file declaring a
    variable the step does not fill is refused, naming the file and the variables it may use."""
    if path is None:
        return builtin_prompt(builtin)
    template = load_prompt(path)
    unknown = [name for name in template.variables if name not in allowed]
    if unknown:
        raise InputError(
            f"{option} declares {', '.join(unknown)}, which this step does not fill"
            + (" (step 2 never sees the passage)" if builtin == "situation_query" else ""),
            path=path,
            hint=f"use only: {', '.join(allowed)}",
        )
    return template


def strategy_prompt_ref(situation: PromptTemplate, query: PromptTemplate) -> PromptRef:
    """The one prompt reference of the strategy (``provenance.prompt``, which ``generator_of`` reads):
    a hash of both prompts' hashes, so editing either one makes another generator."""
    digest = hashlib.sha256(f"situation_first\x1f{situation.sha256}\x1f{query.sha256}".encode())
    return PromptRef(name="situation_first", sha256=digest.hexdigest())


def _key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


@dataclass
class SituationQuestions:
    """Questions written situation-first (see the module doc); a question source like ``LLMQuestions``."""

    client: ChatClient | RequestCollector | None
    situation_template: PromptTemplate
    query_template: PromptTemplate
    config: GenerateConfig
    style_examples: str
    store: GenerationStore
    counter: StageCounter
    feedback: PromptTemplate
    forms: FormPlan
    situation_feedback: PromptTemplate
    """Sent after a rejected situation: the rejection and why, before asking for a new one."""
    pair_template: PromptTemplate | None = None
    """Step 1 over two chunks (``slot.partner``; ``prompts/situation_pair.md``)."""
    audience: str = DEFAULT_AUDIENCE
    """Who searches and where (``audience_of``)."""

    def situation_request(
        self, slot: Slot, number: int, rejected: tuple[Candidate, str] | None = None
    ) -> ChatRequest:
        pair = slot.partner is not None and self.pair_template is not None
        template = self.pair_template if pair and self.pair_template is not None else self.situation_template
        messages = situation_messages(
            template, slot, audience=self.audience, style_examples=self.style_examples
        )
        if rejected is not None:
            # The rejected situation and why, as a rejected query is shown back.
            previous, reason = rejected
            answer = {"role": "assistant", "content": previous.text[:2000] or "(no answer)"}
            feedback = render(self.situation_feedback, {"problem": situation_problem(reason)})
            messages = (*messages, answer, *feedback)
        return ChatRequest(
            messages=messages,
            model=self.config.model,
            temperature=self.config.temperature,
            max_tokens=self.config.max_tokens,
            json_schema=PAIR_SITUATION_SCHEMA if pair else SITUATION_SCHEMA,
            schema_name="situation",
            seed=derive_seed(self.config.seed, slot.key, "situation", number),
        )

    def query_request(
        self,
        slot: Slot,
        situation: Situation,
        attempt: int,
        rejected: tuple[Candidate, str] | None,
    ) -> ChatRequest:
        form = self.forms.choose(self.config.seed, slot.chunk.id, slot.index)
        messages = query_messages(
            self.query_template,
            slot,
            situation,
            form.instruction,
            self.style_examples,
            audience=self.audience,
        )
        # The rejected query and why, as in the direct strategy; the passage stays withheld.
        return question_request(self.config, messages, self.feedback, slot, attempt, rejected)

    async def propose(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None) -> Candidate:
        previous = rejected[0] if rejected is not None else None
        reason = rejected[1] if rejected is not None else None
        if (
            isinstance(previous, SituationCandidate)
            and previous.situation is not None
            and reason is not None
            and reason not in NEW_SITUATION
            and not reason.startswith("judge_")
            and not _rejects_situation(reason)
        ):
            situation, number, spent = previous.situation, previous.situation_number, Usage(0, 0)
            overlap = previous.situation_overlap
            feedback = rejected
        else:
            number = previous.situation_number + 1 if isinstance(previous, SituationCandidate) else 0
            # A rejected situation is shown back with why; a spent one (its query a near-duplicate or
            # unanswerable) is simply replaced.
            spent_situation = rejected if reason is not None and _rejects_situation(reason) else None
            found = await self._situation(slot, attempt, number, spent_situation)
            if isinstance(found, Candidate):
                return found
            situation, spent, overlap = found
            feedback = None
        request = self.query_request(slot, situation, attempt, feedback)
        text, failure, usage, model = await ask(
            self.client,
            self.store,
            self.counter,
            request,
            key=_key(slot.key, "query", attempt, number, json.dumps(situation.to_dict(), sort_keys=True)),
            slot_key=slot.key,
            stage="generate",
        )
        question = None
        if failure is None:
            question, failure = parse_question(text)
        return SituationCandidate(
            question, failure, attempt, spent + usage, model, request.seed, text, situation, number, overlap
        )

    async def _situation(
        self, slot: Slot, attempt: int, number: int, rejected: tuple[Candidate, str] | None
    ) -> tuple[Situation, Usage, float] | SituationCandidate:
        """Situation ``number`` of the slot, what it cost now and its overlap with the passage, or the
        rejected candidate when it is not usable (its reason prefixed ``situation_``, or
        ``answer_not_in_passage``); ``rejected``: the situation rejected before it, and why."""
        request = self.situation_request(slot, number, rejected)
        text, failure, usage, model = await ask(
            self.client,
            self.store,
            self.counter,
            request,
            key=_key(slot.key, "situation", number),
            slot_key=slot.key,
            stage="generate",
        )
        situation = None
        if failure is None:
            situation, failure = parse_situation(text, pair=slot.partner is not None)
        # Without a judge, the stated answers are the check that the passage (or both) meet this need.
        if situation is not None and not self.config.judge and not grounded(situation, slot):
            failure = "answer_not_in_passage"
        overlap = None if situation is None else situation_overlap(situation, slot)
        bound = self.config.max_overlap
        if failure is None and overlap is not None and bound is not None and overlap > bound:
            failure = "situation_overlap"  # step 2 would read the passage's words from it
        if failure is None and situation is not None and copies_passage(situation, slot):
            failure = "situation_verbatim"  # whatever the bound: step 2 would see the passage itself
        if situation is None or overlap is None or failure is not None:
            own = ("answer_not_in_passage", "situation_overlap", "situation_verbatim")
            reason = failure if failure in own else f"situation_{failure}"
            return SituationCandidate(
                None, reason, attempt, usage, model, request.seed, text, None, number, overlap
            )
        return situation, usage, overlap


# A stand-in situation of about SITUATION_TOKENS, to count step 2's prompt before step 1 has run.
_SITUATION_STAND_IN = Situation("a" + " user" * 8, "I am trying to" + " do something" * 30, "quote " * 20)


@dataclass(frozen=True)
class SituationStrategy:
    """The situation strategy prepared for a run: both steps' prompts, the feedback after a rejected
    situation, and step 1 over two chunks (``multi_chunk``)."""

    situation_prompt: PromptTemplate
    query_prompt: PromptTemplate
    feedback_prompt: PromptTemplate
    """Sent after a rejected situation (``prompts/situation_feedback.md``)."""
    pair_prompt: PromptTemplate | None = None
    """Step 1 over two chunks (``prompts/situation_pair.md``), with ``multi_chunk``."""
    name: str = "situation"
    calls: int = 2  # the situation, then the query

    audience: str = DEFAULT_AUDIENCE
    """Who searches and where, as the prompts say it (``audience_of``)."""
    audience_given: bool = False
    """Whether ``audience`` was given (then it is part of the generator; else the prompts hold it)."""

    @classmethod
    def from_config(cls, config: GenerateConfig) -> SituationStrategy:
        situation = step_prompt(
            config.prompt_situation, "situation", SITUATION_VARIABLES, "--prompt-situation"
        )
        query = step_prompt(config.prompt_query, "situation_query", QUERY_VARIABLES, "--prompt-query")
        return cls(
            situation,
            query,
            builtin_prompt("situation_feedback"),
            builtin_prompt("situation_pair") if config.multi_chunk else None,
            audience=audience_of(config),
            audience_given=config.audience is not None,
        )

    @property
    def prompt_ref(self) -> PromptRef:
        return strategy_prompt_ref(self.situation_prompt, self.query_prompt)

    def describe(self) -> dict[str, Any]:
        # ``prompt_sha256`` names both prompts at once, as ``provenance.prompt`` does.
        pair = {} if self.pair_prompt is None else {"pair_situation_sha256": self.pair_prompt.sha256}
        return {
            "prompt_sha256": self.prompt_ref.sha256,
            "situation_sha256": self.situation_prompt.sha256,
            "query_sha256": self.query_prompt.sha256,
            "situation_feedback_sha256": self.feedback_prompt.sha256,
            # Only when given: the default follows from the prompts and the style examples.
            **({"audience": self.audience} if self.audience_given else {}),
            **pair,  # only with multi_chunk: a run without pairs keeps the keys it had
        }

    def source(self, context: SourceContext) -> SituationQuestions:
        return SituationQuestions(
            context.client,
            self.situation_prompt,
            self.query_prompt,
            context.config,
            context.style_examples,
            context.store,
            context.counter,
            context.feedback,
            context.forms,
            situation_feedback=self.feedback_prompt,
            pair_template=self.pair_prompt,
            audience=self.audience,
        )

    def examine(self, slot: Slot, candidate: Candidate) -> str | None:
        return None  # the situation's own check (answer_in_passage) runs before its query is asked

    def provenance(self, candidate: Candidate) -> tuple[PromptRef, dict[str, Any]]:
        """Both prompts (step 1's over two chunks for a question over two), the situation written and
        its overlap with the passage."""
        if not isinstance(candidate, SituationCandidate):
            return self.prompt_ref, {"strategy": self.name}
        written = candidate.situation
        situation, query = self.situation_prompt, self.query_prompt
        if written is not None and written.answer_b is not None and self.pair_prompt is not None:
            situation = self.pair_prompt
        return self.prompt_ref, {
            "strategy": self.name,
            "prompts": {
                "situation": {"name": situation.name, "sha256": situation.sha256},
                "query": {"name": query.name, "sha256": query.sha256},
            },
            "situation": None if written is None else written.to_dict(),
            "situation_overlap": None
            if candidate.situation_overlap is None
            else round(candidate.situation_overlap, 4),
        }

    def planned(self, slot: Slot, form_instruction: str, style_examples: str) -> tuple[PlannedRequest, ...]:
        step2 = query_messages(
            self.query_prompt,
            slot,
            _SITUATION_STAND_IN,
            form_instruction,
            style_examples,
            audience=self.audience,
        )
        pair = slot.partner is not None and self.pair_prompt is not None
        template = self.pair_prompt if pair and self.pair_prompt is not None else self.situation_prompt
        step1 = situation_messages(template, slot, audience=self.audience, style_examples=style_examples)
        return (
            PlannedRequest(step1, SITUATION_TOKENS),
            PlannedRequest(step2, ANSWER_TOKENS),
        )


def check_config(config: GenerateConfig) -> None:
    """A prompt file replaces the direct prompt, which this strategy does not use."""
    if config.prompt is not None:
        raise InputError(
            "a prompt file replaces the direct prompt: the situation strategy has two prompts of its own",
            hint="add --strategy direct (strategy = 'direct'), or leave the prompt file out",
        )


STRATEGY = StrategySpec(
    name="situation",
    summary="a first call sees the passage and writes the user's situation; a second writes the "
    "query from the situation alone, without the passage",
    prepare=SituationStrategy.from_config,
    check=check_config,
)

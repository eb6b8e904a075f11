"""Where candidate questions come from: the question source protocol, the one-call question prompt,
and the judge.

Each model answer goes through the cache first (``generate.asking``): an answer whose request key is
cached is replayed without a request, so a rerun, a resumed run or a run with tightened filters pays
for nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from realrecall.generate.answers import JUDGE_SCHEMA, QUESTION_SCHEMA, Verdict, parse_verdict
from realrecall.generate.asking import RequestCollector, ask, derive_seed
from realrecall.generate.languages import LANGUAGE_NAMES
from realrecall.generate.question_types import PAIR_TYPES, QUESTION_TYPES
from realrecall.generate.templates import PromptTemplate, delimit_data, render
from realrecall.llm.types import ChatClient, ChatRequest, Usage

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.planner import Slot
    from realrecall.generate.store import GenerationStore
    from realrecall.generate.summary import StageCounter

__all__ = [
    "PROBLEMS",
    "AnswerabilityJudge",
    "Candidate",
    "QuestionSource",
    "judge_description",
    "problem_text",
    "question_messages",
    "question_request",
    "slot_searchable_text",
    "slot_text",
]

DEFAULT_PERSONA = "a typical user who has a question and has not read the documentation"


@dataclass(frozen=True)
class Candidate:
    """One candidate question, or the reason there is none; ``usage`` is what this answer cost when it
    was asked (also when it is replayed from the cache), so that ``provenance.usage`` sums every attempt.

    ``text`` is the answer as the model wrote it (for the regeneration feedback).
    """

    question: str | None
    failure: str | None
    attempt: int
    usage: Usage
    model: str
    request_seed: int | None = None
    text: str = ""


# Why an answer was rejected, in the words the regeneration feedback gives the model.
PROBLEMS: Mapping[str, str] = {
    "overlap": "it copies the passage's own words; ask it the way someone who has not read the passage would",
    "near_duplicate": "it repeats a question already written; ask about something else the passage answers",
    "unanswerable": "the passage does not answer it; ask something the passage itself answers",
    "refusal": "no question was written; the passage is only material to ask about",
    "truncated": "the answer was cut off; keep the question short",
    "question_too_long": "it is too long; a search question is a short line",
    "wrong_language": "it is not written in the language asked for; write it in that language",
}
DEFAULT_PROBLEM = 'it is not a JSON object {"question": "..."} holding one question'


def problem_text(reason: str, problems: Mapping[str, str] | None = None) -> str:
    """What the regeneration feedback tells the model about a rejection; ``problems``: a strategy's
    own reasons (those its ``examine`` gives), in the feedback's words."""
    if problems is not None and reason in problems:
        return problems[reason]
    if reason.startswith("judge_"):
        return "it could not be checked against the passage; write another question the passage answers"
    return PROBLEMS.get(reason, DEFAULT_PROBLEM)


class QuestionSource(Protocol):
    async def propose(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None) -> Candidate:
        """Candidate number ``attempt``; ``rejected`` is the previous candidate and why it was refused."""
        ...


def question_request(
    config: GenerateConfig,
    messages: tuple[dict[str, str], ...],
    feedback: PromptTemplate,
    slot: Slot,
    attempt: int,
    rejected: tuple[Candidate, str] | None,
    *,
    problems: Mapping[str, str] | None = None,
) -> ChatRequest:
    """The request for a slot's question from ``messages``, whichever strategy wrote them.

    A regeneration shows the model its rejected answer and why (``feedback``; ``problems``: the
    strategy's own reasons, see ``problem_text``), so it does not repeat it.
    """
    if rejected is not None:
        previous, reason = rejected
        answer = {"role": "assistant", "content": previous.text[:2000] or "(no answer)"}
        messages = (*messages, answer, *render(feedback, {"problem": problem_text(reason, problems)}))
    return ChatRequest(
        messages=messages,
        model=config.model,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        json_schema=QUESTION_SCHEMA,
        schema_name="question",
        seed=derive_seed(config.seed, slot.key, attempt),
    )


def question_messages(
    template: PromptTemplate, slot: Slot, style_examples: str, *, form_instruction: str = ""
) -> tuple[dict[str, str], ...]:
    """The chat messages asking for ``slot``'s question (the chunk text is delimited as data).

    ``form_instruction``: the query form and length asked for (``generate.forms.FormChoice``).

    A slot over two chunks (``slot.partner``) also fills ``passage_b`` and ``title_b``, and the
    description of its type comes from ``generate.pairs.PAIR_TYPES``.
    """
    partner = slot.partner
    values = {
        "passage": delimit_data(slot.chunk.text, "passage"),
        "title": " ".join(slot.chunk.title.split()) or "(none)",
        "question_type": slot.type,
        "type_description": {**QUESTION_TYPES, **PAIR_TYPES}[slot.type]
        if partner is not None
        else QUESTION_TYPES[slot.type],
        "language": LANGUAGE_NAMES.get(slot.language, slot.language),
        "persona": slot.persona or DEFAULT_PERSONA,
        "style_examples": style_examples,
        "form_instruction": form_instruction,
    }
    if partner is not None:
        values["passage_b"] = delimit_data(partner.text, "passage")
        values["title_b"] = " ".join(partner.title.split()) or "(none)"
    return render(template, {name: values.get(name, "") for name in template.variables})


def slot_text(slot: Slot) -> str:
    """The text a slot's question is about: its chunk's, then its partner's (a question over two)."""
    if slot.partner is None:
        return slot.chunk.text
    return f"{slot.chunk.text}\n\n{slot.partner.text}"


def slot_searchable_text(slot: Slot) -> str:
    """What a slot's question (and situation) is compared with for overlap: its chunk's searchable
    text (title included), and its partner's."""
    if slot.partner is None:
        return slot.chunk.searchable_text()
    return f"{slot.chunk.searchable_text()}\n{slot.partner.searchable_text()}"


def judge_description(template: PromptTemplate, config: GenerateConfig) -> dict[str, Any]:
    """Which judge gave a verdict (model and prompt), as recorded in ``provenance.judge``."""
    return {
        "model": config.effective_judge_model,
        "prompt": {"name": template.name, "sha256": template.sha256},
    }


@dataclass
class AnswerabilityJudge:
    """Asks a chat model whether the chunk answers a question (``--judge``)."""

    client: ChatClient | RequestCollector
    template: PromptTemplate
    config: GenerateConfig
    store: GenerationStore
    counter: StageCounter

    def describe(self) -> dict[str, Any]:
        return judge_description(self.template, self.config)

    async def check(self, slot: Slot, question: str) -> tuple[Verdict | None, str | None, Usage]:
        """``(verdict, None, usage)``, or ``(None, reason, usage)`` when no valid verdict came back."""
        values = {
            "passage": delimit_data(slot_text(slot), "passage"),
            "question": delimit_data(question, "question"),
            "language": LANGUAGE_NAMES.get(slot.language, slot.language),
        }
        messages = render(self.template, {name: values.get(name, "") for name in self.template.variables})
        total = Usage(0, 0)
        failure: str | None = None
        hashes = [slot.chunk.content_hash] + ([] if slot.partner is None else [slot.partner.content_hash])
        identity = json.dumps([self.template.sha256, self.config.effective_judge_model, *hashes])
        for attempt in range(self.config.max_attempts):
            request = ChatRequest(
                messages=messages,
                model=self.config.effective_judge_model,
                temperature=0.0,
                max_tokens=200,
                json_schema=JUDGE_SCHEMA,
                schema_name="verdict",
                seed=derive_seed("judge", attempt),
            )
            key = hashlib.sha256(f"{identity}\x1f{question}\x1f{attempt}".encode()).hexdigest()
            text, failure, usage, _ = await ask(
                self.client, self.store, self.counter, request, key=key, slot_key=slot.key, stage="judge"
            )
            total = total + usage
            if failure is None:
                parsed = parse_verdict(text)
                if parsed[0] is not None:
                    return parsed[0], None, total
                failure = parsed[1]
            self.counter.failures[failure] += 1
            if attempt + 1 < self.config.max_attempts:
                self.counter.regenerations += 1
        return None, failure, total

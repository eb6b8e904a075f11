"""The direct strategy: one request sees the passage and writes the query, asked not to copy it.

The prompt is ``prompts/question_generation.md``, or the ``prompt`` file that replaces it (a prompt
file makes ``direct`` the default strategy). A question over two chunks (``multi_chunk``) is written by
``prompts/question_generation_pair.md``, which sees both passages. A rejected answer is asked again
with the rejection fed back (``sources.question_request``); every answer is cached under the slot key
and the attempt.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from realrecall.errors import InputError
from realrecall.generate.answers import ANSWER_TOKENS, parse_question
from realrecall.generate.asking import RequestCollector, ask
from realrecall.generate.sources import Candidate, question_messages, question_request
from realrecall.generate.strategy import PlannedRequest, SourceContext, StrategySpec
from realrecall.generate.templates import PromptTemplate, builtin_prompt, load_prompt
from realrecall.llm.types import ChatClient, ChatRequest
from realrecall.provenance import PromptRef

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.forms import FormPlan
    from realrecall.generate.planner import Slot
    from realrecall.generate.store import GenerationStore
    from realrecall.generate.summary import StageCounter

__all__ = ["STRATEGY", "DirectStrategy", "LLMQuestions"]


@dataclass
class LLMQuestions:
    """Questions written by a chat model with the question-generation prompt."""

    client: ChatClient | RequestCollector | None
    template: PromptTemplate
    config: GenerateConfig
    style_examples: str
    store: GenerationStore
    counter: StageCounter
    feedback: PromptTemplate
    pair_template: PromptTemplate | None = None
    """The prompt of questions over two chunks (``slot.partner``)."""
    forms: FormPlan | None = None
    """Each slot's query form and length (``generate.forms``); None: none asked for."""

    def request(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None = None) -> ChatRequest:
        template = self.template if slot.partner is None or self.pair_template is None else self.pair_template
        form = None if self.forms is None else self.forms.choose(self.config.seed, slot.chunk.id, slot.index)
        instruction = "" if form is None else form.instruction
        messages = question_messages(template, slot, self.style_examples, form_instruction=instruction)
        return question_request(self.config, messages, self.feedback, slot, attempt, rejected)

    async def propose(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None) -> Candidate:
        request = self.request(slot, attempt, rejected)
        text, failure, usage, model = await ask(
            self.client,
            self.store,
            self.counter,
            request,
            key=hashlib.sha256(f"{slot.key}\x1fgenerate\x1f{attempt}".encode()).hexdigest(),
            slot_key=slot.key,
            stage="generate",
        )
        question = None
        if failure is None:
            question, failure = parse_question(text)
        return Candidate(question, failure, attempt, usage, model, request.seed, text)


@dataclass(frozen=True)
class DirectStrategy:
    """The direct strategy prepared for a run: its prompt, and the pair prompt with ``multi_chunk``."""

    prompt: PromptTemplate
    pair_prompt: PromptTemplate | None = None
    name: str = "direct"
    calls: int = 1

    @classmethod
    def from_config(cls, config: GenerateConfig) -> DirectStrategy:
        prompt = load_prompt(config.prompt) if config.prompt else builtin_prompt("question_generation")
        pair_prompt = builtin_prompt("question_generation_pair") if config.multi_chunk else None
        return cls(prompt, pair_prompt)

    def describe(self) -> dict[str, Any]:
        keys: dict[str, Any] = {"prompt_sha256": self.prompt.sha256}
        if self.pair_prompt is not None:  # only then: a run without pairs keeps the keys it had
            keys["pair_prompt_sha256"] = self.pair_prompt.sha256
        return keys

    def source(self, context: SourceContext) -> LLMQuestions:
        return LLMQuestions(
            context.client,
            self.prompt,
            context.config,
            context.style_examples,
            context.store,
            context.counter,
            feedback=context.feedback,
            pair_template=self.pair_prompt,
            forms=context.forms,
        )

    def examine(self, slot: Slot, candidate: Candidate) -> str | None:
        return None

    def provenance(self, candidate: Candidate) -> tuple[PromptRef, dict[str, Any]]:
        # The one-chunk prompt names the generator of every question, those over two chunks too.
        return PromptRef(name=self.prompt.name, sha256=self.prompt.sha256), {"strategy": self.name}

    def planned(self, slot: Slot, form_instruction: str, style_examples: str) -> tuple[PlannedRequest, ...]:
        template = self.prompt if slot.partner is None or self.pair_prompt is None else self.pair_prompt
        messages = question_messages(template, slot, style_examples, form_instruction=form_instruction)
        return (PlannedRequest(messages, ANSWER_TOKENS),)


def check_config(config: GenerateConfig) -> None:
    """The situation strategy's own options have no use here: refused, never silently ignored."""
    given = [
        option
        for option, value in (
            ("audience (--audience)", config.audience),
            ("prompt_situation (--prompt-situation)", config.prompt_situation),
            ("prompt_query (--prompt-query)", config.prompt_query),
        )
        if value is not None
    ]
    if given:
        raise InputError(
            f"{', '.join(given)}: the situation strategy's options, which the direct strategy does not use",
            hint="leave --strategy direct (and --prompt) out, or leave them out",
        )


STRATEGY = StrategySpec(
    name="direct",
    summary="one call sees the passage and writes the query (asked not to copy it)",
    prepare=DirectStrategy.from_config,
    check=check_config,
)

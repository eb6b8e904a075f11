"""A prompt strategy added the documented way: this one file (and its prompt), plus one
``register(STRATEGY)`` call.

One request a question, from its own prompt (``keyword_strategy.md``); its own check rejects an
answer written as a question (``not_keywords``), with its own words in the regeneration feedback;
it refuses a ``prompt`` file, which it has no use for.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.generate.answers import parse_question
from realrecall.generate.asking import ask
from realrecall.generate.config import GenerateConfig
from realrecall.generate.planner import Slot
from realrecall.generate.sources import Candidate, question_request
from realrecall.generate.strategy import PlannedRequest, SourceContext, StrategySpec
from realrecall.generate.templates import PromptTemplate, delimit_data, load_prompt, render
from realrecall.provenance import PromptRef

PROMPT = Path(__file__).with_name("keyword_strategy.md")
PROBLEMS = {"not_keywords": "it is a question; write the few keywords a user would type instead"}
ANSWER_TOKENS = 12


def messages(template: PromptTemplate, slot: Slot, style_examples: str) -> tuple[dict[str, str], ...]:
    values = {
        "passage": delimit_data(slot.chunk.text, "passage"),
        "language": slot.language,
        "style_examples": style_examples,
    }
    return render(template, values)


@dataclass
class KeywordQuestions:
    prompt: PromptTemplate
    context: SourceContext

    async def propose(self, slot: Slot, attempt: int, rejected: tuple[Candidate, str] | None) -> Candidate:
        context = self.context
        asked = messages(self.prompt, slot, context.style_examples)
        request = question_request(
            context.config, asked, context.feedback, slot, attempt, rejected, problems=PROBLEMS
        )
        text, failure, usage, model = await ask(
            context.client,
            context.store,
            context.counter,
            request,
            key=hashlib.sha256(f"{slot.key}\x1fkeywords\x1f{attempt}".encode()).hexdigest(),
            slot_key=slot.key,
            stage="generate",
        )
        question = None
        if failure is None:
            question, failure = parse_question(text)
        return Candidate(question, failure, attempt, usage, model, request.seed, text)


@dataclass(frozen=True)
class KeywordStrategy:
    prompt: PromptTemplate
    name: str = "keywords"
    calls: int = 1

    @classmethod
    def from_config(cls, config: GenerateConfig) -> KeywordStrategy:
        return cls(load_prompt(PROMPT))

    def describe(self) -> dict[str, Any]:
        return {"prompt_sha256": self.prompt.sha256}

    def source(self, context: SourceContext) -> KeywordQuestions:
        return KeywordQuestions(self.prompt, context)

    def examine(self, slot: Slot, candidate: Candidate) -> str | None:
        question = candidate.question or ""
        return "not_keywords" if question.rstrip().endswith("?") else None

    def provenance(self, candidate: Candidate) -> tuple[PromptRef, dict[str, Any]]:
        return PromptRef(name=self.prompt.name, sha256=self.prompt.sha256), {}

    def planned(self, slot: Slot, form_instruction: str, style_examples: str) -> tuple[PlannedRequest, ...]:
        return (PlannedRequest(messages(self.prompt, slot, style_examples), ANSWER_TOKENS),)


def check(config: GenerateConfig) -> None:
    if config.prompt is not None:
        raise InputError("the keywords strategy has a prompt of its own", hint="leave the prompt file out")


STRATEGY = StrategySpec(
    name="keywords",
    summary="one call sees the passage and writes a few keywords (a strategy added by a test)",
    prepare=KeywordStrategy.from_config,
    check=check,
)

"""The dry run: how many requests a run would send, about how many tokens, and what they would cost.

Prompt tokens are counted on the rendered prompts of the questions still to write (cached or already
written ones cost nothing). The count uses tiktoken when its encoding for the model is in tiktoken's
local cache (``TIKTOKEN_CACHE_DIR``, or its default folder); tiktoken otherwise downloads encodings,
which this tool never does at run time, so the fallback is OpenAI's rule of thumb of about four
characters a token (plus four tokens of framing per message). ``token_method`` says which one was
used. Answer tokens are estimated at ``ANSWER_TOKENS`` per request (a short question or verdict).

``requests`` assumes every first answer is kept; ``max_requests`` is the bound when every answer is
rejected until the retry budget (``max_attempts``) is spent. With the model screen (``--screen``)
they include its request for each chunk without a cached verdict (``SCREEN_ANSWER_TOKENS`` out), and
the chunks a cached verdict skips have no questions counted.

For the ``llm`` backend the estimate is made for both strategies (``strategies``): ``direct`` sends one
request a question; ``situation`` two, the first with the passage and an answer of about
``SITUATION_TOKENS``, the second with a situation of that size instead of the passage. The top-level
figures are those of the run's own strategy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus
from realrecall.generate.config import GenerateConfig
from realrecall.generate.planner import Slot
from realrecall.generate.run import Setup, check_paths, prepare, remembered_sample_rate, still_valid
from realrecall.generate.screening import cached_screen, screen_messages
from realrecall.generate.situation import Situation, query_messages, situation_messages
from realrecall.generate.sources import question_messages
from realrecall.generate.store import GenerationStore
from realrecall.generate.summary import cost
from realrecall.generate.templates import builtin_prompt
from realrecall.tokens import token_counter

__all__ = [
    "ANSWER_TOKENS",
    "SCREEN_ANSWER_TOKENS",
    "SITUATION_TOKENS",
    "CostEstimate",
    "StrategyEstimate",
    "estimate",
    "token_counter",
]

ANSWER_TOKENS = 40
SCREEN_ANSWER_TOKENS = 30  # the model screen's {"askable": ..., "reason": "..."}
SITUATION_TOKENS = 120  # step 1's answer: who the user is, their situation, the quoted answer
# A stand-in situation of about SITUATION_TOKENS, to count step 2's prompt before step 1 has run.
_SITUATION_STAND_IN = Situation("a" + " user" * 8, "I am trying to" + " do something" * 30, "quote " * 20)
_JUDGE_EXTRA_TOKENS = 250  # the judge prompt's own words, beside the passage and the question


@dataclass(frozen=True)
class StrategyEstimate:
    """What the questions still to write would cost under one strategy (the judge included)."""

    strategy: str
    requests: int
    tokens_in: int
    tokens_out: int
    cost: float | None


@dataclass(frozen=True)
class CostEstimate:
    """What ``generate`` would send, before sending anything."""

    slots: int
    pending: int
    requests: int
    max_requests: int
    tokens_in: int
    tokens_out: int
    cost: float | None
    token_method: str
    strategies: tuple[StrategyEstimate, ...] = ()
    """Both strategies' figures (llm backend), the run's own first."""
    screen_requests: int = 0
    """The model screen's requests (``--screen``), counted in ``requests`` and every strategy's."""


def estimate(corpus: Corpus, output_path: str | Path, config: GenerateConfig) -> CostEstimate:
    """The requests, tokens and cost a ``generate`` run with these arguments would need."""
    check_paths(corpus, output_path, config)  # what the run would refuse, a dry run refuses too
    setup = prepare(corpus, config, remembered_rate=remembered_sample_rate(output_path, config))
    store = GenerationStore(output_path, config.cache_path)
    store.load(exclusive=False)
    store.plan((slot.key for slot in setup.slots), keep=lambda record: still_valid(record, setup))
    pending = [slot for slot in setup.slots if slot.key not in store.records]
    count, method = token_counter(config.model)
    screen = (0, 0, 0)  # requests, tokens in, tokens out
    if config.screen == "model":
        screen, skipped = _screen_estimate(setup, store.cache, count)
        pending = [slot for slot in pending if slot.chunk.id not in skipped]
    judge = screen
    if config.judge:
        tokens = sum(count(slot.chunk.text) + _JUDGE_EXTRA_TOKENS for slot in pending)
        judge = (screen[0] + len(pending), screen[1] + tokens, screen[2] + len(pending) * ANSWER_TOKENS)
    strategies: list[StrategyEstimate] = []
    if setup.prompt is not None:  # the llm backend: prepare reads a question prompt for no other
        own = config.effective_strategy or "direct"
        for name in sorted(("direct", "situation"), key=lambda name: name != own):
            strategies.append(_strategy_estimate(name, setup, pending, count, judge))
    else:
        strategies.append(_strategy_estimate("extractive", setup, pending, count, judge))
    chosen = strategies[0]
    return CostEstimate(
        slots=len(setup.slots),
        pending=len(pending),
        requests=chosen.requests,
        max_requests=chosen.requests * config.max_attempts,
        tokens_in=chosen.tokens_in,
        tokens_out=chosen.tokens_out,
        cost=chosen.cost,
        token_method=method,
        strategies=tuple(strategies) if setup.prompt is not None else (),
        screen_requests=screen[0],
    )


def _screen_estimate(
    setup: Setup, cache: Mapping[str, Mapping[str, Any]], count: Callable[[str], int]
) -> tuple[tuple[int, int, int], set[str]]:
    """The model screen's requests, tokens in and out (one request per chunk without a cached
    verdict), and the chunks its cached verdicts skip (their questions are not asked for)."""
    template = builtin_prompt("chunk_screen")
    chunks = list({slot.chunk.id: slot.chunk for slot in setup.slots}.values())
    to_ask, skipped = cached_screen(chunks, cache, template, setup.config)
    tokens = sum(
        count(message["content"]) + 4 for chunk in to_ask for message in screen_messages(template, chunk)
    )
    return (len(to_ask), tokens, len(to_ask) * SCREEN_ANSWER_TOKENS), set(skipped)


def _strategy_estimate(
    name: str,
    setup: Setup,
    pending: list[Slot],
    count: Callable[[str], int],
    judge: tuple[int, int, int],
) -> StrategyEstimate:
    """The requests and tokens of ``pending`` under strategy ``name`` (``extractive``: no model)."""

    def tokens(messages: tuple[dict[str, str], ...]) -> int:
        return sum(count(message["content"]) + 4 for message in messages)

    config = setup.config
    requests, tokens_in, tokens_out = judge
    prompt = setup.prompt
    situation_prompt, query_prompt = setup.situation_prompts or (
        builtin_prompt("situation"),
        builtin_prompt("situation_query"),
    )
    # The extractive backend (no prompt) sends no question request.
    for slot in pending if prompt is not None else ():
        form = (
            ""
            if setup.forms is None
            else setup.forms.choose(config.seed, slot.chunk.id, slot.index).instruction
        )
        if name == "situation":
            tokens_in += tokens(situation_messages(situation_prompt, slot))
            tokens_in += tokens(
                query_messages(query_prompt, slot, _SITUATION_STAND_IN, form, setup.style_text)
            )
            requests, tokens_out = requests + 2, tokens_out + SITUATION_TOKENS + ANSWER_TOKENS
        elif prompt is not None:
            tokens_in += tokens(question_messages(prompt, slot, setup.style_text, form_instruction=form))
            requests, tokens_out = requests + 1, tokens_out + ANSWER_TOKENS
    return StrategyEstimate(
        name, requests, tokens_in, tokens_out, cost(tokens_in, tokens_out, config.price_in, config.price_out)
    )

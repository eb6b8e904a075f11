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

For the ``llm`` backend the estimate is made for every registered strategy (``strategies``, from
``generate.strategies``), each counting the requests its ``planned`` says a first attempt sends:
``direct`` sends one request a question; ``situation`` two, the first with the passage and an answer
of about ``situation.SITUATION_TOKENS``, the second with a situation of that size instead of the
passage (a question over two chunks is written by the direct prompt, in one request). The top-level
figures are those of the run's own strategy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus
from realrecall.generate.answers import ANSWER_TOKENS
from realrecall.generate.config import GenerateConfig
from realrecall.generate.model_screen import cached_screen, screen_messages
from realrecall.generate.planner import Slot
from realrecall.generate.settle import still_valid
from realrecall.generate.setup import Setup, check_paths, prepare, remembered_sample_rate
from realrecall.generate.store import GenerationStore
from realrecall.generate.strategies import STRATEGIES
from realrecall.generate.strategy import Strategy
from realrecall.generate.summary import cost
from realrecall.generate.templates import builtin_prompt
from realrecall.tokens import token_counter

__all__ = [
    "ANSWER_TOKENS",
    "SCREEN_ANSWER_TOKENS",
    "CostEstimate",
    "StrategyEstimate",
    "estimate",
    "token_counter",
]

SCREEN_ANSWER_TOKENS = 30  # the model screen's {"askable": ..., "reason": "..."}
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
    """Every registered strategy's figures (llm backend), the run's own first."""
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
    if setup.strategy is not None:  # the llm backend
        own = config.effective_strategy
        for name in sorted(STRATEGIES, key=lambda name: name != own):
            strategy = setup.strategy if name == own else STRATEGIES[name].prepare(config)
            strategies.append(_strategy_estimate(name, strategy, setup, pending, count, judge))
    else:
        strategies.append(_strategy_estimate("extractive", None, setup, pending, count, judge))
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
        strategies=tuple(strategies) if setup.strategy is not None else (),
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
    strategy: Strategy | None,
    setup: Setup,
    pending: list[Slot],
    count: Callable[[str], int],
    judge: tuple[int, int, int],
) -> StrategyEstimate:
    """The requests and tokens of ``pending`` under ``strategy`` (None: the extractive backend, no model)."""
    config = setup.config
    requests, tokens_in, tokens_out = judge
    forms = setup.forms
    for slot in pending:
        form = "" if forms is None else forms.choose(config.seed, slot.chunk.id, slot.index).instruction
        for planned in () if strategy is None else strategy.planned(slot, form, setup.style_text):
            requests += 1
            tokens_in += sum(count(message["content"]) + 4 for message in planned.messages)
            tokens_out += planned.answer_tokens
    return StrategyEstimate(
        name, requests, tokens_in, tokens_out, cost(tokens_in, tokens_out, config.price_in, config.price_out)
    )

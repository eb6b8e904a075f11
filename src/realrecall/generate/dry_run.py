"""The dry run: how many requests a run would send, about how many tokens, and what they would cost.

Prompt tokens are counted on the rendered prompts of the questions still to write (cached or already
written ones cost nothing). The count uses tiktoken when its encoding for the model is in tiktoken's
local cache (``TIKTOKEN_CACHE_DIR``, or its default folder); tiktoken otherwise downloads encodings,
which this tool never does at run time, so the fallback is OpenAI's rule of thumb of about four
characters a token (plus four tokens of framing per message). ``token_method`` says which one was
used. Answer tokens are estimated at ``ANSWER_TOKENS`` per request (a short question or verdict).

``requests`` assumes every first answer is kept; ``max_requests`` is the bound when every answer is
rejected until the retry budget (``max_attempts``) is spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from realrecall.corpus import Corpus
from realrecall.generate.config import GenerateConfig
from realrecall.generate.run import check_paths, prepare, remembered_sample_rate, still_valid
from realrecall.generate.sources import question_messages
from realrecall.generate.store import GenerationStore
from realrecall.generate.summary import cost
from realrecall.tokens import token_counter

__all__ = ["ANSWER_TOKENS", "CostEstimate", "estimate", "token_counter"]

ANSWER_TOKENS = 40
_JUDGE_EXTRA_TOKENS = 250  # the judge prompt's own words, beside the passage and the question


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


def estimate(corpus: Corpus, output_path: str | Path, config: GenerateConfig) -> CostEstimate:
    """The requests, tokens and cost a ``generate`` run with these arguments would need."""
    check_paths(corpus, output_path, config)  # what the run would refuse, a dry run refuses too
    setup = prepare(corpus, config, remembered_rate=remembered_sample_rate(output_path, config))
    store = GenerationStore(output_path, config.cache_path)
    store.load(exclusive=False)
    store.plan((slot.key for slot in setup.slots), keep=lambda record: still_valid(record, setup))
    pending = [slot for slot in setup.slots if slot.key not in store.records]
    count, method = token_counter(config.model)
    tokens_in = 0
    requests = 0
    if setup.prompt is not None:  # the llm backend: prepare reads a question prompt for no other
        for slot in pending:
            messages = question_messages(setup.prompt, slot, setup.style_text)
            tokens_in += sum(count(message["content"]) + 4 for message in messages)
        requests = len(pending)
    if config.judge:
        for slot in pending:
            tokens_in += count(slot.chunk.text) + _JUDGE_EXTRA_TOKENS
        requests += len(pending)
    tokens_out = requests * ANSWER_TOKENS
    return CostEstimate(
        slots=len(setup.slots),
        pending=len(pending),
        requests=requests,
        max_requests=requests * config.max_attempts,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost(tokens_in, tokens_out, config.price_in, config.price_out),
        token_method=method,
    )

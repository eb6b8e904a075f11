"""What a prompt strategy is: how the ``llm`` backend turns a question slot into model requests.

A strategy is one module defining ``STRATEGY = StrategySpec(...)`` and one line in the registry
(``generate.strategies``). Its ``prepare(config)`` reads its prompt files and returns a ``Strategy``,
which the run asks for everything that depends on how questions are written:

- ``describe()``: the generator's keys that name its prompts (every slot's cache key holds them, so
  editing a prompt makes new questions and leaves the old answers cached under the old keys);
- ``source(context)``: the ``QuestionSource`` that writes a slot's candidates (through the answer
  cache, ``generate.asking``);
- ``examine(slot, candidate)``: its own checks of a valid candidate, before the run's filters
  (language, overlap, near-duplicates, the judge); a reason rejects the candidate, which is then
  counted as filtered and asked again with that reason;
- ``provenance(candidate)``: ``provenance.prompt`` and the keys the question records (``strategy``
  and whatever the strategy wrote on the way);
- ``planned(slot, form_instruction, style_examples)``: the requests an attempt would send, for the
  dry run's token count; ``calls``: the most requests one attempt sends (a batch run asks in rounds
  of one request per slot).

The options of the whole run (model, forms, style examples, the regeneration feedback) reach the
source through ``SourceContext``. A strategy's own options are fields of ``GenerateConfig`` (so the
command line, pipeline.toml and Python take them like any other): ``prepare`` reads them (``prompt``,
the file that replaces the direct strategy's prompt), and ``check(config)`` refuses, when the config
is made, what the strategy cannot run (a prompt file the situation strategy has no use for).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from realrecall.generate.asking import RequestCollector
    from realrecall.generate.config import GenerateConfig
    from realrecall.generate.forms import FormPlan
    from realrecall.generate.planner import Slot
    from realrecall.generate.sources import Candidate, QuestionSource
    from realrecall.generate.store import GenerationStore
    from realrecall.generate.summary import StageCounter
    from realrecall.generate.templates import PromptTemplate
    from realrecall.llm.types import ChatClient
    from realrecall.provenance import PromptRef

__all__ = ["PlannedRequest", "SourceContext", "Strategy", "StrategySpec", "accept_any_config"]


@dataclass(frozen=True)
class SourceContext:
    """What the run gives a strategy's question source: the client, the cache and the shared options."""

    client: ChatClient | RequestCollector | None
    config: GenerateConfig
    store: GenerationStore
    counter: StageCounter
    """The generation stage's counters (requests, cached answers, failures)."""
    style_examples: str
    """The real questions shown to the model, formatted (``generate.style``)."""
    feedback: PromptTemplate
    """The regeneration feedback: a rejected answer and why, shown before asking again."""
    forms: FormPlan
    """Each slot's query form and length (``generate.forms``)."""


@dataclass(frozen=True)
class PlannedRequest:
    """One request an attempt would send, for the dry run: its messages and the answer tokens expected."""

    messages: tuple[Mapping[str, str], ...]
    answer_tokens: int


class Strategy(Protocol):
    """A strategy prepared for one run: its prompts read (see the module doc)."""

    @property
    def name(self) -> str:
        """The registry name, recorded as ``provenance.strategy``."""
        ...

    @property
    def calls(self) -> int:
        """The most model requests one attempt at a question sends."""
        ...

    def describe(self) -> dict[str, Any]:
        """The generator's keys naming this strategy's prompts (part of every slot's cache key)."""
        ...

    def source(self, context: SourceContext) -> QuestionSource:
        """The source of this run's candidate questions."""
        ...

    def examine(self, slot: Slot, candidate: Candidate) -> str | None:
        """Why a valid candidate is rejected by the strategy's own checks (None: it passes them)."""
        ...

    def provenance(self, candidate: Candidate) -> tuple[PromptRef, dict[str, Any]]:
        """A kept question's ``provenance.prompt``, and its other provenance keys (``strategy``...)."""
        ...

    def planned(self, slot: Slot, form_instruction: str, style_examples: str) -> tuple[PlannedRequest, ...]:
        """The requests a first attempt at ``slot`` sends (the dry run counts their tokens)."""
        ...


def accept_any_config(config: GenerateConfig) -> None:
    """The ``check`` of a strategy that can run with every config."""


@dataclass(frozen=True)
class StrategySpec:
    """One registry entry: the name, one line for ``--help`` and the docs, and how to prepare it.

    ``prepare(config)`` reads the strategy's prompt files and sends nothing; it may be called for a
    strategy the config does not choose (the dry run prices every registered strategy), so it checks
    nothing: ``check(config)`` refuses, when a config choosing this strategy is made, what it cannot
    run (one ``InputError`` line naming the fix).
    """

    name: str
    summary: str
    prepare: Callable[[GenerateConfig], Strategy]
    check: Callable[[GenerateConfig], None] = accept_any_config

"""The gold record of a kept question: its type and form by the real set's rules, its evidence, what
it was asked to be, the sample it came from, and its provenance (how it was made, what it cost)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from realrecall._version import __version__
from realrecall.generate.anchors import question_evidence
from realrecall.gold import GoldQuery
from realrecall.provenance import PromptRef, Provenance, TokenUsage
from realrecall.text_features import identifier_overlap

if TYPE_CHECKING:
    from realrecall.generate.planner import Slot
    from realrecall.generate.setup import Setup
    from realrecall.generate.sources import Candidate
    from realrecall.llm.types import Usage

__all__ = ["question_record"]


def question_record(
    setup: Setup,
    slot: Slot,
    candidate: Candidate,
    question: str,
    *,
    overlap: float,
    judged: dict[str, Any] | None,
    spent: Usage,
    dropped: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The gold record of ``question``, written for ``slot`` from ``candidate``.

    ``overlap``: its lexical overlap with the slot's text; ``judged``: the judge's verdict (None without
    a judge); ``spent``: the tokens of every answer the slot took (rejected attempts and verdicts too);
    ``dropped``: the parameters the endpoint refused for the slot's requests. The provenance says what
    was really sent: no temperature (or request seed) when the endpoint refused it, and which were left
    out (``dropped_parameters``).
    """
    config = setup.config
    prompt, strategy_keys = _strategy_provenance(setup, candidate)
    provenance = Provenance(
        generator=f"realrecall {__version__}",
        backend=config.backend,
        model=candidate.model,
        prompt=prompt,
        temperature=config.temperature if config.backend == "llm" and "temperature" not in dropped else None,
        seed=config.seed,
        request_seed=None if "seed" in dropped else candidate.request_seed,
        persona=slot.persona,
        chunk_hash=slot.chunk.content_hash,
        question_index=slot.index,
        attempt=candidate.attempt,
        usage=TokenUsage(prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        overlap=round(overlap, 4),
        style_example_ids=setup.style.ids,
        judge=judged,
        slot_key=slot.key,
        # Identifiers (a setting, an error code) the prompt allows are counted apart from ``overlap``.
        extra={
            "identifier_overlap": round(identifier_overlap(question, slot.chunk.searchable_text()), 4),
            **strategy_keys,
            **({"dropped_parameters": sorted(dropped)} if dropped else {}),
        },
    )
    # The type and form come from the rules that label real questions, so that strata match; the
    # type an LLM was asked to write is kept beside it (a model does not always write what it is
    # asked for, and the extractive backend is asked for nothing).
    query_type, _ = setup.rules.classify(question)
    form, _ = setup.rules.classify_form(question)
    requested = {"requested_type": slot.type} if config.backend == "llm" else {}
    if setup.forms is not None:  # the llm backend, which asks for a form
        requested["requested_form"] = setup.forms.choose(config.seed, slot.chunk.id, slot.index).form
    gold = {slot.chunk.id: 1}
    pair: dict[str, Any] = {}
    if slot.partner is not None:
        gold[slot.partner.id] = 1
        pair = {"pair": {"chunk": slot.partner.id, "relation": setup.relations.get(slot.chunk.id)}}
    # Written by the gold writer's own record function, so a synthetic record is a gold record.
    return GoldQuery(
        query_id=slot.query_id,
        query=question,
        gold=gold,
        evidence=question_evidence(slot, question, candidate, extractive=setup.strategy is None),
        origin="synthetic",
        type=query_type,
        language=slot.language,
        metadata={**requested, "form": form, **pair, **_sampled(setup, slot)},
        provenance=provenance,
    ).to_record()


def _strategy_provenance(setup: Setup, candidate: Candidate) -> tuple[PromptRef | None, dict[str, Any]]:
    """``provenance.prompt`` and the strategy's keys (its name first); none for the extractive backend."""
    strategy, name = setup.strategy, setup.config.effective_strategy
    if strategy is None or name is None:
        return None, {}
    prompt, keys = strategy.provenance(candidate)
    return prompt, {"strategy": name, **keys}


def _sampled(setup: Setup, slot: Slot) -> dict[str, Any]:
    """A sampled chunk's inclusion probability and sample stratum, so figures can be weighted by 1/p."""
    probability = setup.inclusion.get(slot.chunk.id)
    if probability is None:
        return {}
    field_name = setup.config.stratify_by
    record: dict[str, Any] = {"inclusion_probability": probability}
    value = slot.chunk.metadata.get(field_name)
    # The chunk's value of the sample's stratum field travels too, so calibrate can stratify by it.
    if value is not None and field_name not in ("query_id", "query", "gold", "origin", "type"):
        record[field_name] = value
    return record

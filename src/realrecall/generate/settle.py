"""Settling a slot: ask for a candidate, check it, keep it or ask again, and say why when none is kept.

A slot is settled when a question is kept, when its attempts (``max_attempts``) are spent on invalid
or filtered answers (a *shortfall*), or when the endpoint fails for good (a *failure*; not cached, so
the next run tries again). Checks, in order: the answer's validity, the strategy's own checks
(``Strategy.examine``), the language asked for (llm backend), lexical overlap above ``max_overlap``,
near-duplicate of a kept question, and (``judge``) answerability. A rejected candidate goes back to
the source with its reason, which decides what the next attempt asks (the regeneration feedback, or
a new situation). A retriever never takes part: filtering on what a retriever finds would keep only
the questions it finds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from realrecall.errors import Deferred, EndpointSilent, InputError, LLMError
from realrecall.generate.asking import RequestCollector
from realrecall.generate.dedup import NearDuplicateIndex
from realrecall.generate.extractive import ExtractiveQuestions
from realrecall.generate.languages import wrong_language
from realrecall.generate.planner import Slot
from realrecall.generate.records import question_record
from realrecall.generate.setup import Setup
from realrecall.generate.sources import (
    AnswerabilityJudge,
    Candidate,
    QuestionSource,
    judge_description,
    slot_searchable_text,
)
from realrecall.generate.store import GenerationStore
from realrecall.generate.strategy import SourceContext
from realrecall.generate.summary import StageCounter
from realrecall.llm.types import UNANSWERED, ChatClient, Usage
from realrecall.text_features import lexical_overlap

__all__ = ["CLIENT_HINT", "Settler", "still_valid"]

CLIENT_HINT = (
    "pass client=OpenAIChatClient(LLMConfig()) (or batch=True for the Batch API), "
    "or use backend='extractive' without judge"
)


class Settler:
    """Settles one slot at a time (``settle``), for as many workers as the run has: the question
    source, the judge, the near-duplicate index of the kept questions, and what was rejected and why.

    ``write=False`` settles without writing (a batch run's rounds, which only collect requests).
    """

    def __init__(
        self,
        setup: Setup,
        store: GenerationStore,
        client: ChatClient | RequestCollector | None,
        *,
        write: bool = True,
    ) -> None:
        self.setup = setup
        self.write = write
        self.config = setup.config
        self.store = store
        self.generation = StageCounter("generation")
        self.judging = StageCounter("judge")
        self.source: QuestionSource = ExtractiveQuestions(self.config)
        if setup.strategy is not None and setup.forms is not None:  # the llm backend (it has both)
            context = SourceContext(
                client=client,
                config=self.config,
                store=store,
                counter=self.generation,
                style_examples=setup.style_text,
                feedback=setup.feedback_prompt,
                forms=setup.forms,
            )
            self.source = setup.strategy.source(context)
        self.judge: AnswerabilityJudge | None = None
        if setup.judge_prompt is not None:  # judge on (prepare reads the judge prompt for nothing else)
            if client is None:
                raise InputError("the judge stage needs a chat client", hint=CLIENT_HINT)
            self.judge = AnswerabilityJudge(client, setup.judge_prompt, self.config, store, self.judging)
        self.duplicates = NearDuplicateIndex(self.config.near_duplicate or 1.0)
        for key, record in store.records.items():
            self.duplicates.add(key, record["query"], record.get("language"))
        self.filtered: Counter[str] = Counter()
        self.shortfall: Counter[str] = Counter()
        self.added = 0
        self.failed = 0
        self.exhausted = 0  # slots whose every attempt was rejected (not endpoint failures)
        self.unanswered = 0  # slots in a row whose requests got no answer (timeouts, no connection)
        self.silence: LLMError | None = None  # the last request that got no answer (names the endpoint)

    async def settle(self, slot: Slot) -> None:
        reasons: list[str] = []
        spent = [0, 0]
        rejected: tuple[Candidate, str] | None = None
        for attempt in range(self.config.max_attempts):
            if attempt:
                self.generation.regenerations += 1
            stage = self.generation
            try:
                candidate = await self.source.propose(slot, attempt, rejected)
                self.unanswered = 0
                spent[0] += candidate.usage.prompt_tokens
                spent[1] += candidate.usage.completion_tokens
                stage = self.judging
                outcome = await self.examine(slot, candidate, spent)
            except Deferred:
                return  # a batch will answer; a later round settles the slot
            except LLMError as exc:
                reason = getattr(exc, "reason", None) or "llm_error"
                stage.failures[reason] += 1
                self.fail(slot, "failed", reason, [*reasons, reason], message=str(exc))
                self.stop_if_silent(reason, exc)
                return
            if outcome is None:
                return
            reasons.append(outcome)
            rejected = (candidate, outcome)
        self.fail(slot, "shortfall", reasons[-1], reasons)

    def stop_if_silent(self, reason: str, exc: LLMError) -> None:
        """Stop the run once as many questions in a row as run at once (at least 3) got no answer,
        each after its whole retry budget: an endpoint that accepts and never answers would otherwise
        take the whole run's time, question by question. An endpoint the client found unreachable
        (no connection in many attempts in a row) stops it at once, with the client's one line.
        What was kept stays kept; a rerun resumes."""
        if reason == "unreachable":
            raise LLMError(f"{exc} (a rerun resumes)")
        if reason not in UNANSWERED:
            self.unanswered = 0
            return
        self.unanswered += 1
        self.silence = exc
        if self.unanswered >= max(3, self.config.concurrency):
            problem = f"{exc}; stopped after {self.unanswered} questions in a row got no answer"
            raise EndpointSilent.of_client(problem)

    async def examine(self, slot: Slot, candidate: Candidate, spent: list[int]) -> str | None:
        """Keep the candidate (returns None) or return the reason it was rejected."""
        if candidate.question is None:
            reason = candidate.failure or "invalid"
            self.generation.failures[reason] += 1
            return reason
        question = candidate.question
        strategy = self.setup.strategy
        own = None if strategy is None else strategy.examine(slot, candidate)
        if own is not None:
            self.filtered[own] += 1
            return own
        if strategy is not None and checked_language(self.setup, question, slot.language):
            self.filtered["wrong_language"] += 1
            return "wrong_language"
        overlap = lexical_overlap(question, slot_searchable_text(slot), slot.language)
        if self.config.max_overlap is not None and overlap > self.config.max_overlap:
            self.filtered["overlap"] += 1
            return "overlap"
        if self.near_duplicate(question, slot.language):
            return "near_duplicate"
        judged: dict[str, Any] | None = None
        if self.judge is not None:
            verdict, failure, usage = await self.judge.check(slot, question)
            spent[0] += usage.prompt_tokens
            spent[1] += usage.completion_tokens
            if verdict is None:
                return f"judge_{failure}"
            if not verdict.answerable:
                self.filtered["unanswerable"] += 1
                return "unanswerable"
            judged = {**self.judge.describe(), "answerable": True, "reason": verdict.reason}
            # Another worker may have kept a near-duplicate while the judge was asked.
            if self.near_duplicate(question, slot.language):
                return "near_duplicate"
        self.keep(slot, candidate, question, overlap, judged, Usage(*spent))
        return None

    def near_duplicate(self, question: str, language: str) -> bool:
        """Whether ``question`` nearly repeats a kept one (counted as filtered when it does)."""
        if self.config.near_duplicate is None or self.duplicates.find(question, language) is None:
            return False
        self.filtered["near_duplicate"] += 1
        return True

    def keep(
        self,
        slot: Slot,
        candidate: Candidate,
        question: str,
        overlap: float,
        judged: dict[str, Any] | None,
        spent: Usage,
    ) -> None:
        dropped = self.generation.dropped_by_slot.get(slot.key, frozenset())
        record = question_record(
            self.setup,
            slot,
            candidate,
            question,
            overlap=overlap,
            judged=judged,
            spent=spent,
            dropped=dropped,
        )
        self.duplicates.add(slot.key, question, slot.language)
        if self.write:
            self.store.add_record(slot.key, record)
        self.added += 1

    def fail(self, slot: Slot, outcome: str, reason: str, reasons: list[str], *, message: str = "") -> None:
        if not self.write:
            return
        self.failed += 1
        self.exhausted += outcome == "shortfall"
        self.shortfall[slot.chunk.id] += 1
        self.store.add_failure(
            {
                "query_id": slot.query_id,
                "chunk_id": slot.chunk.id,
                "question_index": slot.index,
                "outcome": outcome,
                "reason": reason,
                "rejections": reasons,
                "message": message,
                "slot_key": slot.key,
            }
        )

    def shortfall_warning(self) -> str | None:
        """Which option asks again for the questions whose every attempt was rejected.

        Their rejected answers are cached: a rerun with the same settings replays them and asks the
        model nothing, so without this a shortfall would stick silently.
        """
        if not self.exhausted:
            return None
        attempts = self.config.max_attempts
        return (
            f"{self.exhausted} question(s) fell short: all {attempts} attempts were rejected; a rerun "
            f"with the same settings replays those answers and asks nothing new; --max-attempts "
            f"{attempts + 3} (max_attempts in a pipeline) asks again for them"
        )


def still_valid(record: dict[str, Any], setup: Setup) -> bool:
    """Whether a record written earlier passes today's filters.

    A tightened ``max_overlap`` or a judge switched on (or changed) since the record was written
    sends its question back through the filters: the cached answer is replayed, and only what is
    new (the verdict, or the next attempt) is asked for.
    """
    provenance = record.get("provenance") or {}
    bound = setup.config.max_overlap
    # The query's overlap, and (situation first) the overlap of the situation it was written from.
    for key in ("overlap", "situation_overlap"):
        overlap = provenance.get(key)
        if bound is not None and isinstance(overlap, int | float) and overlap > bound:
            return False
    # A question kept before answers' languages were checked, in another language than asked for.
    language, query = record.get("language"), record.get("query")
    checked = setup.strategy is not None and isinstance(language, str) and isinstance(query, str)
    if checked and checked_language(setup, str(query), str(language)):
        return False
    if setup.judge_prompt is not None:
        judged = provenance.get("judge") or {}
        wanted = judge_description(setup.judge_prompt, setup.config)
        return all(judged.get(name) == value for name, value in wanted.items())
    return True


def checked_language(setup: Setup, question: str, language: str) -> str | None:
    """``wrong_language`` of ``question`` asked in ``language``, read from the run's analysis cache when
    an earlier check of the same question is kept there (a rerun checks every kept question)."""
    others = setup.config.languages
    return setup.analysis.question(
        question, language, others, lambda: wrong_language(question, language, others)
    )

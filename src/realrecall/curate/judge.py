"""An LLM judge for the passages the gold set never judged: pooling, grading, labels beside the gold.

Pooling: for every real query of the gold set, the top ``k`` passages each evaluated retriever
returned (their per-query files, ``evaluate --per-query``) that the gold set has not judged are the
pairs to grade. Each pair is asked of the model once (``prompts/relevance_judge.md``, temperature 0,
a strict JSON schema ``{"grade": 0-3, "reason"}``), through the same client, answer cache, retries and
cost accounting as ``generate`` (``realrecall.llm``, ``generate.asking``, ``generate.store``): a rerun
sends nothing for pairs already graded, and a killed run loses no answer it paid for.

The labels go beside the gold set, never into it:

- ``OUTPUT`` (JSON Lines, one graded pair a line, appended and fsynced as answers come): ``query_id``,
  ``passage_id``, ``grade``, ``reason`` and the ``provenance`` (model, prompt hash, slot key);
- ``OUTPUT.qrels``: the same grades as TREC qrels, written atomically at the end, for ``evaluate``
  (with ``--gold``) and ``realrecall judge agreement``; each line's iteration column marks it as the
  judge's (``judge:<model>``, ``realrecall.formats.judge_marks``), which trec_eval ignores and evaluate
  counts, so the reports say what rests on the judge even in a file merged with people's labels;
- the cache, failures and summary sidecars ``generate`` keeps (``generate.store``).

With ``batch`` (``realrecall judge --batch``, ``judge_pool(..., batch=True)``), the pairs not yet
graded are asked through the provider's Batch API instead (``generate.batch``: upload, create, poll,
download; resumed after a kill from the state file beside the output), in rounds: the second attempt
of a pair whose first answer was not a grade goes in the next batch. The answers land in the same
cache, and the labels are then written from it exactly as after live requests.

A pair whose answer is not a valid grade after the retries is a failure (in the failures file and the
summary), never a grade. Figures from judge labels are never to be quoted alone: check the judge with
``judge agreement`` on pairs people graded, and correct its figures with ``judge ppi``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from realrecall.corpus import Corpus
from realrecall.curate.judge_settings import JudgeSettings
from realrecall.errors import Deferred, EndpointSilent, InputError, LLMError, SettingError
from realrecall.evaluate.results import QueryResult
from realrecall.files import atomic_write_text, check_file_output
from realrecall.formats.judge_marks import judge_mark
from realrecall.generate.asking import RequestCollector, ask, derive_seed
from realrecall.generate.batch import (
    BatchOptions,
    BatchTotals,
    LeftoverClient,
    answer_in_batches,
    batch_endpoint,
    refuse_batch_options,
)
from realrecall.generate.store import GenerationStore
from realrecall.generate.summary import StageCounter, StageSummary
from realrecall.generate.templates import PromptTemplate, builtin_prompt, delimit_data, render
from realrecall.gold import GoldSet
from realrecall.llm.types import UNANSWERED, BatchStatus, ChatClient, ChatRequest, LLMConfig
from realrecall.settings import settings_with

__all__ = ["JUDGE_GRADE_SCHEMA", "JudgeSummary", "judge_pool", "parse_grade", "pool_pairs"]

JUDGE_GRADE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "grade": {"type": "integer", "description": "0 irrelevant, 1 related, 2 highly relevant, 3 perfect"},
        "reason": {"type": "string", "description": "one short sentence"},
    },
    "required": ["grade", "reason"],
    "additionalProperties": False,
}
_MAX_ATTEMPTS = 2  # asks per pair: a second try after an answer that is not a grade
_STAGE = "judge"


@dataclass(frozen=True)
class JudgeSummary:
    """What a judge run did: pairs pooled, graded now, already graded, failed; requests and cost."""

    output_path: Path
    qrels_path: Path
    pooled: int
    graded: int
    kept: int
    failed: int
    stage: StageSummary
    grades: dict[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output_path),
            "qrels": str(self.qrels_path),
            "pooled": self.pooled,
            "graded": self.graded,
            "kept": self.kept,
            "failed": self.failed,
            "grades": {str(g): n for g, n in sorted(self.grades.items())},
            "stages": {self.stage.name: self.stage.to_dict()},
        }


def pool_pairs(gold: GoldSet, runs: Sequence[Sequence[QueryResult]], k: int) -> list[tuple[str, str]]:
    """``(query_id, passage_id)`` pairs in the top ``k`` of any run that the gold set has not judged,
    for the gold set's real queries (or every query, when none states an origin), in query order."""
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}", hint="e.g. --k 10")
    queries = [q for q in gold.queries if q.origin == "real"] or [q for q in gold.queries if q.origin is None]
    tops: dict[str, list[str]] = {}
    for records in runs:
        for record in records:
            tops.setdefault(record.query_id, []).extend(record.top[:k])
    pairs = []
    for query in queries:
        seen: set[str] = set()
        for passage_id in tops.get(query.query_id, ()):
            if passage_id not in query.gold and passage_id not in seen:
                seen.add(passage_id)
                pairs.append((query.query_id, passage_id))
    return pairs


def parse_grade(text: str) -> tuple[int, str] | None:
    """``(grade, reason)`` from a judge answer, or None when it is not a grade 0-3 and a reason."""
    try:
        value = json.loads(text.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or set(value) != {"grade", "reason"}:
        return None
    grade, reason = value["grade"], value["reason"]
    if (
        isinstance(grade, bool)
        or not isinstance(grade, int)
        or not 0 <= grade <= 3
        or not isinstance(reason, str)
    ):
        return None
    return grade, " ".join(reason.split())


def judge_pool(
    gold: GoldSet,
    runs: Sequence[Sequence[QueryResult]],
    corpus: Corpus,
    output: str | Path,
    *,
    client: ChatClient | None = None,
    settings: JudgeSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch_status: Callable[[BatchStatus], None] | None = None,
    **options: Any,
) -> JudgeSummary:
    """Grade the pooled pairs (see the module doc) and write the labels beside the gold set.

    ``settings`` (``JudgeSettings``, or its fields as keywords over it: ``model="gpt-4o-mini"``,
    ``k=20``, ``batch=True``): the judge's ``model`` (required), the pool depth ``k``, the requests in
    flight, the prices of the cost summary and whether the Batch API is asked. Answers come through
    ``client`` live; with the settings' ``batch``, through the Batch API instead, at the endpoint of
    ``client`` when it is realrecall's own (its address, key and retries), else at ``OPENAI_BASE_URL``
    with ``request_timeout``; ``batch_status`` is told each poll. A live client keeps its own timeout
    (``request_timeout`` is what the CLI gives the client it makes).
    """
    refuse_batch_options(options, what="judge_pool", settings="poll_interval and batch_timeout")
    settings = settings_with(JudgeSettings, settings, options, what="judge_pool")
    if settings.model is None:
        raise SettingError("model", "is required: the judge's model at the endpoint", hint="e.g. gpt-4o-mini")
    batch = None
    if settings.batch_settings.batch:
        endpoint = batch_endpoint(
            client, LLMConfig(timeout=settings.request_timeout), default_named="OPENAI_BASE_URL"
        )
        batch = BatchOptions.from_settings(settings.batch_settings, endpoint, on_status=batch_status)
    elif client is None:
        raise InputError(
            "the judge needs a chat client to ask its model",
            hint="pass client=OpenAIChatClient(LLMConfig()), or batch=True for the Batch API",
        )
    model, k, concurrency = settings.model, settings.k, settings.concurrency
    price_in, price_out = settings.price_in, settings.price_out
    output_path = Path(output)
    check_file_output(output_path, label="the output", why="judge reads its labels back to resume")
    if gold.path is not None and Path(gold.path).resolve() == output_path.resolve():
        raise InputError(
            "the judge's labels would overwrite the gold set",
            path=output_path,
            hint="write them to another file: labels go beside the gold set, never into it",
        )
    prompt = builtin_prompt("relevance_judge")
    texts = {q.query_id: q.query for q in gold.queries}
    pairs = pool_pairs(gold, runs, k)
    missing = sorted({pid for _, pid in pairs if pid not in corpus})
    if missing:
        raise InputError(
            f"{len(missing)} pooled passages are not in the corpus (first: {missing[0]!r})",
            hint="give the corpus the retrievers were evaluated on",
        )
    store = GenerationStore(output_path)
    store.load()
    counter = StageCounter(_STAGE)
    slots = {_slot_key(model, prompt.sha256, qid, pid): (qid, pid) for qid, pid in pairs}
    try:
        kept, _ = store.plan(slots)
        store.open()
        todo = [(key, pair) for key, pair in slots.items() if key not in store.records]
        asking = _Asking(texts, corpus, store, counter, client, model, prompt)
        if batch is not None:
            totals = asyncio.run(_answer_in_batches(todo, asking, batch, concurrency))
            _absorb(counter, totals)
            # Every answer is in the cache now; a pair the batches left unanswered fails with their reason.
            asking = replace(asking, client=LeftoverClient(totals.refused_requests))
        failed = asyncio.run(_grade_all(todo, asking, concurrency, progress))
        store.close(order=list(slots))
    except BaseException:
        store.abort()
        raise
    qrels_path = output_path.with_name(output_path.name + ".qrels")
    # The iteration column (which trec_eval ignores) marks each line as the judge's: ``formats.judge_marks``.
    lines = [f"{r['query_id']} {_mark(r)} {r['passage_id']} {r['grade']}\n" for r in store.records.values()]
    atomic_write_text(qrels_path, "".join(lines))
    stage = counter.freeze(price_in, price_out)
    grades: dict[int, int] = {}
    for record in store.records.values():
        grades[record["grade"]] = grades.get(record["grade"], 0) + 1
    summary = JudgeSummary(
        output_path, qrels_path, len(pairs), len(todo) - failed, kept, failed, stage, grades
    )
    atomic_write_text(store.summary_path, json.dumps(summary.to_dict(), indent=2) + "\n")
    return summary


@dataclass(frozen=True)
class _Asking:
    """What grading one pair needs besides the pair."""

    texts: dict[str, str]
    corpus: Corpus
    store: GenerationStore
    counter: StageCounter
    client: ChatClient | RequestCollector | None
    model: str
    prompt: PromptTemplate
    write: bool = True
    """False while a batch is collected: the replay notes the requests and records nothing."""


async def _answer_in_batches(
    todo: list[tuple[str, tuple[str, str]]], asking: _Asking, options: BatchOptions, concurrency: int
) -> BatchTotals:
    async def collect() -> RequestCollector:
        collector = RequestCollector()
        replay = replace(asking, client=collector, counter=StageCounter(_STAGE), write=False)
        await _grade_all(todo, replay, concurrency, None)
        return collector

    # One round per attempt (a second attempt is asked only once the first answer is in), and one more
    # for the items a round's batch failed on a reason another try may fix.
    return await answer_in_batches(asking.store, options, collect, max_rounds=_MAX_ATTEMPTS + 1)


def _absorb(counter: StageCounter, totals: BatchTotals) -> None:
    """Add what the batches sent and cost to the judge's counters."""
    counter.requests += totals.requests[_STAGE]
    counter.tokens_in += totals.tokens_in[_STAGE]
    counter.tokens_out += totals.tokens_out[_STAGE]
    counter.failures.update(totals.failures.get(_STAGE, {}))


async def _grade_all(
    todo: list[tuple[str, tuple[str, str]]],
    asking: _Asking,
    concurrency: int,
    progress: Callable[[int, int], None] | None,
) -> int:
    gate = asyncio.Semaphore(concurrency)
    done = failed = unanswered = 0
    stopped = False

    async def one(key: str, query_id: str, passage_id: str) -> None:
        nonlocal done, failed, unanswered, stopped
        async with gate:
            if stopped:  # the endpoint stopped answering: no pair still waiting asks it
                return
            graded, silent = await _grade(key, query_id, passage_id, asking)
        unanswered = unanswered + 1 if silent is not None else 0
        # As many pairs in a row as are asked at once got no answer at all: the endpoint is down or
        # silent, and every other pair would wait out its whole retry budget the same way.
        if silent is not None and unanswered >= max(3, concurrency):
            stopped = True
            # The CLI, which makes the client from request_timeout, names that setting its way (--timeout).
            problem = f"{silent}; stopped after {unanswered} pairs in a row got no answer"
            raise EndpointSilent.of_client(problem)
        done += 1
        failed += graded is None
        if progress is not None:
            progress(done, len(todo))

    await asyncio.gather(*(one(key, qid, pid) for key, (qid, pid) in todo))
    return failed


async def _grade(
    key: str, query_id: str, passage_id: str, asking: _Asking
) -> tuple[int | None, LLMError | None]:
    """The pair's grade (None: failed, recorded), and the error when the endpoint never answered."""
    a = asking
    messages = render(
        a.prompt,
        {
            "query": delimit_data(a.texts[query_id], "query"),
            "passage": delimit_data(a.corpus[passage_id].text, "passage"),
        },
    )
    reason = "no_answer"
    unanswered: LLMError | None = None
    for attempt in range(_MAX_ATTEMPTS):
        request = ChatRequest(
            messages, a.model, temperature=0.0, max_tokens=200, json_schema=JUDGE_GRADE_SCHEMA,
            schema_name="relevance_grade", seed=derive_seed(key, attempt),
        )  # fmt: skip
        try:
            text, failure, _usage, answered_by = await ask(
                a.client, a.store, a.counter, request, key=f"{key}:{attempt}", slot_key=key, stage=_STAGE
            )
        except Deferred:  # collecting a batch: this request goes in it, the pair waits for its answer
            return None, None
        except LLMError as exc:
            reason = f"llm_error: {exc}"
            if getattr(exc, "reason", None) in UNANSWERED:
                unanswered = exc
            break
        parsed = None if failure else parse_grade(text)
        if parsed is not None and not a.write:
            return parsed[0], None
        if parsed is not None:
            grade, why = parsed
            provenance = {
                "slot_key": key,
                "model": answered_by,
                "prompt_sha256": a.prompt.sha256,
                "judged_by": "llm",
            }
            record = {"query_id": query_id, "passage_id": passage_id, "grade": grade, "reason": why}
            a.store.add_record(key, {**record, "provenance": provenance})
            return grade, None
        reason = failure or "not_a_grade"
    if not a.write:
        return None, None
    a.counter.failures[reason.split(":")[0]] += 1
    a.store.add_failure({"slot": key, "query_id": query_id, "passage_id": passage_id, "reason": reason})
    return None, unanswered


def _mark(record: dict[str, Any]) -> str:
    """The judge mark of a graded pair's qrels line, naming the model that answered."""
    return judge_mark((record.get("provenance") or {}).get("model"))


def _slot_key(model: str, prompt_sha256: str, query_id: str, passage_id: str) -> str:
    parts = (_STAGE, model, prompt_sha256, query_id, passage_id)
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

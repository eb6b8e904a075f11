"""The OpenAI Batch API for chat completions: write the input file, submit, poll, download.

Every step takes only the config and an id, so a run that was stopped resumes from the batch id it
wrote down: ``poll_batch`` then ``download_batch_results`` again. Batch lines always ask for
Structured Outputs when a request has a schema (a batch cannot fall back per item); an endpoint
without json_schema support reports those items as BatchItemError.

Each HTTP call uses the shared retry policy. Retrying ``POST /batches`` after a timeout can, in
the worst case, leave a duplicate batch on the server; its metadata carries the input's SHA-256 so
a duplicate can be told apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import openai
from openai.types import Batch
from openai.types.chat import ChatCompletion

from realrecall.errors import GaveUp, InputError, LLMCallError, LLMError
from realrecall.llm.client import chat_result
from realrecall.llm.endpoint import Endpoint, open_sdk_client, redact, redact_result, resolve_endpoint
from realrecall.llm.retry import StatsRecorder, call_with_retries, gave_up_error
from realrecall.llm.types import (
    BatchCounts,
    BatchItemError,
    BatchStatus,
    ChatRequest,
    ChatResult,
    LLMConfig,
    ResponseFormat,
)

__all__ = [
    "BATCH_URL",
    "download_batch_results",
    "get_batch",
    "poll_batch",
    "submit_batch",
    "write_batch_input",
]

BATCH_URL: Final = "/v1/chat/completions"

T = TypeVar("T")


def write_batch_input(requests: Mapping[str, ChatRequest]) -> bytes:
    """The Batch API input file: one JSON line ``{custom_id, method, url, body}`` per request, UTF-8."""
    if not requests:
        raise InputError("a batch needs at least one request")
    lines = []
    for custom_id, request in requests.items():
        if not isinstance(custom_id, str) or not custom_id:
            raise InputError(f"batch custom_id must be a non-empty string, got {custom_id!r}")
        line = {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": request.to_body()}
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8")


async def submit_batch(config: LLMConfig, requests: Mapping[str, ChatRequest]) -> str:
    """Upload the input file (purpose "batch") and create a 24h batch over it; returns the batch id."""
    data = write_batch_input(requests)
    digest = hashlib.sha256(data).hexdigest()
    async with _session(config) as call:
        uploaded = await call(
            "upload batch input",
            lambda sdk: sdk.files.create(
                file=("realrecall-batch.jsonl", data, "application/jsonl"), purpose="batch"
            ),
        )
        batch = await call(
            "create batch",
            lambda sdk: sdk.batches.create(
                input_file_id=uploaded.id,
                endpoint=BATCH_URL,
                completion_window="24h",
                metadata={"realrecall_input_sha256": digest},
            ),
        )
    return str(batch.id)


async def get_batch(config: LLMConfig, batch_id: str) -> BatchStatus:
    """One look at the batch's status."""
    async with _session(config) as call:
        batch = await call("get batch", lambda sdk: sdk.batches.retrieve(batch_id))
    return _status(batch, call.secret)


async def poll_batch(
    config: LLMConfig, batch_id: str, *, interval: float = 30.0, timeout: float | None = None
) -> BatchStatus:
    """Poll every ``interval`` seconds until the batch is terminal (completed, failed, expired, cancelled).

    With ``timeout``, returns the last status seen once that many seconds have passed, terminal or
    not: the caller may poll again later with the same id.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    async with _session(config) as call:
        while True:
            status = _status(await call("get batch", lambda sdk: sdk.batches.retrieve(batch_id)), call.secret)
            if status.is_terminal or (deadline is not None and time.monotonic() + interval > deadline):
                return status
            await asyncio.sleep(interval)


async def download_batch_results(
    config: LLMConfig,
    batch: BatchStatus,
    *,
    requests: Mapping[str, ChatRequest] | None = None,
) -> dict[str, ChatResult | BatchItemError]:
    """Every item's answer or error, by custom_id, from the batch's output and error files.

    Pass the submitted ``requests`` to get a BatchItemError ("missing") for any item the batch did
    not report and an exact ``response_format_used``; without them, items are taken to have used
    json_schema (what ``write_batch_input`` asks for whenever a request has a schema).
    """
    if batch.output_file_id is None and batch.error_file_id is None:
        raise LLMError(
            f"batch {batch.id} has no result files yet (status {batch.status}); poll it until it is completed"
        )
    results: dict[str, ChatResult | BatchItemError] = {}
    async with _session(config) as call:
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id is None:
                continue
            content = await call("download batch results", functools.partial(_file_content, file_id))
            results.update(_parse_results(file_id, content.content, requests, call.secret))
    if requests is not None:
        for custom_id in requests:
            if custom_id not in results:
                results[custom_id] = BatchItemError(
                    custom_id, None, "missing", "the batch reported nothing for it"
                )
    return results


# -- helpers -------------------------------------------------------------------------------------------


class _Caller:
    """Runs one SDK call under the retry policy and turns a final fault into LLMCallError."""

    def __init__(self, sdk: openai.AsyncOpenAI, endpoint: Endpoint, config: LLMConfig) -> None:
        self._sdk = sdk
        self._config = config
        self._stats = StatsRecorder()
        self.secret = endpoint.api_key

    async def __call__(self, what: str, make: Callable[[openai.AsyncOpenAI], Awaitable[T]]) -> T:
        try:
            result, _ = await call_with_retries(
                lambda: make(self._sdk), config=self._config, stats=self._stats
            )
        except GaveUp as gave_up:
            raise gave_up_error(gave_up, secret=self.secret, what=f"{what}: ") from None
        return result


async def _file_content(file_id: str, sdk: openai.AsyncOpenAI) -> openai.HttpxBinaryResponseContent:
    return await sdk.files.content(file_id)


@contextlib.asynccontextmanager
async def _session(config: LLMConfig) -> AsyncIterator[_Caller]:
    endpoint = resolve_endpoint(config)
    sdk = open_sdk_client(endpoint)
    try:
        yield _Caller(sdk, endpoint, config)
    finally:
        await sdk.close()


def _status(batch: Batch, secret: str) -> BatchStatus:
    """The batch's status; the endpoint's own words (status, errors) are printed and stored, so any
    echo of the key is blanked."""
    counts = batch.request_counts
    errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
    return BatchStatus(
        id=redact(batch.id, secret),
        status=redact(batch.status, secret),
        output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        counts=BatchCounts(counts.total, counts.completed, counts.failed)
        if counts is not None
        else BatchCounts(0, 0, 0),
        errors=tuple(
            redact(f"{error.code or 'error'}: {error.message or ''}".strip(), secret) for error in errors
        ),
    )


def _parse_results(
    file_id: str,
    content: bytes,
    requests: Mapping[str, ChatRequest] | None,
    secret: str,
) -> dict[str, ChatResult | BatchItemError]:
    results: dict[str, ChatResult | BatchItemError] = {}
    for number, line in enumerate(content.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            custom_id = record["custom_id"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LLMCallError(
                redact(
                    f"batch result file {file_id} line {number} is not a batch result record ({exc})", secret
                ),
                reason="malformed_response",
                attempts=1,
            ) from None
        mode: ResponseFormat = "json_schema"
        if requests is not None and custom_id in requests and requests[custom_id].json_schema is None:
            mode = "none"
        results[custom_id] = _item_result(custom_id, record, mode, secret)
    return results


def _item_result(
    custom_id: str, record: dict[str, Any], mode: ResponseFormat, secret: str
) -> ChatResult | BatchItemError:
    response = record.get("response") or {}
    status = response.get("status_code")
    body = response.get("body")
    error = record.get("error")
    if status == 200 and isinstance(body, dict) and not error:
        try:
            completion = ChatCompletion.model_validate(body)
        except ValueError:  # pydantic's ValidationError is one
            return BatchItemError(
                custom_id, status, "malformed_response", "the answer is not a chat completion"
            )
        if not completion.choices:
            return BatchItemError(custom_id, status, "empty_response", "the answer has no choices")
        return redact_result(chat_result(completion, attempts=1, response_format=mode), secret)
    if not isinstance(error, dict) and isinstance(body, dict):
        error = body.get("error")
    code = str(error.get("code") or error.get("type") or "error") if isinstance(error, dict) else "error"
    message = str(error.get("message") or "") if isinstance(error, dict) else ""
    return BatchItemError(
        custom_id, status if isinstance(status, int) else None, code, redact(message, secret)
    )

"""Every exception realrecall defines, in one place (tests/test_layers.py finds none elsewhere).

    RealrecallError                 base: the CLI catches this (and only this) and exits non-zero
     ├── InputError                 a file or value the user gave is wrong: exit code 2
     │    ├── SettingError          one setting of a stage (k, confidence...) is wrong, whoever gave it
     │    ├── ServerSilent          a vector store's server did not answer in time; names the timeout
     │    ├── OutputError           an output cannot be written (disk full, a folder, one of the inputs)
     │    └── UserCodeError         the user's own code (a custom retriever) failed; traceback with --debug
     │         └── RetrieverQueryError   ... on one query: raised, timed out or returned no ids
     ├── LLMError                   an OpenAI-compatible endpoint kept failing after retries: exit code 1
     │    ├── LLMCallError          one call gave up: carries the reason, the HTTP status and the attempts
     │    ├── BatchUnanswered       a request the Batch API rounds never answered
     │    └── EndpointSilent        generate, judge: request after request got no answer; names the timeout
     ├── EngineError                the Ray cluster cannot be reached, or its workers kept dying: exit 1
     └── GateFailed                 a quality gate (--fail-under, --max-gap) was crossed: exit code 1

Anything else escaping the library is a bug and shows its traceback. That includes the signals below,
which one part of the library raises for another to catch; none of them is meant to reach a caller:

    Exception
     ├── MalformedResponse          llm: a 200 answer of the wrong shape; worth another try
     ├── EmptyResponse              llm: a 200 chat answer with no choices; worth another try
     ├── GaveUp                     llm: a call failed for good; the client turns it into LLMCallError
     ├── Unreachable                llm: the endpoint made no connection too often in a row; not sent
     ├── Deferred                   generate: a request a batch will answer, in place of its answer
     └── RepeatedKey                files: a JSON object gives one key twice
    BaseException
     └── QueryTimedOut              evaluate: a custom retriever's call ran past its query timeout (raised
                                    inside the user's code, so its ``except Exception`` cannot swallow it)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from realrecall.llm.retry import Fault

__all__ = [
    "BatchUnanswered",
    "EndpointSilent",
    "EngineError",
    "GateFailed",
    "InputError",
    "LLMCallError",
    "LLMError",
    "OutputError",
    "RealrecallError",
    "RetrieverQueryError",
    "ServerSilent",
    "SettingError",
    "UserCodeError",
]


class RealrecallError(Exception):
    """Base of the errors a user is meant to see as one clear line."""

    exit_code: int = 1


class InputError(RealrecallError):
    """Bad input: names the file, the line and the fix.

    ``str(error)`` is the one line the CLI prints, e.g.
    ``gold.jsonl:12: duplicate query_id 'q7' (first seen on line 3); make query ids unique``.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        text = f"{where}{self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return text


class SettingError(InputError):
    """One setting of a stage is wrong: ``k must hold whole numbers >= 1, got (0,)``.

    The message is the setting's name (``label``, by default ``setting``), then the rule it breaks
    (``problem``), so each front end names the setting its own way with ``labelled``: ``--k must ...``
    on the command line, ``pipeline.toml:6: [evaluate] k must ...`` in a config file; the rule's words
    are the same wherever the value came from.
    """

    def __init__(
        self,
        setting: str,
        problem: str,
        *,
        hint: str | None = None,
        label: str | None = None,
        path: str | Path | None = None,
        line: int | None = None,
    ) -> None:
        self.setting = setting
        self.problem = problem
        named = setting if label is None else label
        # A problem quoted from elsewhere (": unknown metric 'x'") follows the name without a space.
        separator = "" if problem.startswith(":") else " "
        super().__init__(f"{named}{separator}{problem}", path=path, line=line, hint=hint)

    def labelled(
        self, label: str, *, path: str | Path | None = None, line: int | None = None
    ) -> SettingError:
        """The same error with the setting named ``label`` (``--k``, ``[evaluate] k``) and a place."""
        return SettingError(self.setting, self.problem, hint=self.hint, label=label, path=path, line=line)


class ServerSilent(InputError):
    """A vector store's server gave no answer to one request within ``seconds`` (exit code 2: the
    address or the time allowed is the user's to fix).

    As ``EndpointSilent``'s, the advice names the setting that allows more time (``setting``) the way
    the caller gives it (``labelled``): ``--request-timeout`` on the command line, ``[evaluate]
    request_timeout`` in a pipeline; from Python, the setting's own name.
    """

    def __init__(
        self, server: str, seconds: float, *, setting: str = "request_timeout", label: str | None = None
    ) -> None:
        self.server = server
        self.seconds = seconds
        self.setting = setting
        super().__init__(
            f"{server} gave no answer within {seconds:g} s",
            hint="check that the server is running and answering, or allow more time with "
            f"{setting if label is None else label}",
        )

    def labelled(self, label: str) -> ServerSilent:
        """The same error with the setting named ``label``."""
        return ServerSilent(self.server, self.seconds, setting=self.setting, label=label)


class OutputError(InputError):
    """An output cannot be written where the user asked: the disk is full, the path is a folder, or it
    is one of the command's own inputs. Nothing was written (or the old file is untouched)."""


class UserCodeError(InputError):
    """Code the user plugged in (a ``module:function`` retriever) raised or could not be loaded.

    The one line names the code and what it raised; the original exception is the ``__cause__``, which
    the CLI prints as a traceback only with ``--debug``.
    """


class RetrieverQueryError(UserCodeError):
    """A custom retriever failed on one query: it raised, ran past its timeout or returned no ids.

    ``position`` is the query's place in the batch given to ``search``; ``retrieve``, which knows the
    query ids, re-raises the error naming the id (:meth:`for_query_id`).
    """

    def __init__(
        self,
        what: str,
        *,
        retriever: str,
        query: str,
        position: int,
        hint: str,
        query_id: str | None = None,
        kind: str = "custom retriever",
    ) -> None:
        self.what = what
        self.retriever = retriever
        self.query = query
        self.position = position
        self.query_id = query_id
        self.kind = kind
        label = f"{_shorten(query)!r}" if query_id is None else f"{query_id!r} ({_shorten(query)!r})"
        super().__init__(f"{kind} {retriever} {what} for query {label}", hint=hint)

    def for_query_id(self, query_id: str) -> RetrieverQueryError:
        """The same error naming the query by its id too."""
        return RetrieverQueryError(
            self.what,
            retriever=self.retriever,
            query=self.query,
            position=self.position,
            hint=self.hint or "",
            query_id=query_id,
            kind=self.kind,
        )


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LLMError(RealrecallError):
    """The model endpoint failed for good (after the retry budget), or answered nothing usable."""


class LLMCallError(LLMError):
    """One call to the endpoint gave up, e.g. ``rate limited (429) after 6 attempts: Rate limit reached``.

    ``reason`` is a short stable code a caller can branch on (``rate_limited``, ``server_error``,
    ``timeout``, ``connection``, ``malformed_response``, ``empty_response``, ``bad_request``,
    ``response_format_rejected``, ``auth``, ...); ``status`` the last HTTP status, if any. The
    message never holds the API key: the server's own words are redacted before they get here.
    """

    def __init__(self, message: str, *, reason: str, attempts: int, status: int | None = None) -> None:
        self.reason = reason
        self.attempts = attempts
        self.status = status
        super().__init__(message)


class BatchUnanswered(LLMError):
    """A request the batches did not answer (each item failed in every round)."""

    reason = "batch_unanswered"


class EndpointSilent(LLMError):
    """The model endpoint answered none of the last requests (generate's questions, the judge's pairs),
    each after its whole retry budget.

    The advice names the setting that allows more time (``setting``) the way the caller gives it
    (``labelled``): ``--request-timeout`` on the command line (the judge's ``--timeout``),
    ``[generate] request_timeout`` in a pipeline; from Python, what governs a passed client (``label``:
    its ``LLMConfig(timeout=...)``), else the setting's own name.
    """

    def __init__(self, problem: str, *, setting: str = "request_timeout", label: str | None = None) -> None:
        self.problem = problem
        self.setting = setting
        super().__init__(
            f"{problem}: check that the endpoint is running, or allow more time with "
            f"{setting if label is None else label} (a rerun resumes)"
        )

    @classmethod
    def of_client(cls, problem: str) -> EndpointSilent:
        """The error as ``generate`` and ``judge_pool`` raise it: there the time allowed is the passed
        client's own (they make none), so the advice names its ``LLMConfig(timeout=...)``; the CLI and
        the pipeline, which make the client from ``request_timeout``, name that setting their way."""
        return cls(problem, label="the client's LLMConfig(timeout=...)")

    def labelled(self, label: str) -> EndpointSilent:
        """The same error with the setting named ``label``."""
        return EndpointSilent(self.problem, setting=self.setting, label=label)


class EngineError(RealrecallError):
    """The engine the work was sent to failed it: the Ray cluster cannot be reached, or an actor died
    more often than its retries allow. Nothing the run wrote is half-written (outputs are written on
    the driver, as the local engine writes them)."""


class GateFailed(RealrecallError):
    """A quality gate was crossed; the message says which figure and which bound."""


# Signals: raised and caught inside the library (see the module docstring), so not in ``__all__``.


class MalformedResponse(Exception):
    """A 200 answer whose content cannot be used (wrong shape, wrong count); worth another try."""


class EmptyResponse(Exception):
    """A 200 chat answer with no choices; worth another try."""


class GaveUp(Exception):
    """Raised by ``call_with_retries`` when a call fails for good; the caller turns it into LLMCallError.

    Kept apart from LLMCallError so a caller can still act on the fault (fall back to a weaker
    response_format) and count attempts across several rounds before reporting.
    """

    def __init__(self, fault: Fault, attempts: int) -> None:
        super().__init__(fault.reason)
        self.fault = fault
        self.attempts = attempts


class Unreachable(Exception):
    """Raised by the chat client instead of sending once the endpoint is known to be unreachable (no
    connection in ``max_connection_failures`` attempts in a row); the client turns it into LLMCallError.
    No endpoint fault (``retry.classify`` lets it through), so no retry is spent on it."""


class Deferred(Exception):
    """Raised in place of a request a batch will answer (see ``generate.asking.RequestCollector``)."""


class QueryTimedOut(BaseException):
    """A call to the user's retriever function ran past its query timeout.

    A ``BaseException``, as ``KeyboardInterrupt`` is: it may be raised inside the user's function (see
    ``evaluate.retrievers.function``), whose ``except Exception`` must not turn it into an answer.
    """


class RepeatedKey(Exception):
    """A JSON object names ``key`` twice (the reader turns it into an InputError naming the line)."""

    def __init__(self, key: str) -> None:
        self.key = key

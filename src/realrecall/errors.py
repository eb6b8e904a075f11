"""Every error realrecall raises on purpose, in one place.

    RealrecallError            base: the CLI catches this (and only this) and exits non-zero
     ├── InputError            a file or value the user gave is wrong: exit code 2
     │    ├── OutputError      an output cannot be written (disk full, a folder, one of the inputs): exit 2
     │    └── UserCodeError    the user's own code (a custom retriever) failed; its traceback with --debug
     ├── LLMError              an OpenAI-compatible endpoint kept failing after retries: exit code 1
     │    ├── LLMCallError     one call gave up: carries the reason, the HTTP status and the attempts
     │    └── BatchUnanswered  a request the Batch API rounds never answered
     └── GateFailed            a quality gate (--fail-under, --max-gap) was crossed: exit code 1

Anything else escaping the library is a bug and shows its traceback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BatchUnanswered",
    "GateFailed",
    "InputError",
    "LLMCallError",
    "LLMError",
    "OutputError",
    "RealrecallError",
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


class OutputError(InputError):
    """An output cannot be written where the user asked: the disk is full, the path is a folder, or it
    is one of the command's own inputs. Nothing was written (or the old file is untouched)."""


class UserCodeError(InputError):
    """Code the user plugged in (a ``module:function`` retriever) raised or could not be loaded.

    The one line names the code and what it raised; the original exception is the ``__cause__``, which
    the CLI prints as a traceback only with ``--debug``.
    """


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


class GateFailed(RealrecallError):
    """A quality gate was crossed; the message says which figure and which bound."""

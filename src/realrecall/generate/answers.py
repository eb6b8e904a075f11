"""The structured answers asked of the model, their strict JSON schemas, and their validation.

Every answer is checked here, whatever the server claims to have enforced (a server may fall back to
``json_object`` mode, or ignore ``response_format`` altogether). A check that fails returns a short
reason code; the generator asks again and, when the budget is spent, records the failure with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANSWER_TOKENS",
    "JUDGE_SCHEMA",
    "MAX_QUESTION_CHARS",
    "QUESTION_SCHEMA",
    "Verdict",
    "parse_question",
    "parse_verdict",
]

MAX_QUESTION_CHARS = 400
ANSWER_TOKENS = 40
"""About the tokens of one short answer (a question or a verdict), as the dry run counts them."""

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "description": "the question, as a user would type it"}},
    "required": ["question"],
    "additionalProperties": False,
}

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answerable": {"type": "boolean", "description": "true if the passage alone answers the question"},
        "reason": {"type": "string", "description": "one short sentence"},
    },
    "required": ["answerable", "reason"],
    "additionalProperties": False,
}

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _json_object(text: str) -> tuple[dict[str, Any], None] | tuple[None, str]:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None, "invalid_json"
    if not isinstance(value, dict):
        return None, "schema_mismatch"
    return value, None


def parse_question(text: str) -> tuple[str | None, str | None]:
    """``(question, None)`` for a valid answer, ``(None, reason)`` otherwise.

    Valid: a JSON object whose only key is ``question``, a string that holds at least one letter, has
    at most ``MAX_QUESTION_CHARS`` characters, and does not repeat the prompt's passage delimiters.
    Whitespace runs (newlines included) are collapsed to one space.
    """
    value, reason = _json_object(text)
    if value is None:
        return None, reason
    question = value.get("question")
    if set(value) != {"question"} or not isinstance(question, str):
        return None, "schema_mismatch"
    question = " ".join(question.split())
    if not any(character.isalpha() for character in question):
        return None, "empty_question"
    if len(question) > MAX_QUESTION_CHARS:
        return None, "question_too_long"
    if "<passage" in question.lower() or "</passage" in question.lower():
        return None, "prompt_echo"
    return question, None


@dataclass(frozen=True)
class Verdict:
    """The judge's answer: does the passage answer the question, and why."""

    answerable: bool
    reason: str


def parse_verdict(text: str) -> tuple[Verdict, None] | tuple[None, str]:
    """``(verdict, None)`` for a valid judge answer, ``(None, reason)`` otherwise."""
    parsed = _json_object(text)
    if parsed[0] is None:
        return parsed
    value = parsed[0]
    if set(value) != {"answerable", "reason"} or not isinstance(value.get("answerable"), bool):
        return None, "schema_mismatch"
    if not isinstance(value.get("reason"), str):
        return None, "schema_mismatch"
    return Verdict(value["answerable"], " ".join(value["reason"].split())), None

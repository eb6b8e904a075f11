"""Valid answers of a question-writing model that differ per request seed, for the fake endpoint and
the in-process fake client alike (no two are near-duplicates, so every one is kept)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

EVERYDAY = [
    "printer",
    "wifi",
    "refund",
    "login",
    "backup",
    "folder",
    "upload",
    "calendar",
    "storage",
    "license",
    "cable",
    "battery",
    "invoice",
    "screen",
    "laptop",
    "phone",
    "email",
    "meeting",
    "password",
    "account",
    "keyboard",
    "mouse",
    "desk",
    "badge",
    "parking",
    "lunch",
    "travel",
    "expense",
    "holiday",
    "contract",
    "salary",
    "ticket",
]


def question_for_seed(seed: int) -> str:
    """A question in everyday words that differs for each seed (so no two are near-duplicates)."""
    w = [EVERYDAY[(seed >> shift) % len(EVERYDAY)] for shift in (0, 5, 10, 15, 20, 25)]
    return f"why does my {w[0]} {w[1]} {w[2]} keep {w[3]} the {w[4]} {w[5]}? ({seed})"


def is_situation_request(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the request is step 1 of situation-first generation (its system prompt asks for
    ``{"user": ..., "situation": ..., "answer": ...}``); seen from the messages, so that it holds
    whether the request came with a json_schema or fell back to json_object."""
    return any('{"user": "...", "situation"' in str(message.get("content")) for message in messages)


def passages_in(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The chunk texts a prompt shows between <passage> tags, in order."""
    found: list[str] = []
    for message in messages:
        found += re.findall(r"<passage>\n(.*?)\n</passage>", str(message.get("content")), re.DOTALL)
    return found


def passage_in(messages: Sequence[Mapping[str, Any]]) -> str:
    """The chunk text a prompt shows between <passage> tags ("" when there is none)."""
    return next(iter(passages_in(messages)), "")


def situation_for_seed(seed: int, passage: str, second: str | None = None) -> str:
    """A valid step-1 answer: an everyday situation and, as the stated answer, the passage's first
    twelve words (enough content words to count as grounding); over two passages (``second``), the
    second's first twelve words as ``answer_b``."""
    answer = {
        "user": "someone at work",
        "situation": question_for_seed(seed).replace("why does", "I wonder why"),
        "answer": " ".join(passage.split()[:12]),
    }
    if second is not None:
        answer["answer_b"] = " ".join(second.split()[:12])
    return json.dumps(answer)


def situation_answer(seed: int, messages: Sequence[Mapping[str, Any]]) -> str:
    """``situation_for_seed`` for a step-1 request: over the passages it shows (two when it asks for
    ``answer_b``)."""
    passages = [*passages_in(messages), "", ""]
    pair = any('"answer_b"' in str(message.get("content")) for message in messages)
    return situation_for_seed(seed, passages[0], passages[1] if pair else None)


def http_question_handler(body: dict[str, Any]) -> str:
    """A chat handler for the fake HTTP server (which hands it the request body): one valid question,
    or the situation step 1 of situation-first generation asks for."""
    seed = int(body.get("seed") or 0)
    messages = body.get("messages", [])
    if is_situation_request(messages):
        return situation_answer(seed, messages)
    return json.dumps({"question": question_for_seed(seed)})

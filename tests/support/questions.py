"""Valid answers of a question-writing model that differ per request seed, for the fake endpoint and
the in-process fake client alike (no two are near-duplicates, so every one is kept)."""

from __future__ import annotations

import json
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


def http_question_handler(body: dict[str, Any]) -> str:
    """A chat handler for the fake HTTP server (which hands it the request body): one valid question."""
    return json.dumps({"question": question_for_seed(int(body.get("seed") or 0))})

"""Fixtures of the calibrate tests; the results.json builders live in results_builder.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def write_results(tmp_path: Path) -> Callable[..., Path]:
    """Write a results document to a file and return its path."""
    counter = iter(range(1000))

    def write(document: dict[str, Any], name: str | None = None) -> Path:
        path = tmp_path / (name or f"results_{next(counter)}.json")
        path.write_text(json.dumps(document), encoding="utf-8")
        return path

    return write

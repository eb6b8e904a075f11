"""Fixtures shared by every test area. Area-specific fixtures live in that area's conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DATA = ROOT.parent / "shared" / "reference-data"


@pytest.fixture(scope="session")
def reference_data() -> Path:
    """The shared IR reference data (research licences: read by path, never copied into the repo)."""
    if not REFERENCE_DATA.is_dir():
        pytest.skip(f"shared reference data not found at {REFERENCE_DATA} (it sits beside the project root)")
    return REFERENCE_DATA

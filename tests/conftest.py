"""Fixtures shared by every test area. Area-specific fixtures live in that area's conftest.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support.fake_openai import FakeOpenAI
from support.reference import find_reference_data

MEMORY_FOLDER = Path("/dev/shm")

# No test is timed (speed is measured in benchmarks/): Hypothesis' per-example deadline (200 ms) failed
# a regex property test on a CI machine loaded by other work (530 ms once, 0.13 ms on the replay).
settings.register_profile("realrecall", deadline=None)
settings.load_profile("realrecall")


def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary folders (``tmp_path``) in memory where the machine has a tmpfs for it.

    A run writes some 15,000 files (each catalogue case copies a workspace; about 200 MB, most of it
    SciFact's chunkings) and pytest deletes the oldest kept run's at the end; on a disk mounted with
    ``discard`` that alone takes seconds of wall time. pytest keeps the last three runs, so up to
    ~600 MB of memory. Not where ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` (pytest's own setting for
    the folder) says otherwise. Set here, before pytest makes its first temporary folder; xdist's
    workers inherit it.
    """
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    if MEMORY_FOLDER.is_dir() and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_FOLDER)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a ``slow`` test first, each file's tests in their order: xdist (``--dist loadfile
    --no-loadscope-reorder``) hands files to the workers in this order, so the long files start early and
    the many short ones fill the gaps at the end, instead of a long file starting last on one worker
    while the other has finished (xdist's own order puts files with the fewest tests last)."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_files)  # a stable sort: the order within is kept


@pytest.fixture(scope="session")
def reference_data() -> Path:
    """The shared IR reference data (research licences: read by path, never copied into the repo)."""
    found = find_reference_data()
    if found is None:
        pytest.skip("shared reference data not found beside the project root or any folder above it")
    return found


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started fake OpenAI server on 127.0.0.1; OPENAI_BASE_URL and a placeholder key point at it."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-placeholder-key")
        yield server

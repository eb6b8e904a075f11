"""The one Ray cluster of a test session, for the tests that need a real one (``ray_cluster``).

``ray.init(num_cpus=2)`` with a small object store and no dashboard (the machine is shared), started by
the first test that asks for it and shut down at the end of the session. The engine joins a Ray already
running in its process and leaves it running, so every test uses this one. Every test that asks for it
is in test_ray.py: pytest-xdist gives a file's tests to one worker, so only that worker starts it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
OBJECT_STORE_BYTES = 200 * 1024 * 1024


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the Ray engine's tests need the extra: realrecall[ray]")
    # The workers import the tests' helpers (support.*) as pytest's pythonpath lets this process.
    paths = os.pathsep.join(str(path) for path in (TESTS, TESTS.parent / "src"))
    ray.init(
        num_cpus=2,
        object_store_memory=OBJECT_STORE_BYTES,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": paths}},
    )
    try:
        yield
    finally:
        ray.shutdown()

"""The scoring API is reachable from the package root, and importing the package stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import realrecall

SRC = Path(__file__).resolve().parents[2] / "src"


def test_the_package_exports_the_scoring_api() -> None:
    for name in ("Run", "load_run", "score", "score_queries"):
        assert name in realrecall.__all__
        assert getattr(realrecall, name).__name__ == name


def test_every_name_in_all_resolves() -> None:
    for name in realrecall.__all__:
        assert getattr(realrecall, name) is not None


def test_importing_realrecall_does_not_import_numpy() -> None:
    code = "import sys, realrecall; print('numpy' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(SRC)}
    )

    assert result.stdout.strip() == "False"

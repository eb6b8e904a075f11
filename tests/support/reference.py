"""Where ``shared/reference-data`` is: beside the project root, or beside a folder above it.

Git worktrees sit one level deeper than the main checkout (``wt/<name>``), so the search climbs.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def find_reference_data() -> Path | None:
    for folder in ROOT.parents:
        candidate = folder / "shared" / "reference-data"
        if candidate.is_dir():
            return candidate
    return None

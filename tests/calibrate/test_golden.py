"""The Markdown report, pinned as a golden file.

Regenerate after an intended change of the report:
    REALRECALL_REGENERATE_GOLDEN=1 /work/venv/bin/python -m pytest tests/calibrate/test_golden.py -q
then read the diff before committing it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from calibrate.results_builder import per_query, ranks_set, results_document
from realrecall.calibrate import calibrate
from realrecall.calibrate.report import render

GOLDEN = Path(__file__).parent / "golden" / "report.md"


def golden_report_text() -> str:
    real = (
        ranks_set("real", 24, 8, prefix="rl", type="lookup", language="en")
        + [per_query(f"rh{i}", "real", rank=(i % 4) + 1 if i % 3 else None, type="howto", language="de")
           for i in range(12)]
    )  # fmt: skip
    synthetic = (
        ranks_set("synthetic", 45, 3, prefix="sl", type="lookup", language="en")
        + [per_query(f"sh{i}", "synthetic", rank=(i % 2) + 1, type="howto", language="de") for i in range(20)]
        + ranks_set("synthetic", 9, 1, prefix="sc", type="compare", language="en")
    )
    report = calibrate(
        results_document([("synthetic", synthetic), ("real", real)]),
        answers={"rl0": True, "rl30": False, "rh0": True, "rh1": False},
        fail_under={"recall@10": 0.7},
        max_gap=0.15,
        seed=7,
        realism=True,
        now=datetime(2026, 12, 2, tzinfo=UTC),
    )
    return render(report, "markdown")


def test_markdown_report_matches_the_golden_file() -> None:
    text = golden_report_text()
    if os.environ.get("REALRECALL_REGENERATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")

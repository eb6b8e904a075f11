"""pandas and pyarrow are imported only for files big enough to pay for them, and only what is used.

Importing pandas took 0.25-0.3 s of CPU and pyarrow 0.07-0.1 s, a fixed cost the CLI paid on every
100k-query evaluation (0.52 s of its 1.03x pytrec_eval's CPU). The chunk readers need neither; the
column readers need pyarrow, and pandas only for a run whose fields are parted by runs of whitespace.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

PLAIN_RUN = "q1 Q0 a 1 3.5 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\n"
SPACED_RUN = "q1  Q0 a 1 3.5 t\nq1 Q0\t\tb 2 2 t\nq2 Q0 c 1 1 t\n"
QRELS = "q1 0 a 1\nq2 0 c 1\n"


def _loaded(run: Path, qrels: Path, *, columns_from: int | None) -> set[str]:
    """pandas and pyarrow as loaded after evaluating the run on the qrels in a fresh process (the column
    readers from a size on)."""
    code = (
        "import json, sys\n"
        "from realrecall.formats import trec_fast\n"
        f"if {columns_from!r} is not None:\n"
        f"    trec_fast.RUN_COLUMNS_MIN_BYTES = trec_fast.QRELS_COLUMNS_MIN_BYTES = {columns_from!r}\n"
        "from realrecall import load_gold, load_run\n"
        "from realrecall.evaluate import evaluate, write_per_query, write_results\n"
        f"run, gold = load_run({str(run)!r}), load_gold({str(qrels)!r})\n"
        "result = evaluate(gold, run=run, k=(1, 10))\n"  # scored, written, ranked: all of a CLI run
        f"write_results(result, {str(run.parent / 'results.json')!r})\n"
        f"assert write_per_query(result, {str(run.parent / 'per_query.jsonl')!r}) == 2\n"
        "print(json.dumps(sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


def _files(tmp_path: Path, run: str) -> tuple[Path, Path]:
    (tmp_path / "run.txt").write_text(run)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path / "run.txt", tmp_path / "qrels.txt"


def test_small_files_are_read_without_pandas_or_pyarrow(tmp_path: Path) -> None:
    assert _loaded(*_files(tmp_path, PLAIN_RUN), columns_from=None) == set()


def test_a_big_plain_file_is_read_by_pyarrow_without_pandas(tmp_path: Path) -> None:
    assert _loaded(*_files(tmp_path, PLAIN_RUN), columns_from=0) == {"pyarrow"}


def test_pandas_is_imported_for_a_run_only_its_parser_reads(tmp_path: Path) -> None:
    assert _loaded(*_files(tmp_path, SPACED_RUN), columns_from=0) == {"pandas", "pyarrow"}

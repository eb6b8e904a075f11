"""The fast paths of the TREC readers: plain files read at C speed, anything else declined.

Every reader here returns exactly what the exact reader of its format returns for the same file
(``trec_runs.read_run``, ``trec_qrels.read_qrels``: line by line, as trec_eval 10 reads, naming the
line that is wrong), or None for a file it cannot read that way, which the exact reader then reads.
So a fast path changes how quickly a file is read, never what is read. One switch turns them off:
``load_run(path, exact=True)`` and ``load_gold(path, exact=True)`` read with the exact readers alone,
and the tests read every file both ways (``tests/formats/test_trec_fast_paths.py``).

Two kinds, tried in turn:

- ``columns``: a C parser into Arrow columns (pyarrow's CSV reader; pandas' for runs whose fields are
  parted by runs of whitespace), for files of ``RUN_COLUMNS_MIN_BYTES`` (runs) or
  ``QRELS_COLUMNS_MIN_BYTES`` (qrels) or more, where the parser's speed pays for importing it;
  ``arrow`` holds the byte scan that tells which files it reads exactly.
- ``chunks``: one C-level ``str.split`` per chunk of lines, for smaller files and any file the
  columns decline (or when pyarrow is not installed).

This package imports neither numpy nor pyarrow until a file is read: loading a gold set stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from realrecall.formats.trec_fast.columns import RunColumns

__all__ = ["QRELS_COLUMNS_MIN_BYTES", "RUN_COLUMNS_MIN_BYTES", "read_qrels", "read_run"]

# Below these sizes the chunk readers are as quick, and spare importing pyarrow (0.07-0.1 s).
RUN_COLUMNS_MIN_BYTES = 8 << 20
QRELS_COLUMNS_MIN_BYTES = 8 << 20


def read_run(path: Path) -> RunColumns | tuple[dict[str, dict[str, float]], np.ndarray] | None:
    """A TREC run read by a fast path: Arrow columns (a big file), or per query ``{passage id:
    position}`` with the flat float64 scores in file order (chunks); None: read it exactly."""
    from realrecall.formats.trec_fast.chunks import read_run_chunks

    if _size(path) >= RUN_COLUMNS_MIN_BYTES:
        from realrecall.formats.trec_fast.columns import read_run_columns

        columns = read_run_columns(path)
        if columns is not None:
            return columns
    return read_run_chunks(path)


def read_qrels(path: Path) -> dict[str, dict[str, int]] | None:
    """``{query_id: {passage_id: grade}}`` of TREC qrels read by a fast path; None: read it exactly."""
    from realrecall.formats.trec_fast.chunks import read_qrels_chunks

    if _size(path) >= QRELS_COLUMNS_MIN_BYTES:
        from realrecall.formats.trec_fast.columns import read_qrels_columns

        judged = read_qrels_columns(path)
        if judged is not None:
            return judged
    return read_qrels_chunks(path)


def _size(path: Path) -> int:
    """The file's size in bytes; 0 for what is not a readable file (the exact reader says what it is)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0

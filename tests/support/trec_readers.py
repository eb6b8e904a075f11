"""The TREC readers a test can choose: each fast path alone, or the exact reader (the one switch).

``columns`` and ``chunks`` are the two fast paths of ``realrecall.formats.trec_fast``, each made the
first one tried whatever a file's size (the columns for every file; the chunks for every file); a
file a fast path declines is still read by the exact reader, as in use. ``exact`` is ``exact=True``.
"""

from __future__ import annotations

import pytest

from realrecall.formats import trec_fast

READERS = ("columns", "chunks", "exact")


def choose(reader: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Make ``reader`` the one ``load_run`` and ``load_gold`` try first; returns their ``exact``."""
    size = 0 if reader == "columns" else 1 << 62
    monkeypatch.setattr(trec_fast, "RUN_COLUMNS_MIN_BYTES", size)
    monkeypatch.setattr(trec_fast, "QRELS_COLUMNS_MIN_BYTES", size)
    return reader == "exact"

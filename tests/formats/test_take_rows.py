"""``trec_fast.arrow.take_rows``: rows of a chunked column in any order, without joining its chunks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from realrecall.formats.trec_fast.arrow import take_rows


def test_take_rows_equals_take_across_chunks_in_any_order() -> None:
    column = pa.chunked_array([["a", "b", "c"], [], ["d"], ["e", "f"]])
    rows = np.array([5, 0, 3, 3, 2, 4, 1], dtype=np.int64)
    assert take_rows(column, rows).to_pylist() == column.take(pa.array(rows)).to_pylist()
    assert take_rows(column, np.zeros(0, dtype=np.int64)).to_pylist() == []

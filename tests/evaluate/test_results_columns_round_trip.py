"""results.json's per-query columns read back as the records evaluate made, on generated gold sets.

Queries with and without text, type, language, origin, metadata (nested values, a field named like a
per-query key) and provenance, judged passages retrieved or not, graded 0 to 3: whatever evaluate
returns, writing it and reading the file back gives the same records, through either source of
columns (evaluate's own, or read off each QueryResult of a result read back).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from realrecall.evaluate import evaluate, load_results, write_results
from realrecall.gold import GoldQuery, GoldSet
from realrecall.provenance import Provenance
from realrecall.runs import Run

PASSAGES = [f"p{i}" for i in range(6)]
texts = st.sampled_from(
    ["", "how do I rotate a key?", "ERR_42 on login", "vs or which", "Ünïcode \u2028 text"]
)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", "é"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2)
    ),
    max_leaves=4,
)
metadata = st.dictionaries(
    st.sampled_from(["source", "form", "ticket", "metrics", "top"]), values, max_size=3
)


@st.composite
def queries(draw: st.DrawFn, query_id: str) -> GoldQuery:
    judged = draw(st.dictionaries(st.sampled_from(PASSAGES), st.integers(0, 3), min_size=1, max_size=3))
    return GoldQuery(
        query_id,
        draw(texts),
        judged,
        draw(st.sampled_from([None, "real", "synthetic"])),
        draw(st.sampled_from([None, "lookup", "how-to"])),
        draw(st.sampled_from([None, "en", "de"])),
        metadata=draw(metadata),
        provenance=draw(st.sampled_from([None, Provenance.from_dict({"backend": "extractive"})])),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[GoldSet, Run, tuple[str, ...]]:
    n = draw(st.integers(1, 6))
    gold = GoldSet(tuple(draw(queries(f"q{i}")) for i in range(n)), name="g")
    ranked = {
        f"q{i}": draw(st.lists(st.sampled_from(PASSAGES), unique=True, max_size=4))
        for i in range(n)
        if draw(st.booleans())
    }
    run = Run.from_lists({qid: ids for qid, ids in ranked.items() if ids} or {"other": ["p0"]}, name="r")
    by = draw(st.sampled_from([(), ("type",), ("source",), ("language", "source")]))
    return gold, run, by


@settings(max_examples=150, deadline=None)
@given(cases())
def test_results_json_reads_back_as_the_records_evaluate_made(
    case: tuple[GoldSet, Run, tuple[str, ...]],
) -> None:
    gold, run, by = case
    result = evaluate(gold, run=run, k=(1, 3), by=list(by))
    expected = result.to_dict()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        write_results(result, path)
        table = json.loads(path.read_text(encoding="utf-8"))["gold_sets"][0]["per_query"]
        read = load_results(path)
        assert read.to_dict() == expected
        # Columns read off the QueryResults of a result read back: the same file.
        write_results(read, Path(folder) / "again.json")
        assert (Path(folder) / "again.json").read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert table["query_id"] == [query.query_id for query in gold]
    assert all(len(column) == len(gold) for column in table["metrics"].values())

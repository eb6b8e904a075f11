"""The docs' tables of metrics, retrievers, their options and strategies are made from the registries.

When one fails, regenerate the tables and review the change:

    .venv/bin/python tests/support/docs_tables.py
"""

from __future__ import annotations

from evaluate.retrievers import toy_retriever
from realrecall.evaluate.metrics import METRICS
from realrecall.evaluate.retrievers import RETRIEVERS, register, unregister
from realrecall.evaluate.retrievers.registry import CUSTOM
from realrecall.generate.strategies import STRATEGIES
from support import docs_tables


def test_every_generated_table_in_the_docs_is_what_the_registries_say():
    stale = [
        str(page.relative_to(docs_tables.ROOT))
        for page in docs_tables.pages()
        if docs_tables.regenerated(text := page.read_text(encoding="utf-8")) != text
    ]
    assert stale == [], f"regenerate them: {docs_tables.COMMAND}"


def _blocks() -> set[str]:
    pages = docs_tables.pages()
    return {name for page in pages for name in docs_tables.blocks(page.read_text(encoding="utf-8"))}


def test_the_docs_hold_the_tables_of_every_registry_and_every_retrievers_options():
    expected = {"metrics", "retrievers", "strategies"} | {
        f"options {spec.name}" for spec in [*RETRIEVERS.values(), CUSTOM]
    }
    missing = sorted(expected - _blocks())
    # A new retriever's section in docs/retrievers.md gets the two comment lines of a generated
    # table (as the others have), then the command fills it in.
    assert missing == [], f"add these generated tables to docs/, then run {docs_tables.COMMAND}"


def test_a_registered_retriever_is_a_row_of_the_retrievers_table_and_has_an_options_table():
    spec = toy_retriever.RETRIEVER
    register(spec)
    try:
        rows = docs_tables.table("retrievers").splitlines()
        options = docs_tables.table(f"options {spec.name}").splitlines()
    finally:
        unregister(spec.name)
    assert f"| `{spec.name}` | {spec.summary} |  |" in rows
    assert options[0] == f"| option (`{spec.options.__name__}`) | takes | default | meaning |"
    assert "| `reverse` | true or false | false | rank the corpus back to front |" in options


def test_each_metric_kind_is_a_row_naming_the_trec_eval_measure_of_the_registry():
    rows = docs_tables.table("metrics").splitlines()
    for name, kind in METRICS.items():
        assert any(row.startswith(f"| `{name}@k` | {kind.definition} | `{kind.trec_eval}") for row in rows)
        if kind.cutoff == "optional":
            assert any(row.startswith(f"| `{name}` |") and f"`{kind.trec_eval_whole}`" in row for row in rows)


def test_each_strategy_is_a_row_of_the_strategies_table():
    rows = docs_tables.table("strategies").splitlines()
    for name, spec in STRATEGIES.items():
        assert any(row.startswith(f"| `{name}`") and row.endswith(f"| {spec.summary} |") for row in rows)

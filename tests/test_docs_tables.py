"""The docs' tables of metrics, retrievers, their options and strategies are made from the registries.

When one fails, regenerate the tables and review the change:

    .venv/bin/python tests/support/docs_tables.py
"""

from __future__ import annotations

from evaluate.retrievers import toy_retriever
from realrecall.evaluate.metrics import METRICS
from realrecall.evaluate.retrievers import register, unregister
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


def test_the_docs_hold_the_tables_of_every_registry():
    expected = {
        "metrics", "retrievers", "strategies", "other retrievers", f"options {CUSTOM.name}",
        "settings generate", "settings evaluate", "settings calibrate", "settings drift",
    }  # fmt: skip
    assert sorted(expected - _blocks()) == []


def test_a_registered_retriever_gets_a_row_and_its_options_with_no_docs_edited():
    spec = toy_retriever.RETRIEVER
    page = (docs_tables.DOCS / "retrievers.md").read_text(encoding="utf-8")
    register(spec)
    try:
        rows = docs_tables.table("retrievers").splitlines()
        others = docs_tables.table("other retrievers", page).splitlines()
    finally:
        unregister(spec.name)
    assert f"| `{spec.name}` | {spec.summary} |  |" in rows
    assert f"`{spec.name}`: {spec.summary}." in others
    assert f"| option (`{spec.options.__name__}`) | takes | default | meaning |" in others
    assert "| `reverse` | true or false | false | rank the corpus back to front |" in others


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

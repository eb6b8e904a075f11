"""Labels are made when a slice, a stratum or a report reads them, not for every evaluation.

A million distinct questions took 9.4 of the 26.9 s of CPU of evaluating them while every query was
labelled up front, sliced by type or not. Now evaluate labels for a ``type`` or ``form`` slice only,
results.json holds each record's own labels, and a reader (calibrate's strata, compare's slices, a
review) gets the rules' labels of a query without its own from ``QueryResult.label``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from realrecall.evaluate import evaluate, load_results, write_per_query, write_results
from realrecall.gold import GoldQuery, GoldSet
from realrecall.labels import Labeller, TypeRules, default_type_rules
from realrecall.runs import Run

TEXTS = ("why does sync fail after the upgrade?", "ERR_SYNC_042", "export notes as markdown", "")


def _gold() -> GoldSet:
    queries = [
        GoldQuery(f"q{i}", text, {f"p{i}": 1}, metadata={"source": "tickets"}) for i, text in enumerate(TEXTS)
    ]
    queries.append(GoldQuery("own", TEXTS[0], {"p9": 1}, type="mine", metadata={"form": "chat"}))
    return GoldSet(tuple(queries), name="tickets")


def _run() -> Run:
    return Run.from_scores({f"q{i}": {f"p{i}": 1.0, "x": 0.5} for i in range(len(TEXTS))})


def _refuse(kind: str):  # type: ignore[no-untyped-def]
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a {kind} was labelled")

    return refuse


def _no_labelling(monkeypatch: pytest.MonkeyPatch, *kinds: str) -> None:
    """Every way to a label of ``kinds`` (the rules themselves, and the labeller before them) fails."""
    for kind in kinds:
        monkeypatch.setattr(TypeRules, "classify" if kind == "type" else "classify_form", _refuse(kind))
        monkeypatch.setattr(Labeller, f"{kind}_of", _refuse(kind))
        monkeypatch.setattr(Labeller, f"{kind}s", _refuse(kind))


@pytest.mark.parametrize("by", [(), ("source",), ("language",)])
def test_evaluating_and_writing_without_a_type_or_form_slice_labels_no_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: tuple[str, ...]
) -> None:
    _no_labelling(monkeypatch, "type", "form")
    result = evaluate(_gold(), run=_run(), k=(1,), by=by)
    write_results(result, tmp_path / "results.json")
    assert write_per_query(result, tmp_path / "per_query.jsonl") == len(TEXTS) + 1
    loaded = load_results(tmp_path / "results.json")
    assert [q.type for q in loaded.queries] == [None] * len(TEXTS) + ["mine"]
    # Every query has a type and a form (its own or the rules'): fields to slice by, named unlabelled.
    assert {"type", "form"} <= set(result.present_fields()) & set(loaded.slice_fields())


def test_a_type_slice_labels_the_types_and_leaves_the_forms_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_labelling(monkeypatch, "form")
    rules = default_type_rules()
    result = evaluate(_gold(), run=_run(), k=(1,), by=("type",))
    slices = {s.value: s.n for s in result.gold_sets[0].slices}
    expected: dict[str, int] = {"mine": 1}
    for text in TEXTS:
        expected[rules.classify(text)[0]] = expected.get(rules.classify(text)[0], 0) + 1
    assert slices == expected


def test_results_json_holds_the_records_own_labels_and_a_reader_gets_the_rules(tmp_path: Path) -> None:
    rules = default_type_rules()
    result = evaluate(_gold(), run=_run(), k=(1,), by=("type", "form"))
    write_results(result, tmp_path / "results.json")
    table = json.loads((tmp_path / "results.json").read_text())["gold_sets"][0]["per_query"]
    assert table["type"] == [None] * len(TEXTS) + ["mine"]
    assert table["fields"] == [{"source": "tickets"}] * len(TEXTS) + [{"form": "chat"}]
    for queries in (
        result.gold_sets[0].queries,
        load_results(tmp_path / "results.json").gold_sets[0].queries,
    ):
        labels = [(q.label("type"), q.label("form")) for q in queries]
        assert labels == [rules.classify(text)[0:1] + rules.classify_form(text)[0:1] for text in TEXTS] + [
            ("mine", "chat")
        ]
        assert [(q.field("type"), q.field("form")) for q in queries] == labels
    sliced = {(s.field, s.value): s.n for s in result.gold_sets[0].slices}
    assert sum(n for (field, _), n in sliced.items() if field == "form") == len(TEXTS) + 1


_CLI_PROBE = """
import json, sys
from realrecall.cli import main
sys.argv = ["realrecall", "evaluate", "--gold", sys.argv[1], "--run", sys.argv[2]]
try:
    main()
finally:
    print(json.dumps(sorted(m for m in sys.modules if m.startswith(("realrecall.labels", "tomllib")))))
"""


def test_scoring_a_run_from_the_command_line_loads_no_type_rules(tmp_path: Path) -> None:
    # The rules' module (and tomllib, which reads their file) are imported when a query is first
    # labelled: 12 ms of CPU of every evaluate's start-up when they were imported with evaluate.
    (tmp_path / "qrels.txt").write_text("q1 0 p1 1\nq2 0 p2 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 p1 1 2.0 r\nq1 Q0 p2 2 1.0 r\nq2 Q0 p1 1 1.0 r\n")
    done = subprocess.run(
        [sys.executable, "-c", _CLI_PROBE, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    assert "recall@1" in done.stdout  # the command ran: its table was printed
    assert json.loads(done.stdout.splitlines()[-1]) == []

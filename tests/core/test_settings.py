"""The settings mechanism (``realrecall.settings``): one declaration per option, converted and checked
when the object is made, whoever gives the value."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import pytest

from realrecall.errors import InputError, SettingError
from realrecall.evaluate import evaluate, evaluate_files
from realrecall.evaluate.retrievers import RunSettings
from realrecall.evaluate.settings import EvaluateSettings, default_metrics
from realrecall.settings import Settings, setting_fields, setting_rows, settings_from, settings_with


@dataclass(frozen=True, kw_only=True)
class Inner(Settings):
    depth: Annotated[int, "How deep."] = 1


@dataclass(frozen=True, kw_only=True)
class Example(Settings):
    cutoffs: Annotated[tuple[int, ...], "Cut-offs."] = (1, 5)
    share: Annotated[float | None, "A share."] = None
    mode: Annotated[Literal["fast", "exact"], "How."] = "fast"
    folder: Annotated[Path | None, "Where."] = None
    weights: Annotated[dict[str, float], "Weights."] = field(default_factory=dict)
    on: Annotated[bool, "Whether."] = False
    inner: Inner = field(default_factory=Inner)

    def __post_init__(self) -> None:
        super().__post_init__()
        if any(n < 1 for n in self.cutoffs):
            raise SettingError("cutoffs", f"must be >= 1, got {list(self.cutoffs)}")


def test_command_line_text_is_parsed_by_each_fields_type():
    made = settings_from(
        Example,
        {"cutoffs": "1, 10", "share": "none", "mode": "exact", "folder": "out", "on": "yes",
         "weights": ["a=0.5,b=2"], "depth": "3"},
        text=True,
    )  # fmt: skip
    assert made == Example(
        cutoffs=(1, 10), mode="exact", folder=Path("out"), on=True, weights={"a": 0.5, "b": 2.0},
        inner=Inner(depth=3),
    )  # fmt: skip


def test_typed_values_take_the_fields_form_and_text_is_not_parsed_for_them():
    assert Example(cutoffs=[2, 3], share=1, folder="x").cutoffs == (2, 3)  # type: ignore[arg-type]
    assert Example(share=1).share == 1.0
    assert isinstance(Example(share=1).share, float)
    assert Example(cutoffs=7).cutoffs == (7,)  # type: ignore[arg-type]  # one item: a tuple of one
    with pytest.raises(SettingError, match=r"cutoffs must be a list of whole numbers, got '1,5'"):
        Example(cutoffs="1,5")  # type: ignore[arg-type]
    with pytest.raises(SettingError, match=r"share must be a number or none, got '0\.5'"):
        Example(share="0.5")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"cutoffs": [0, 5]}, "cutoffs must be >= 1, got [0, 5]"),
        ({"cutoffs": [True]}, "cutoffs must be a list of whole numbers, got [True]"),
        ({"share": float("nan")}, "share must be a number or none, got nan"),
        ({"mode": "slow"}, "mode must be one of fast, exact, got 'slow'; e.g. fast"),
        ({"weights": {"a": "x"}}, "weights of 'a' must be a number, got 'x'"),
        ({"weights": 3}, "weights must be a table of names to numbers, got 3"),
        ({"depth": 1.5}, "depth must be a whole number, got 1.5"),
    ],
)
def test_a_wrong_value_is_one_setting_error_naming_the_setting(values, message):
    with pytest.raises(SettingError) as caught:
        settings_from(Example, values)
    assert str(caught.value) == message
    assert caught.value.setting == next(iter(values))


def test_a_front_end_names_the_setting_its_own_way_with_the_same_rule():
    with pytest.raises(SettingError) as caught:
        settings_from(Example, {"cutoffs": "0"}, text=True)
    error = caught.value
    assert str(error.labelled("--cutoffs")) == "--cutoffs must be >= 1, got [0]"
    assert str(error.labelled("[stage] cutoffs", path="p.toml", line=4)) == (
        "p.toml:4: [stage] cutoffs must be >= 1, got [0]"
    )


def test_an_unknown_name_is_refused_with_the_closest_one():
    with pytest.raises(SettingError, match=r"'cutof' is not a setting of Example; did you mean 'cutoffs'\?"):
        settings_from(Example, {"cutof": 1})
    with pytest.raises(SettingError, match="'kk' is not a setting of evaluate; did you mean 'k'"):
        evaluate([], run=None, kk=3)


def test_nested_settings_are_set_by_their_own_names_and_keep_the_rest():
    start = Example(inner=Inner(depth=4), on=True)
    changed = settings_from(Example, {"depth": 9}, start=start)
    assert (changed.inner.depth, changed.on) == (9, True)
    assert [item.name for item in setting_fields(Example)][-1] == "depth"
    assert setting_fields(Example)[-1].path == ("inner", "depth")


def test_a_name_declared_at_two_levels_is_a_declaration_error():
    @dataclass(frozen=True, kw_only=True)
    class Twice(Settings):
        depth: Annotated[int, "Also depth."] = 2
        inner: Inner = field(default_factory=Inner)

    with pytest.raises(RuntimeError, match=r"settings \[.depth.\] are declared twice"):
        setting_fields(Twice)


def test_relative_paths_from_a_file_are_read_from_its_folder(tmp_path):
    made = settings_from(Example, {"folder": "sub/out"}, base=tmp_path)
    assert made.folder == tmp_path / "sub" / "out"
    assert settings_from(Example, {"folder": "/abs"}, base=tmp_path).folder == Path("/abs")


def test_keyword_options_go_over_the_settings_object():
    given = EvaluateSettings(k=(1, 3), by=("type",))
    merged = settings_with(EvaluateSettings, given, {"k": 10, "workers": 2}, what="f")
    assert (merged.k, merged.by, merged.run_settings.workers) == ((10,), ("type",), 2)
    assert settings_with(EvaluateSettings, given, {}, what="f") is given
    with pytest.raises(SettingError, match="settings of f must be a EvaluateSettings, got RunSettings"):
        settings_with(EvaluateSettings, RunSettings(), {}, what="f")  # type: ignore[arg-type]


def test_rows_for_docs_leave_out_what_only_python_can_give():
    names = [row[0] for row in setting_rows(EvaluateSettings)]
    assert "workers" in names
    assert "k" in names
    assert "index_progress" not in names
    k_row = next(row for row in setting_rows(EvaluateSettings) if row[0] == "k")
    assert k_row[1:3] == ("a list of whole numbers", "1,5,10,50")


def test_cutoffs_break_one_rule_with_one_message_in_every_function_that_takes_them(tmp_path):
    expected = "k must hold whole numbers >= 1, got [0, 5]"
    for attempt in (
        lambda: EvaluateSettings(k=(0, 5)),
        lambda: default_metrics([0, 5]),
        lambda: evaluate([], run=None, k=[0, 5]),
        lambda: evaluate_files([tmp_path / "missing.jsonl"], k=[0, 5]),
        lambda: settings_from(EvaluateSettings, {"k": "0,5"}, text=True),
    ):
        with pytest.raises(InputError) as caught:
            attempt()
        assert str(caught.value).startswith(expected)


def test_evaluate_settings_turn_one_name_into_a_list_of_one():
    settings = EvaluateSettings(by="type", metrics="recall@10", k=10)  # type: ignore[arg-type]
    assert (settings.by, settings.metrics, settings.k) == (("type",), ("recall@10",), (10,))
    assert EvaluateSettings(metrics=("recall@1", "recall@1")).metrics == ("recall@1",)
    assert EvaluateSettings(k=(1, 10)).metric_names() == ("recall@1", "recall@10", "mrr@10", "ndcg@10")

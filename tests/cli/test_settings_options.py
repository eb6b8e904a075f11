"""A command's options are its stage's settings (``realrecall.cli.settings_options``): one option per
field, with the declaration's help and default, reaching the library function as the field's value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from realrecall.calibrate.settings import (
    AgreementSettings,
    CalibrateSettings,
    CompareSettings,
    DriftSettings,
    LabelAgreementSettings,
    PlanSettings,
    PPISettings,
)
from realrecall.curate.judge_settings import JudgeSettings
from realrecall.errors import InputError
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.settings import SettingField, Settings, shown
from support import cli
from support.settings_samples import as_text, sample, walked_fields


def command_line(item: SettingField, value: Any) -> list[str]:
    """The words that set ``item`` to ``value``: ``--k 2,3``, ``--no-use-cache``, one ``--x K=V`` per item."""
    if isinstance(value, bool):
        name = item.option.removeprefix("--")
        return [f"--{name}" if value else f"--no-{name}"]
    return [word for text in as_text(value) for word in (item.option, text)]


def value_of(settings: Settings, item: SettingField) -> Any:
    value: Any = settings
    for name in item.path:
        value = getattr(value, name)
    return value


def command_options(name: str) -> dict[str, Any]:
    """The options of ``name``, a command or a group's subcommand (``judge agreement``)."""
    import typer.main

    from realrecall.cli import app

    command: Any = typer.main.get_command(app)
    for word in name.split():
        command = command.commands[word]
    return {param.name: param for param in command.params}


@dataclass(frozen=True)
class Walk:
    """A command whose options are the fields of ``cls``, and the library function that gets them."""

    command: str
    """The command's words: ``compare``, ``judge ppi``."""
    cls: type[Settings]
    function: str
    param: str
    arguments: tuple[str, ...]
    stubs: tuple[str, ...] = ()
    """Readers the command calls before the library function, made to return nothing."""
    given: tuple[tuple[str, str], ...] = ()
    """Settings the arguments set (a required ``--model``): the rest keep their defaults."""


WALKS = (
    Walk("evaluate", EvaluateSettings, "realrecall.evaluate.evaluate_files", "settings", ("-g", "g.jsonl")),
    Walk("calibrate", CalibrateSettings, "realrecall.calibrate.calibrate", "settings", ("results.json",)),
    Walk(
        "calibrate", EvaluateSettings, "realrecall.calibrate.one_call.evaluate_and_calibrate", "evaluation",
        ("--synthetic", "s.jsonl", "--real", "r.jsonl"),
    ),
    Walk("compare", CompareSettings, "realrecall.calibrate.compare", "settings", ("a.json", "b.json")),
    Walk(
        "agreement", AgreementSettings, "realrecall.calibrate.set_agreement.set_agreement", "settings",
        ("a.txt", "b.txt", "--measure", "ndcg@10"), ("realrecall.calibrate.query_scores.load_query_scores",),
    ),
    Walk(
        "drift", DriftSettings, "realrecall.calibrate.drift.detect_drift", "settings",
        ("real.txt", "traffic.txt"), ("realrecall.calibrate.realism.load_questions",),
    ),
    Walk(
        "plan", PlanSettings, "realrecall.calibrate.plan.plan", "settings",
        ("results.json", "--target-width", "0.1"),
    ),
    Walk(
        "judge", JudgeSettings, "realrecall.curate.judge.judge_pool", "settings",
        ("--gold", "g.jsonl", "--per-query", "p.jsonl", "-c", "c.jsonl", "-o", "o.jsonl", "--model", "m"),
        ("realrecall.gold.load_gold", "realrecall.corpus.load_corpus",
         "realrecall.evaluate.results.read_per_query"),
        (("model", "m"),),
    ),
    Walk(
        "judge agreement", LabelAgreementSettings,
        "realrecall.calibrate.judge_agreement.load_label_agreement", "settings", ("h.qrels", "j.qrels"),
    ),
    Walk(
        "judge ppi", PPISettings, "realrecall.calibrate.ppi.prediction_powered", "settings",
        ("judge.txt", "human.txt", "--measure", "ndcg@10"),
        ("realrecall.calibrate.query_scores.load_query_scores",),
    ),
)  # fmt: skip


@pytest.mark.parametrize(
    ("walk", "item"),
    [(walk, item) for walk in WALKS for item in walked_fields(walk.cls)],
    ids=lambda value: value.name if isinstance(value, SettingField) else f"{value.command}-{value.param}",
)
def test_each_setting_is_an_option_of_its_command_whose_value_reaches_the_library(
    walk, item, monkeypatch, tmp_path
):
    value = sample(item, tmp_path)
    received: list[Settings] = []

    def library_function(*arguments: Any, **keywords: Any) -> None:
        received.append(keywords[walk.param])
        raise InputError("stopped before reading anything")

    monkeypatch.setattr(walk.function, library_function)
    for stub in walk.stubs:
        monkeypatch.setattr(stub, lambda *arguments, **keywords: None)
    done = cli.run(
        *walk.command.split(), *walk.arguments, *command_line(item, value), cwd=tmp_path,
        env={"OPENAI_API_KEY": "unused"},
    )  # fmt: skip

    assert done.err_lines == ["error: stopped before reading anything"]
    assert value_of(received[0], item) == value
    defaults = walk.cls(**{name: text for name, text in walk.given if name != item.name})
    others = [other for other in walked_fields(walk.cls) if other.name != item.name]
    assert all(value_of(received[0], other) == value_of(defaults, other) for other in others)


@pytest.mark.parametrize("walk", WALKS, ids=lambda walk: f"{walk.command}-{walk.param}")
def test_each_option_shows_its_declarations_help_and_default(walk):
    options = command_options(walk.command)
    for item in walked_fields(walk.cls):
        if walk.param == "evaluation" and item.name == "by":
            continue  # one --by slices both stages of one-call mode; its help is calibrate's
        param = options[item.name]
        assert item.help[1:] in param.help, item.name  # after "One-call mode: " the first letter is small
        if not isinstance(item.default, bool) and shown(item.default) and walk.param == "settings":
            assert param.default == shown(item.default), item.name
    help_text = cli.run("evaluate", "--help", env={"COLUMNS": "200"}).stdout
    assert "--k <int,...>" in help_text
    assert "[default: 1,5,10,50]" in help_text
    assert "--gold-from <auto|ids|evidence>" in help_text


def test_a_bad_option_value_is_the_settings_rule_naming_the_option(tmp_path):
    done = cli.run("evaluate", "--gold", "g.jsonl", "--evidence-coverage", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert done.err_lines == [
        "error: --evidence-coverage must be a number in (0, 1], got 2.0; "
        "0.5: a chunk holding half of the evidence is gold"
    ]
    typo = cli.run("evaluate", "--gold", "g.jsonl", "--workers", "two", cwd=tmp_path)
    assert typo.err_lines == [
        "error: --workers must be a whole number, got 'two'; see 'realrecall evaluate --help'"
    ]


def test_an_option_left_out_keeps_the_settings_default_not_its_help_text(monkeypatch, tmp_path):
    received: list[EvaluateSettings] = []

    def evaluate_files(gold: Any, **arguments: Any) -> None:
        received.append(arguments["settings"])
        raise InputError("stopped")

    monkeypatch.setattr("realrecall.evaluate.evaluate_files", evaluate_files)
    cli.run("evaluate", "--gold", str(Path("gold.jsonl")), cwd=tmp_path)
    assert received == [EvaluateSettings()]


def test_a_bad_value_of_a_report_commands_option_is_its_settings_rule(tmp_path):
    done = cli.run("drift", "real.txt", "traffic.txt", "--permutations", "5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.err_lines == [
        "error: --permutations must be at least 19, got 5; fewer shuffles cannot reach p = 0.05; the "
        "default is 200"
    ]
    with pytest.raises(InputError, match=r"^n_permutations must be at least 19, got 5; "):
        DriftSettings(n_permutations=5)
    splits = cli.run("agreement", "a.txt", "b.txt", "--measure", "ndcg@10", "--splits", "0", cwd=tmp_path)
    assert splits.err_lines == ["error: --splits must be a whole number >= 1, got 0; e.g. 1000"]
    plan = cli.run("plan", "results.json", "--target-width", "0.1", "--confidence", "95", cwd=tmp_path)
    assert plan.err_lines == ["error: --confidence must be between 0 and 1, got 95.0; e.g. 0.95"]
    ppi = cli.run("judge", "ppi", "j.txt", "h.txt", "--measure", "ndcg@10", "--confidence", "1", cwd=tmp_path)
    assert ppi.err_lines == ["error: --confidence must be between 0 and 1, got 1.0; e.g. 0.95"]
    grade = cli.run("judge", "agreement", "h.qrels", "j.qrels", "--threshold", "0", cwd=tmp_path)
    assert grade.err_lines == ["error: --threshold must be a grade >= 1, got 0; e.g. 2 for graded labels"]


def test_a_library_calls_advice_names_the_setting_as_the_commands_option():
    """``named_as_options``: a setting's error and a silent endpoint's advice name the option; an error
    about a setting the command does not have is left as the library raised it."""
    from realrecall.cli.settings_options import named_as_options
    from realrecall.errors import EndpointSilent, SettingError
    from realrecall.generate.config import GenerateConfig

    silent = EndpointSilent("no answer", label="the client's LLMConfig(timeout=...)")
    with pytest.raises(EndpointSilent) as caught, named_as_options(GenerateConfig):
        raise silent
    assert str(caught.value) == (
        "no answer: check that the endpoint is running, or allow more time with --request-timeout "
        "(a rerun resumes)"
    )
    assert caught.value.__cause__ is silent
    by = pytest.raises(SettingError, match=r"^pipeline.toml:3: --by must name gold-set fields$")
    with by, named_as_options(EvaluateSettings):
        raise SettingError("by", "must name gold-set fields", path="pipeline.toml", line=3)
    with pytest.raises(EndpointSilent, match=r"time with --timeout \("), named_as_options(JudgeSettings):
        raise silent  # the judge's option of the same setting
    with pytest.raises(EndpointSilent) as unknown, named_as_options(PPISettings):
        raise silent
    assert unknown.value is silent

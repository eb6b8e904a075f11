"""A command's options are its stage's settings (``realrecall.cli.settings_options``): one option per
field, with the declaration's help and default, reaching the library function as the field's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
    import typer.main

    from realrecall.cli import app

    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    return {param.name: param for param in command.params}


@pytest.mark.parametrize("item", walked_fields(EvaluateSettings), ids=lambda item: item.name)
def test_each_evaluate_setting_is_an_option_whose_value_reaches_the_library(item, monkeypatch, tmp_path):
    value = sample(item, tmp_path)
    received: list[EvaluateSettings] = []

    def evaluate_files(gold: Any, **arguments: Any) -> None:
        received.append(arguments["settings"])
        raise InputError("stopped before reading anything")

    monkeypatch.setattr("realrecall.evaluate.evaluate_files", evaluate_files)
    done = cli.run("evaluate", "--gold", "gold.jsonl", *command_line(item, value), cwd=tmp_path)

    assert done.err_lines == ["error: stopped before reading anything"]
    assert value_of(received[0], item) == value
    defaults = EvaluateSettings()
    others = [other for other in walked_fields(EvaluateSettings) if other.name != item.name]
    assert all(value_of(received[0], other) == value_of(defaults, other) for other in others)


def test_each_option_shows_its_declarations_help_and_default():
    options = command_options("evaluate")
    for item in walked_fields(EvaluateSettings):
        param = options[item.name]
        assert param.help.startswith(item.help), item.name
        if not isinstance(item.default, bool) and shown(item.default):
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

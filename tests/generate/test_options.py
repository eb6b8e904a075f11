"""generate's options are GenerateConfig's fields (``realrecall.settings``): each one set on the command
line, as a key of a pipeline's ``[generate]`` or as a keyword of ``generate()`` reaches the library as
the field's value, and a bad one breaks the config's rule with one message, named the way its front end
names it.

The fields are walked from the declaration, so a field added to GenerateConfig is an option here with
no test edited; ``SAMPLES`` only holds the values whose rules want a shape their type cannot suggest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from generate.fakes import make_corpus
from realrecall.errors import InputError, SettingError
from realrecall.generate import generate
from realrecall.generate.config import GenerateConfig, Shard
from realrecall.llm import DeferredChatClient
from realrecall.pipeline.config import PIPELINE_GENERATE, load_pipeline_config
from realrecall.settings import SettingField, setting_fields, settings_from, shown
from support import cli
from support.settings_samples import as_toml, sample

SAMPLES: dict[str, Any] = {
    "backend": "extractive",
    "strategy": "situation",  # not the tests' default (conftest.py), nor the declared one
    "types": {"lookup": 1.0, "yes_no": 2.0},
    "languages": {"de": 1.0, "en": 2.0},
    "forms": {"keywords": 1.0, "typo": 0.5},
    "personas": ("an admin", "a student, new to it"),  # a comma inside one persona
    "shard": Shard(1, 4),
    "screen": "model",
    "sample": 0.5,
    "multi_chunk": 0.25,
}
# Settings that need another one beside them to be valid.
COMPANIONS: dict[str, dict[str, Any]] = {
    "cross_language": {"languages": {"de": 1.0, "en": 2.0}},
    # The situation strategy's own options (the tests' default strategy is direct, which refuses them).
    "audience": {"strategy": "situation"},
    "prompt_situation": {"strategy": "situation"},
    "prompt_query": {"strategy": "situation"},
}


def walked() -> list[SettingField]:
    return [item for item in setting_fields(GenerateConfig) if item.has_text_form]


def value_of(config: GenerateConfig, item: SettingField) -> Any:
    """The setting's value in ``config``, nested settings (``engine_settings``) followed."""
    value: Any = config
    for name in item.path:
        value = getattr(value, name)
    return value


def value_for(item: SettingField, folder: Path) -> Any:
    return SAMPLES[item.name] if item.name in SAMPLES else sample(item, folder)


def words(item: SettingField, value: Any) -> list[str]:
    """The command-line words that set ``item`` to ``value``."""
    form = item.text.form if item.text is not None else None
    if form == "switch" or isinstance(value, bool):
        name = item.option.removeprefix("--")
        on = value if isinstance(value, bool) else value == "model"
        return [f"--{name}" if on else f"--no-{name}"]
    if form == "repeated":
        return [word for one in value for word in (item.option, one)]
    if isinstance(value, Mapping):
        return [item.option, ",".join(f"{key}={weight}" for key, weight in value.items())]
    return [item.option, str(value) if isinstance(value, Shard) else shown(value)]


def toml_value(value: Any) -> Any:
    """The value as a TOML table gives it (a shard as its text, a path as a string)."""
    if isinstance(value, Shard):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


@pytest.mark.parametrize("item", walked(), ids=lambda item: item.name)
def test_each_setting_is_an_option_whose_value_reaches_the_library(item, monkeypatch, tmp_path):
    value = value_for(item, tmp_path)
    received: list[GenerateConfig] = []

    def generate(corpus: Any, output: Any, config: GenerateConfig, **arguments: Any) -> None:
        received.append(config)
        raise InputError("stopped before generating anything")

    monkeypatch.setattr("realrecall.generate.generate", generate)
    (tmp_path / "chunks.jsonl").write_text(json.dumps({"id": "c1", "text": "Some text."}) + "\n")
    companions = COMPANIONS.get(item.name, {})
    given = [word for name, other in companions.items() for word in words(_field(name), other)]
    done = cli.run(
        "generate", "--corpus", "chunks.jsonl", "--output", "out.jsonl", *words(item, value), *given,
        cwd=tmp_path, env={"OPENAI_API_KEY": "unused"},
    )  # fmt: skip

    assert done.err_lines == ["error: stopped before generating anything"]
    config = received[0]
    assert value_of(config, item) == value
    defaults = GenerateConfig()
    others = [other for other in walked() if other.name != item.name and other.name not in companions]
    assert {other.name: value_of(config, other) for other in others} == {
        other.name: value_of(defaults, other) for other in others
    }


@pytest.mark.parametrize("item", walked(), ids=lambda item: item.name)
def test_each_setting_is_a_keyword_of_generate_over_its_settings_object(item, monkeypatch, tmp_path):
    """As evaluate, calibrate and the other stages' functions: the settings' fields as keywords, laid
    over a settings object given (or the defaults), checked by the same rules."""
    value = value_for(item, tmp_path)
    received: list[GenerateConfig] = []

    async def run(corpus: Any, output: Any, config: GenerateConfig, **arguments: Any) -> None:
        received.append(config)
        raise InputError("stopped before generating anything")

    monkeypatch.setattr("realrecall.generate.run._generate", run)
    keywords = {item.name: value, **COMPANIONS.get(item.name, {})}
    start = GenerateConfig(concurrency=5)
    for given in (None, start):
        with pytest.raises(InputError, match=r"^stopped before generating anything$"):
            generate(make_corpus(1), tmp_path / "out.jsonl", given, **keywords)
    by_keywords, over_start = received
    assert by_keywords == settings_from(GenerateConfig, keywords)
    assert value_of(by_keywords, item) == value
    assert over_start == settings_from(GenerateConfig, keywords, start=start)
    if item.name != "concurrency":
        assert over_start.concurrency == 5


def test_an_unknown_keyword_of_generate_is_refused_with_the_closest_setting(tmp_path):
    with pytest.raises(
        SettingError, match=r"^'per_chunks' is not a setting of generate; did you mean 'per_chunk'"
    ):
        generate(make_corpus(1), tmp_path / "out.jsonl", per_chunks=2)
    with pytest.raises(InputError, match=r"^per_chunk must be an integer within \[1, 1000\], got 0"):
        generate(make_corpus(1), tmp_path / "out.jsonl", GenerateConfig(), per_chunk=0)


# The engine's keys are pipeline.toml's [engine] alone (tests/engine/test_settings.py).
IN_SECTION = [item for item in walked() if item.path[0] != "engine_settings"]


@pytest.mark.parametrize("item", IN_SECTION, ids=lambda item: item.name)
def test_each_setting_is_a_key_of_the_pipelines_generate_section(item, tmp_path):
    # The pipeline's backend is extractive unless it names one: each setting is given with llm's.
    value = "llm" if item.name == "backend" else value_for(item, tmp_path)
    given = {"backend": "llm", "model": "m", item.name: value, **COMPANIONS.get(item.name, {})}
    keys = "".join(f"{name} = {as_toml(toml_value(other))}\n" for name, other in given.items())
    path = tmp_path / "pipeline.toml"
    path.write_text(f"[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n{keys}")

    config = load_pipeline_config(path).generate

    assert value_of(config, item) == value
    others = [other for other in IN_SECTION if other.name not in given]
    assert {other.name: value_of(config, other) for other in others} == {
        other.name: value_of(PIPELINE_GENERATE, other) for other in others
    }


def test_each_option_shows_its_declarations_help():
    help_text = " ".join(cli.run("generate", "--help", env={"COLUMNS": "2000"}).stdout.split())
    for item in walked():
        assert " ".join(item.help.split()) in help_text, item.name
    assert "--persona TEXT" in help_text
    assert "--shard I/N" in help_text
    assert "--screen / --no-screen" in help_text
    assert "--cache <path>" in help_text


def test_a_bad_option_value_is_the_configs_rule_naming_the_option(tmp_path):
    (tmp_path / "chunks.jsonl").write_text(json.dumps({"id": "c1", "text": "Some text."}) + "\n")
    args = ["generate", "--corpus", "chunks.jsonl", "--output", "out.jsonl", "--backend", "extractive"]
    done = cli.run(*args, "--per-chunk", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert done.err_lines == [
        "error: --per-chunk must be an integer within [1, 1000], got 0; see 'realrecall generate --help'"
    ]
    typo = cli.run(*args, "--concurrency", "many", cwd=tmp_path)
    assert typo.err_lines == [
        "error: --concurrency must be a whole number, got 'many'; see 'realrecall generate --help'"
    ]
    with pytest.raises(InputError, match=r"^concurrency must be an integer within \[1, 10000\], got 0$"):
        GenerateConfig(concurrency=0)


def test_an_endpoint_that_is_no_http_url_is_one_rule_wherever_it_is_given(tmp_path, monkeypatch):
    hint = "give the API root, e.g. http://127.0.0.1:8000/v1"
    with pytest.raises(InputError) as in_python:
        GenerateConfig(base_url="localhost:8000")
    assert str(in_python.value) == f"base_url 'localhost:8000' is not an http(s) URL; {hint}"
    done = cli.run("generate", "--corpus", "c.jsonl", "--output", "o.jsonl", "--base-url", "localhost:8000",
                   cwd=tmp_path)  # fmt: skip
    assert done.err_lines == [f"error: --base-url 'localhost:8000' is not an http(s) URL; {hint}"]
    path = tmp_path / "pipeline.toml"
    path.write_text(
        "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\nbase_url = 'localhost:8000'\n"
    )
    with pytest.raises(InputError) as in_pipeline:
        load_pipeline_config(path)
    assert str(in_pipeline.value).endswith(
        f":5: [generate] base_url 'localhost:8000' is not an http(s) URL; {hint}"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8000")  # the environment's address, the same words
    with pytest.raises(InputError, match=r"^base_url 'localhost:8000' is not an http\(s\) URL; give the API"):
        DeferredChatClient(GenerateConfig().llm_config())


def test_near_duplicate_0_switches_the_filter_off_wherever_it_is_given():
    assert GenerateConfig(near_duplicate=0).near_duplicate is None
    assert settings_from(GenerateConfig, {"near_duplicate": 0}).near_duplicate is None


def _field(name: str) -> SettingField:
    return next(item for item in setting_fields(GenerateConfig) if item.name == name)

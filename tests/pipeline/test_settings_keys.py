"""pipeline.toml sets every option of evaluate, calibrate and drift, and the engine: ``[evaluate]``,
``[calibrate]``, ``[drift]`` and ``[engine]`` map each key to the field of that name of the stage's
settings, checked by the stage's own rules (``[generate]``'s keys: tests/generate/test_options.py).
The engine's keys are ``[engine]``'s alone, though ``EvaluateSettings`` holds them too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from realrecall.calibrate.settings import CalibrateSettings, DriftSettings
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import find_spec, make_options
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.pipeline.config import PIPELINE_EVALUATE, load_pipeline_config
from realrecall.settings import EngineSettings, SettingField, Settings
from support.settings_samples import as_toml, sample, walked_fields

BASE = "[corpus]\npath = 'c.jsonl'\n[generate]\noutput = 's.jsonl'\n"
STAGES: dict[str, type[Settings]] = {
    "evaluate": EvaluateSettings,
    "calibrate": CalibrateSettings,
    "drift": DriftSettings,
    "engine": EngineSettings,
}
STARTS: dict[str, Settings] = {
    "evaluate": PIPELINE_EVALUATE,
    "calibrate": CalibrateSettings(),
    "drift": DriftSettings(),
    "engine": EngineSettings(),
}
# What a section needs beside the key walked.
NEEDS = {"drift": "[real]\npath = 'r.jsonl'\n[drift]\ntraffic = 't.txt'\n"}


def value_of(settings: Settings, item: SettingField) -> Any:
    value: Any = settings
    for name in item.path:
        value = getattr(value, name)
    return value


def expected(item: SettingField, value: Any) -> Any:
    """What the config holds for ``value``: retriever options as the retriever's options convert them."""
    if item.name != "retriever_options":
        return value
    converted = make_options(find_spec("bm25"), value)
    return {key: getattr(converted, key) for key in value}


def in_section(section: str) -> list[SettingField]:
    """The keys of ``[section]``: its settings' fields, but the engine's outside ``[engine]``."""
    return [
        item
        for item in walked_fields(STAGES[section])
        if section == "engine" or item.path[0] != "engine_settings"
    ]


@pytest.mark.parametrize(
    ("section", "item"),
    [(section, item) for section in STAGES for item in in_section(section)],
    ids=lambda value: value.name if isinstance(value, SettingField) else value,
)
def test_each_setting_of_evaluate_and_calibrate_is_a_key_of_its_section(section, item, tmp_path):
    value = sample(item, tmp_path)
    text = NEEDS.get(section, f"[{section}]\n") + f"{item.name} = {as_toml(value)}\n"
    if section == "evaluate":  # the headline metric must be one the walked evaluate computes
        computed = EvaluateSettings(**{item.name: value} if len(item.path) == 1 else {}).metric_names()
        text += f"[calibrate]\nmetric = {as_toml(computed[0])}\n"
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + text)

    config = load_pipeline_config(path)

    stage: Settings = getattr(config, section)
    assert value_of(stage, item) == expected(item, value)
    start = STARTS[section]
    others = [other for other in in_section(section) if other.name != item.name]
    assert all(value_of(stage, other) == value_of(start, other) for other in others if other.name != "metric")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[calibrate]\ncalibrate_byy = 'language'\n",
            ":6: unknown key 'calibrate_byy' in [calibrate]; did you mean 'calibrate_by'?",
        ),
        ("[evaluate]\nworker = 2\n", ":6: unknown key 'worker' in [evaluate]; did you mean 'workers'?"),
        ("[evaluate]\nworkers = 0\n", ":6: [evaluate] workers must be a whole number >= 1, got 0; e.g. 4"),
        (
            "[calibrate]\nbootstrap = 'bcA'\n",
            ":6: [calibrate] bootstrap must be one of percentile, bca, got 'bcA'; e.g. percentile",
        ),
        (
            "[real]\npath = 'r.jsonl'\n[drift]\ntraffic = 't.txt'\npermutations = 99\n",
            ":9: unknown key 'permutations' in [drift]; did you mean 'n_permutations'?",
        ),
        (
            "[real]\npath = 'r.jsonl'\n[drift]\ntraffic = 't.txt'\nfolds = 1\n",
            ":9: [drift] folds must be a whole number >= 2, got 1; e.g. 5",
        ),
        (
            "[real]\npath = 'r.jsonl'\ndate = '2026-01-01'\n[calibrate]\nreal_date = '2026-02-01'\n",
            ":9: [calibrate] real_date is [real] date already",
        ),
    ],
)
def test_a_key_is_refused_naming_the_file_line_section_and_the_closest_name(tmp_path, text, message):
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + text)
    with pytest.raises(InputError) as caught:
        load_pipeline_config(path)
    assert str(caught.value).startswith(f"{path}{message}")


def test_a_stage_setting_breaks_one_rule_with_one_message_in_python_the_cli_and_the_config(tmp_path):
    from support import cli

    rule = "confidence must be between 0 and 1, got 1.5"
    with pytest.raises(InputError, match=rule):
        CalibrateSettings(confidence=1.5)
    done = cli.run("calibrate", "results.json", "--confidence", "1.5", cwd=tmp_path)
    assert done.err_lines == [f"error: --{rule}; e.g. 0.95"]
    path = tmp_path / "pipeline.toml"
    path.write_text(BASE + "[calibrate]\nconfidence = 1.5\n")
    with pytest.raises(InputError) as caught:
        load_pipeline_config(path)
    assert str(caught.value) == f"{path}:6: [calibrate] {rule}; e.g. 0.95"


def test_relative_paths_of_settings_are_read_from_the_configs_folder(tmp_path):
    folder = tmp_path / "jobs"
    folder.mkdir()
    path = folder / "pipeline.toml"
    path.write_text(BASE + "[evaluate]\ncache_dir = 'cache'\n[calibrate]\nanswers = 'labels/answers.csv'\n")
    config = load_pipeline_config(path)
    assert config.evaluate.run_settings.cache_dir == folder / "cache"
    assert config.calibrate.answers == folder / "labels" / "answers.csv"
    assert Path(config.calibrate.answers).is_absolute()


def test_the_run_scores_and_calibrates_with_the_sections_settings(tmp_path):
    from pipeline.test_pipeline import write_job
    from realrecall.pipeline import run_pipeline

    path = write_job(tmp_path, backend="extractive", extra="n_resamples = 500\ncalibrate_by = 'form'\n")
    text = path.read_text().replace('by = ["type"]', 'by = ["type"]\nrelevance_threshold = 2\ndepth = 1')
    path.write_text(text)

    result = run_pipeline(load_pipeline_config(path))

    assert result.report.n_resamples == 500
    assert result.report.calibrated is not None
    # form, not the default type (language, which these real questions lack, would be one stratum)
    assert result.report.calibrated.by == "form"
    assert '"relevance_threshold": 2' in result.results_path.read_text()
    tops = [json.loads(line)["top"] for line in result.per_query_path.read_text().splitlines()]
    assert max(map(len, tops)) == 1  # without the depth, a query gets up to 3 ids (k = [1, 3])

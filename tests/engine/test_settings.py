"""The engine's settings and the errors that need no cluster: Ray missing, an address nobody answers."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from realrecall.calibrate.one_call import evaluate_and_calibrate
from realrecall.engine import EngineSettings, open_cluster
from realrecall.engine.cluster import MISSING_EXTRA
from realrecall.errors import EngineError, InputError, SettingError
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.pipeline.config import PipelineConfig, load_pipeline_config
from realrecall.pipeline.demo import sample_data_dir
from realrecall.pipeline.extras import pipeline_extras
from realrecall.settings import settings_from
from support import cli

SAMPLE = sample_data_dir()


def test_the_local_engine_is_the_default_of_every_stage():
    assert EngineSettings().engine == "local"
    assert EvaluateSettings().engine_settings == EngineSettings()


@pytest.mark.parametrize(
    ("values", "setting"),
    [
        ({"engine": "spark"}, "engine"),
        ({"num_cpus": 0}, "num_cpus"),
        ({"retrieval_actors": 0}, "retrieval_actors"),
        ({"actor_retries": -1}, "actor_retries"),
        ({"address": " "}, "address"),
        ({"address": "10.0.0.5:6379", "num_cpus": 2}, "num_cpus"),
    ],
)
def test_a_bad_engine_setting_is_one_error_naming_it(values, setting):
    with pytest.raises(SettingError) as error:
        settings_from(EngineSettings, values)
    assert error.value.setting == setting


def test_evaluate_takes_the_engine_settings_by_their_own_names():
    settings = settings_from(EvaluateSettings, {"engine": "ray", "num_cpus": "2"}, text=True)
    assert settings.engine_settings == EngineSettings(engine="ray", num_cpus=2)


def test_the_local_engine_opens_no_cluster_and_imports_no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # any import of ray fails
    with open_cluster(EngineSettings()) as cluster:
        assert cluster is None


def test_without_ray_installed_the_ray_engine_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with (
        pytest.raises(InputError, match=r"pip install 'realrecall\[ray\]'"),
        open_cluster(EngineSettings(engine="ray")),
    ):
        pass


def test_the_cli_says_in_one_line_which_extra_the_ray_engine_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = cli.run(
        "evaluate", "--gold", str(SAMPLE / "real_questions.jsonl"), "--corpus",
        str(SAMPLE / "docs_corpus.jsonl"), "--engine", "ray",
    )  # fmt: skip
    assert result.returncode == 2
    assert result.err_lines == [f"error: {MISSING_EXTRA}"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the block ends: nothing listens there


def test_a_cluster_address_nobody_answers_is_one_line_not_rays_minutes_of_waiting():
    pytest.importorskip("ray", reason="the address is checked once Ray is imported (realrecall[ray])")
    address = f"127.0.0.1:{_closed_port()}"
    with pytest.raises(EngineError) as error, open_cluster(EngineSettings(engine="ray", address=address)):
        pass
    assert f"cannot reach the Ray cluster at {address}" in str(error.value)
    assert "\n" not in str(error.value)


def test_calibrates_one_call_mode_sends_evaluate_to_the_engine_it_names(monkeypatch, tmp_path):
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text((SAMPLE / "real_questions.jsonl").read_text("utf-8"), "utf-8")
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"pip install 'realrecall\[ray\]'"):
        evaluate_and_calibrate(
            synthetic,
            SAMPLE / "real_questions.jsonl",
            corpus=SAMPLE / "docs_corpus.jsonl",
            engine="ray",
        )


def test_generate_on_the_command_line_takes_the_engine(monkeypatch, fake_openai, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = cli.run(
        "generate", "--corpus", str(SAMPLE / "docs_corpus.jsonl"), "--output", str(tmp_path / "s.jsonl"),
        "--engine", "ray",
    )  # fmt: skip
    assert result.returncode == 2
    assert result.err_lines == [f"error: {MISSING_EXTRA}"]
    assert fake_openai.count("chat") == 0


PIPELINE = """
[corpus]
path = "corpus.jsonl"
[generate]
output = "synthetic.jsonl"
backend = "extractive"
[engine]
engine = "local"
retrieval_actors = 2
generation_actors = 3
actor_retries = 1
"""


@pytest.fixture
def pipeline(tmp_path):
    (tmp_path / "corpus.jsonl").write_text((SAMPLE / "docs_corpus.jsonl").read_text("utf-8"), "utf-8")
    config = tmp_path / "pipeline.toml"
    config.write_text(PIPELINE, "utf-8")
    return config


def test_the_engine_section_sets_the_engine_of_every_stage_of_the_run(pipeline):
    loaded = load_pipeline_config(pipeline)
    engine = EngineSettings(engine="local", retrieval_actors=2, generation_actors=3, actor_retries=1)
    assert loaded.engine == engine
    assert loaded.stage_generate().engine_settings == engine
    assert loaded.stage_evaluate().engine_settings == engine


def test_a_pipeline_whose_stage_names_an_engine_of_its_own_is_refused_in_one_line(pipeline):
    loaded = load_pipeline_config(pipeline)
    with pytest.raises(SettingError) as error:
        PipelineConfig(
            path=loaded.path,
            corpus=loaded.corpus,
            synthetic=loaded.synthetic,
            evaluate=EvaluateSettings(engine_settings=EngineSettings(engine="ray")),
        )
    assert str(error.value).startswith("PipelineConfig.evaluate.engine_settings of a pipeline's evaluate")
    assert "\n" not in str(error.value)


def test_run_names_the_ray_extra_of_a_pipeline_on_the_ray_engine(pipeline):
    assert "ray" not in pipeline_extras(pipeline)
    pipeline.write_text(PIPELINE.replace('engine = "local"', 'engine = "ray"'), "utf-8")
    assert "ray" in pipeline_extras(pipeline)


def test_run_takes_the_engine_from_the_command_line_over_the_engine_section(monkeypatch, pipeline):
    monkeypatch.setitem(sys.modules, "ray", None)
    folder = pipeline.parent
    result = cli.run("run", str(pipeline), "--engine", "ray", cwd=folder)
    assert result.returncode == 2
    assert result.err_lines == [f"error: {MISSING_EXTRA}"]
    assert not (folder / "synthetic.jsonl").exists()  # refused before any work
    assert not (folder / "realrecall-runs").exists()

    wrong = cli.run("run", str(pipeline), "--engine", "spark", cwd=folder)
    assert wrong.returncode == 2
    assert wrong.err_lines[0].startswith("error: --engine must be one of local, ray, got 'spark'")


def test_a_run_option_that_breaks_a_rule_with_the_engine_section_names_the_option(pipeline):
    pipeline.write_text(PIPELINE.replace('engine = "local"', 'engine = "local"\naddress = "auto"'), "utf-8")
    result = cli.run("run", str(pipeline), "--ray-cpus", "2", cwd=pipeline.parent)
    assert result.returncode == 2
    assert result.err_lines[0].startswith("error: --ray-cpus is for a cluster started here")
    assert not (pipeline.parent / "synthetic.jsonl").exists()


def test_run_engine_local_over_an_engine_section_naming_ray_runs_here_without_ray(monkeypatch, pipeline):
    monkeypatch.setitem(sys.modules, "ray", None)
    pipeline.write_text(PIPELINE.replace('engine = "local"', 'engine = "ray"'), "utf-8")
    result = cli.run("run", str(pipeline), "--engine", "local", cwd=pipeline.parent)
    assert result.returncode == 0, result.stderr
    written = json.loads((pipeline.parent / "realrecall-runs" / "results.json").read_text("utf-8"))
    assert "engine" not in written  # the local engine's results


BATCH = '[generate]\noutput = "synthetic.jsonl"\nbackend = "llm"\nmodel = "gpt-4o-mini"\nbatch = true\n'


def test_the_batch_api_on_the_ray_engine_is_refused_as_pipeline_toml_is_read(pipeline):
    text = PIPELINE.replace('[generate]\noutput = "synthetic.jsonl"\nbackend = "extractive"\n', BATCH)
    pipeline.write_text(text.replace('engine = "local"', 'engine = "ray"'), "utf-8")
    line = text.splitlines().index("batch = true") + 1
    with pytest.raises(InputError) as error:
        load_pipeline_config(pipeline)
    assert str(error.value) == (
        f'{pipeline}:{line}: [generate] batch = true and [engine] engine = "ray" are two ways to send '
        'the requests; drop batch = true from [generate], or set engine = "local" in [engine]'
    )
    result = cli.run("run", str(pipeline), cwd=pipeline.parent)
    assert result.returncode == 2
    assert result.err_lines == [f"error: {error.value}"]
    assert not (pipeline.parent / "realrecall-runs").exists()


def test_the_batch_api_with_run_engine_ray_is_refused_before_any_work(pipeline):
    pipeline.write_text(
        PIPELINE.replace('[generate]\noutput = "synthetic.jsonl"\nbackend = "extractive"\n', BATCH)
    )
    assert load_pipeline_config(pipeline).generate.batch_settings.batch  # on the local engine: kept
    result = cli.run("run", str(pipeline), "--engine", "ray", cwd=pipeline.parent)
    assert result.returncode == 2
    assert result.err_lines == [
        f"error: {pipeline}: [generate] batch = true and the Ray engine are two ways to send the requests; "
        "drop batch = true from [generate], or run on the local engine"
    ]
    assert not (pipeline.parent / "realrecall-runs").exists()

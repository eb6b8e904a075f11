"""``realrecall run`` over several pipelines: one job, each pipeline's files its own, checked together
first (the Ray engine's one task a pipeline: tests/engine/test_ray.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.test_pipeline import FAILING_GATE, write_job
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.run import run_pipeline
from support import cli


def job(folder: Path, *, extra: str = "") -> Path:
    folder.mkdir()
    return write_job(folder, backend="extractive", extra=extra)


def figures(path: Path) -> dict[str, Any]:
    results = json.loads(path.read_text("utf-8"))
    return {key: value for key, value in results.items() if key != "created"}


def test_several_pipelines_in_one_run_write_what_each_run_alone_writes(tmp_path):
    first, second = job(tmp_path / "a"), job(tmp_path / "b", extra="[output]\ndir = 'out'\n")
    done = cli.run("run", str(first), str(second), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    together = {
        "a": figures(tmp_path / "a" / "realrecall-runs" / "results.json"),
        "b": figures(tmp_path / "b" / "out" / "results.json"),
    }
    assert f"pipeline {first}:" in done.stderr
    assert f"pipeline {second}:" in done.stderr
    assert len((tmp_path / "a" / "history.jsonl").read_text("utf-8").splitlines()) == 1
    assert len((tmp_path / "b" / "history.jsonl").read_text("utf-8").splitlines()) == 1

    for name, config in (("a", first), ("b", second)):
        alone = run_pipeline(load_pipeline_config(config))
        assert figures(alone.results_path) == together[name]


def test_pipelines_that_would_write_the_same_file_are_refused_before_any_work(tmp_path):
    first = job(tmp_path / "a")
    shared = tmp_path / "a" / "realrecall-runs"
    second = job(tmp_path / "b", extra=f"[output]\ndir = '{shared}'\n")
    done = cli.run("run", str(first), str(second), cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.err_lines) == 1
    assert f"{second}: [output] dir's results.json" in done.err_lines[0]
    assert f"is the same file as {first}: [output] dir's results.json" in done.err_lines[0]
    assert not (tmp_path / "a" / "synthetic.jsonl").exists()
    assert not shared.exists()


def test_pipelines_naming_different_engines_are_refused_in_one_line(tmp_path):
    first = job(tmp_path / "a")
    second = job(tmp_path / "b", extra="[engine]\nretrieval_actors = 2\n")
    done = cli.run("run", str(first), str(second), cwd=tmp_path)
    assert done.returncode == 2
    assert done.err_lines == [
        f"error: pipelines run together share one engine, but {first} and {second} name different ones "
        "([engine]); give them the same [engine], or run them apart"
    ]
    assert not (tmp_path / "a" / "synthetic.jsonl").exists()


def test_a_pipeline_failing_its_gate_fails_the_run_after_every_pipeline_has_written(tmp_path):
    first = job(tmp_path / "a", extra=FAILING_GATE)
    second = job(tmp_path / "b")
    done = cli.run("run", str(first), str(second), cwd=tmp_path)
    assert done.returncode == 1
    assert done.err_lines[-1].startswith(f"error: gate failed: {first}: ")
    assert str(second) not in done.err_lines[-1]
    for folder in ("a", "b"):
        assert len((tmp_path / folder / "history.jsonl").read_text("utf-8").splitlines()) == 1

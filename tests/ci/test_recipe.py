"""The CI recipe in docs/ci runs: every ``run:` step of both workflows, in order, in a temporary repository.

What only GitHub has is substituted, and nothing else (docs/ci/README.md lists the same):

- ``uses:`` steps (checkout, setup-python, upload-artifact) are not run: the workspace is a clone the
  test made, Python is this one, and artifacts stay where the steps wrote them;
- the install step runs as written, into a virtual environment of its own (its packages beside the
  test's, so that nothing is downloaded), with ``REALRECALL_SOURCE`` a ``file://`` URL to a copy of
  this checkout (as a user's repository may hold one) and ``RUNNER_TEMP`` a temporary folder;
- ``${{ secrets.OPENAI_API_KEY }}`` is a placeholder key, and the endpoint is the fake OpenAI server
  on 127.0.0.1 (``OPENAI_BASE_URL``), which writes a question for every chunk;
- ``GITHUB_STEP_SUMMARY`` is a file in the temporary folder, and ``git push`` goes to a bare
  repository beside the clone;
- each step runs as GitHub runs ``run:`` on Linux: ``bash --noprofile --norc -eo pipefail``, from the
  workspace, with the workflow's ``env``; a failing step skips the later steps unless they are
  ``if: always()``.

Any other ``${{ ... }}`` expression in a ``run:`` step fails the test: it would need GitHub to run.
The data is realrecall's bundled sample (corpus and real questions); the synthetic set is written by
the scheduled workflow, which the pull-request workflow then reads, as in a real repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from realrecall.pipeline.demo import sample_data_dir
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler

yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow files")

pytestmark = pytest.mark.slow  # two nightly runs of the sample pipeline, one PR run and one gate step

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "docs" / "ci"
SECRETS = {"OPENAI_API_KEY": "sk-test-placeholder-key"}
_EXPRESSION = re.compile(r"\$\{\{\s*secrets\.([A-Z_]+)\s*\}\}")


@dataclass(frozen=True)
class StepRun:
    name: str
    returncode: int | None  # None: skipped after an earlier failure
    output: str


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((RECIPE / name).read_text(encoding="utf-8"))
    return data


def _environment(workflow: dict[str, Any], job: dict[str, Any], extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in {**workflow.get("env", {}), **job.get("env", {})}.items():
        text = str(value)
        secret = _EXPRESSION.fullmatch(text.strip())
        env[key] = SECRETS[secret.group(1)] if secret else text
        assert "${{" not in env[key], f"{key}: only secrets are substituted, got {text}"
    env.update(extra)
    return env


def _script(text: str) -> str:
    assert "${{" not in text, f"a run: step needs GitHub to expand an expression: {text}"
    return text


@dataclass(frozen=True)
class Installation:
    """A virtual environment for the workflows' install steps, and the source they install from."""

    venv: Path
    source: Path

    def env(self, temp: Path) -> dict[str, str]:
        """What the steps see: the environment's commands first on PATH, the source, a runner temp."""
        temp.mkdir(parents=True, exist_ok=True)
        return {
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.venv),
            "REALRECALL_SOURCE": self.source.as_uri(),
            "RUNNER_TEMP": str(temp),
        }


def _installation(root: Path) -> Installation:
    """An empty environment that sees the test's packages (so the install resolves offline) and a copy
    of this checkout's project files to install realrecall from, as a user's repository may vendor it."""
    source = root / "realrecall-source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300
    )
    return Installation(venv, source)


def run_workflow(
    name: str, workspace: Path, extra_env: dict[str, str], *, starting_at: str | None = None
) -> list[StepRun]:
    """Every run: step of the workflow's one job, as GitHub would run them (see the module docstring);
    from the step named ``starting_at`` on, where the earlier ones already ran in ``workspace``."""
    workflow = _load(name)
    (job,) = workflow["jobs"].values()
    env = _environment(workflow, job, extra_env)
    done: list[StepRun] = []
    failed = False
    steps = job["steps"]
    if starting_at is not None:
        steps = steps[[step.get("name") for step in steps].index(starting_at) :]
    for step in steps:
        if "run" not in step:
            assert "uses" in step, step
            continue
        label = step.get("name", step["run"])
        if failed and "always()" not in str(step.get("if", "")):
            done.append(StepRun(label, None, ""))
            continue
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _script(step["run"])],
            cwd=workspace, env=env, capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        done.append(StepRun(label, result.returncode, result.stdout + result.stderr))
        failed = failed or result.returncode != 0
    return done


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _make_repository(root: Path) -> tuple[Path, Path]:
    """A clone (the workspace) of a bare repository holding the recipe's layout with the sample data."""
    remote, workspace = root / "remote.git", root / "workspace"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=root)
    _git("clone", "-q", str(remote), str(workspace), cwd=root)
    folder = workspace / "realrecall"
    folder.mkdir()
    shutil.copyfile(RECIPE / "pipeline.toml", folder / "pipeline.toml")
    shutil.copyfile(sample_data_dir() / "docs_corpus.jsonl", folder / "chunks.jsonl")
    shutil.copyfile(sample_data_dir() / "real_questions.jsonl", folder / "real.jsonl")
    _git("add", ".", cwd=workspace)
    _git("commit", "-q", "-m", "chunks, real questions and the pipeline", cwd=workspace)
    _git("push", "-q", "origin", "HEAD:main", cwd=workspace)
    return workspace, remote


@dataclass(frozen=True)
class Nights:
    """Two runs of the scheduled workflow in one repository: their steps and the endpoint's counts."""

    root: Path
    workspace: Path
    remote: Path
    first: list[StepRun]
    second: list[StepRun]
    asked_first: int
    asked_second: int
    summary: Path
    installation: Installation


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    """The scheduled workflow run twice against the fake endpoint (once for the module: it is the slow
    part); the pull-request tests start from copies of its workspace, which holds the synthetic set."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("recipe")
    workspace, remote = _make_repository(root)
    installation = _installation(root)
    summary = root / "summary.md"
    with FakeOpenAI() as server, pytest.MonkeyPatch.context() as patch:
        server.chat_handler = http_question_handler  # valid, distinct questions, as a model writes
        patch.setenv("OPENAI_BASE_URL", server.base_url)
        extra = {"GITHUB_STEP_SUMMARY": str(summary), **installation.env(root / "runner-1")}
        first = run_workflow("scheduled.yml", workspace, extra)
        asked_first = server.count("chat")
        extra = {**extra, **installation.env(root / "runner-2")}
        second = run_workflow("scheduled.yml", workspace, extra)
        asked_second = server.count("chat") - asked_first
    return Nights(root, workspace, remote, first, second, asked_first, asked_second, summary, installation)


@dataclass(frozen=True)
class PullRequest:
    """The pull-request workflow run once, on a copy of the workspace after the nightly runs."""

    workspace: Path
    summary: Path
    steps: list[StepRun]
    installation: Installation


@pytest.fixture(scope="module")
def pull_request(nights: Nights, tmp_path_factory: pytest.TempPathFactory) -> PullRequest:
    """The pull request's checkout (a copy of the workspace after the nightly runs, which holds the
    synthetic set) and its workflow's steps, run once for the module like the nights."""
    _assert_ran(nights.first)
    folder = tmp_path_factory.mktemp("pull_request")
    workspace, summary = folder / "workspace", folder / "summary.md"
    shutil.copytree(nights.workspace, workspace, symlinks=True)
    extra = {"GITHUB_STEP_SUMMARY": str(summary), **nights.installation.env(folder / "runner")}
    steps = run_workflow("pull-request.yml", workspace, extra)
    return PullRequest(workspace, summary, steps, nights.installation)


def _assert_ran(steps: list[StepRun]) -> None:
    for step in steps:
        assert step.returncode == 0, f"step {step.name!r} failed:\n{step.output}"


def test_the_scheduled_workflow_regenerates_evaluates_and_commits_its_history(nights: Nights) -> None:
    _assert_ran(nights.first)
    assert [s.name for s in nights.first] == [
        "Install realrecall with the extras the pipeline needs",
        "Regenerate, evaluate, calibrate, record the history", "Commit the synthetic set and the history",
    ]  # fmt: skip
    # The install step ran for real: realrecall, built from the source it names, in its environment,
    # with the extras `realrecall extras` gives for the pipeline: none for BM25 without the realism
    # score, and pip was not handed an empty "[]" (which it refuses).
    venv = nights.installation.venv
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import realrecall; print(realrecall.__file__)"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert Path(where.strip()).is_relative_to(venv)
    folder = nights.workspace / "realrecall"
    extras = subprocess.run(
        [str(venv / "bin" / "realrecall"), "extras", str(folder / "pipeline.toml")],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert extras == ""
    assert ".whl[]" not in nights.first[0].output
    chunks = len((folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines())
    assert nights.asked_first >= chunks  # a question asked of the endpoint for every chunk
    assert (folder / "report" / "report.html").is_file()
    # The next night: nothing changed in the corpus, so no question is asked again; one more row.
    _assert_ran(nights.second)
    assert nights.asked_second == 0
    # Both pushes reached the remote: its main holds the synthetic set and two history rows.
    assert len(_git("show", "main:realrecall/history.jsonl", cwd=nights.remote).splitlines()) == 2
    assert _git("show", "main:realrecall/synthetic.jsonl", cwd=nights.remote).strip()


def test_the_pull_request_workflow_evaluates_reports_and_gates_on_the_lower_bound(
    pull_request: PullRequest,
) -> None:
    workspace, summary, steps = pull_request.workspace, pull_request.summary, pull_request.steps
    _assert_ran(steps)
    results = json.loads((workspace / "results.json").read_text(encoding="utf-8"))
    assert {g["name"] for g in results["gold_sets"]} == {"real", "synthetic"}
    assert (workspace / "report.html").is_file()
    assert "real recall@10" in summary.read_text(encoding="utf-8")
    gate = steps[-1]
    assert gate.name == "Gate on the real figure's lower bound"
    assert "Quote real recall@10 = 0.85 (95% CI 0.78-0.89, n=175)" in gate.output  # passed: exit 0


def test_the_gate_fails_the_check_on_the_bound_even_where_the_point_passes(
    pull_request: PullRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sample's real recall@10 is 0.846 with a 95% interval from 0.785: a gate at 0.8 holds for the
    # point and fails for the bound, which is what the recipe gates on.
    gate_step = _load("pull-request.yml")["jobs"]["evaluate"]["steps"][-2]
    assert "--fail-under recall@10=0.6 --gate-on bound" in gate_step["run"]
    text = (RECIPE / "pull-request.yml").read_text(encoding="utf-8").replace("recall@10=0.6", "recall@10=0.8")
    (tmp_path / "recipe").mkdir()
    (tmp_path / "recipe" / "pull-request.yml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "RECIPE", tmp_path / "recipe")
    # The steps before the gate are the same as in the passing run: they start from its workspace (its
    # results.json), without the report its passing gate wrote.
    workspace = tmp_path / "workspace"
    shutil.copytree(pull_request.workspace, workspace, symlinks=True)
    (workspace / "report.html").unlink()

    steps = run_workflow(
        "pull-request.yml",
        workspace,
        {
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            **pull_request.installation.env(tmp_path / "t"),
        },
        starting_at="Gate on the real figure's lower bound",
    )
    gate = next(s for s in steps if s.name == "Gate on the real figure's lower bound")
    assert gate.returncode == 1
    assert "its lower bound is under --fail-under 0.8" in gate.output
    assert (workspace / "report.html").is_file()  # the report is written before the gate fails


def test_the_first_pull_request_before_any_nightly_run_says_what_to_run_and_gates_on_the_real_set(
    pull_request: PullRequest, tmp_path: Path
) -> None:
    # A repository whose nightly workflow never ran: no synthetic set yet.
    workspace, _ = _make_repository(tmp_path)
    assert not (workspace / "realrecall" / "synthetic.jsonl").exists()
    extra = {
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **pull_request.installation.env(tmp_path / "t"),
    }
    steps = run_workflow(
        "pull-request.yml", workspace, extra, starting_at="Evaluate on the real and the synthetic set"
    )
    _assert_ran(steps)
    evaluate = steps[0]
    notices = [line for line in evaluate.output.splitlines() if line.startswith("::notice::")]
    assert len(notices) == 1
    assert "run the nightly workflow once" in notices[0]
    assert "file not found" not in evaluate.output
    assert "Quote real recall@10 = 0.85" in steps[-1].output


def test_the_workflows_run_on_the_events_the_recipe_names() -> None:
    # PyYAML reads the key `on` as True (YAML 1.1).
    assert set(_load("pull-request.yml")[True]) == {"pull_request"}
    scheduled = _load("scheduled.yml")
    assert set(scheduled[True]) == {"schedule", "workflow_dispatch"}
    assert scheduled["permissions"] == {"contents": "write"}

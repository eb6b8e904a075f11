"""One real process per command (``python -m realrecall``) on the catalogue's workspace: it starts, does
its job, writes what it should and exits 0.

Everything else about the commands (messages, exit codes, files) is tested in-process through
``support.cli.run``: the catalogue's bad inputs too, with one of them also run as a real process
(``test_catalogue.py::test_a_failing_command_as_a_real_process_behaves_the_same``). What only a fresh
interpreter shows is checked here for every command: no traceback and no Python warning on stderr (an
import-time warning would be a stray line before a failing command's one ``error:`` line). The
processes start all at once, each in its own copy of the workspace, so the interpreter start-ups overlap.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.catalogue_cases import ADD, CAL, CMP, DUPES, EVAL, EXPAND, GEN, HIST, IMPORT, REVIEW, RUN
from cli.harness import finish_process, start_process

pytestmark = pytest.mark.slow  # every test waits for the processes, which start together

# How the warnings module prints one: "path:line: SomethingWarning: message".
PYTHON_WARNING = re.compile(r":\d+: \w*Warning: ")

# command -> (arguments, text it shows on stdout or stderr, files it writes)
COMMANDS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "--help": (("--help",), "Usage: realrecall", ()),
    "--version": (("--version",), "realrecall 0.", ()),
    "evaluate": ((*EVAL, "-o", "smoke.json"), "recall@1", ("smoke.json",)),
    "calibrate": (CAL, "Quote real recall@10 = ", ()),
    "compare": (CMP, "randomization test", ()),
    "generate": (GEN, "gen.jsonl: 24 questions for 24 chunks", ("gen.jsonl",)),
    "run": (RUN, "Quote real recall@10 = ", ("runs/report.html",)),
    "history": (HIST, "recall@10", ()),
    "extras": (("extras", "pipeline.toml", "--retriever", "local-dense"), "local", ()),
    "demo": (("demo", "--dir", "demo"), "Quote real recall@10 = ", ("demo/pipeline.toml",)),
    "gold import": (IMPORT, "imported 6 queries", ("imported.jsonl",)),
    "gold review": (REVIEW, "queries miss at k=10", ()),
    "gold add": (ADD, "added 1 gold id(s)", ("added.jsonl",)),
    "gold dupes": (DUPES, "cluster(s)", ()),
    "gold expand": (EXPAND, "near-duplicate gold id(s)", ("expanded.jsonl",)),
    "gold migrate": (
        ("gold", "migrate", "gold.jsonl", "--corpus", "corpus.jsonl", "--output", "migrated.jsonl"),
        "migrated 8 queries into migrated.jsonl",
        ("migrated.jsonl",),
    ),
    "judge agreement": (("judge", "agreement", "qrels.txt", "gold.jsonl"), "exact 1.000", ()),
    "judge ppi": (
        ("judge", "ppi", "scores.tsv", "scores_human.tsv", "--measure", "ndcg@10", "--human-queries", "1-6"),
        "Prediction-powered ndcg@10",
        (),
    ),
    "drift": (
        (
            "drift",
            str(importlib.resources.files("realrecall") / "data" / "real_questions.jsonl"),
            "pipeline_synth.jsonl",
            "--permutations",
            "50",
        ),
        "drift",
        (),
    ),
    "plan": (("plan", "results.json", "--target-width", "0.1"), "real questions", ()),
    "agreement": (
        (
            "agreement",
            "scores.tsv",
            "scores.tsv",
            "--measure",
            "ndcg@10",
            "--a-queries",
            "1-6",
            "--b-queries",
            "7-12",
            "--n-resamples",
            "200",
            "--splits",
            "50",
        ),
        "Kendall tau ",
        (),
    ),
    # The bundled real questions against the pipeline's synthetic set: 20 or more on each side.
    "realism": (
        (
            "realism",
            str(importlib.resources.files("realrecall") / "data" / "real_questions.jsonl"),
            "pipeline_synth.jsonl",
        ),
        "realism AUC ",
        (),
    ),
}


def _lancedb_table(folder: Path) -> None:
    """The workspace's corpus as a LanceDB table: ids, texts and a constant vector (export reads none)."""
    import lancedb

    chunks = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    rows = [{"id": c["id"], "text": c["text"], "vector": [1.0, 0.0]} for c in chunks]
    lancedb.connect(str(folder / "store")).create_table("docs", data=rows)


# Commands of optional extras, smoke-tested when the extra is installed (.ci/run installs them all):
# command -> (module, environment, preparation of the workspace).
OPTIONAL: dict[str, tuple[str, dict[str, str], Callable[[Path], None] | None]] = {
    "corpus export": ("lancedb", {}, _lancedb_table),
    "log mlflow": ("mlflow", {"MLFLOW_ALLOW_FILE_STORE": "true"}, None),  # mlflow 3 gates file stores
}
COMMANDS["corpus export"] = (
    ("corpus", "export", "--from", "lancedb", "--option", "uri=store", "--option", "table=docs",
     "-o", "exported.jsonl"),
    "24 chunks written to exported.jsonl",
    ("exported.jsonl",),
)  # fmt: skip
COMMANDS["log mlflow"] = (
    ("log", "mlflow", "results.json", "--mlflow-uri", "file:./mlruns"),
    "logged to MLflow: run ",
    ("mlruns",),
)


def _installed(command: str) -> bool:
    return command not in OPTIONAL or importlib.util.find_spec(OPTIONAL[command][0]) is not None


@pytest.fixture(scope="module")
def processes(
    catalogue_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[subprocess.Popen[str], Path]]]:
    """Every command started as a real process, each in its own copy of the workspace."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")}
    env["COLUMNS"] = "200"
    started = {}
    for command, (args, _, _) in COMMANDS.items():
        if not _installed(command):
            continue
        folder = tmp_path_factory.mktemp("smoke_ok") / "w"
        shutil.copytree(catalogue_template, folder, symlinks=True)
        _, extra_env, prepare = OPTIONAL.get(command, ("", {}, None))
        if prepare is not None:
            prepare(folder)
        started[command] = (start_process(args, folder, {**env, **extra_env}), folder)
    yield started
    for process, _ in started.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("command", list(COMMANDS), ids=lambda command: command.replace(" ", "-"))
def test_each_command_runs_as_a_real_process(
    command: str, processes: dict[str, tuple[subprocess.Popen[str], Path]]
) -> None:
    if not _installed(command):
        pytest.skip(f"{OPTIONAL[command][0]} is not installed (an optional extra; .ci/run installs it)")
    _, shows, writes = COMMANDS[command]
    process, folder = processes[command]

    outcome = finish_process(process)

    shown = f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-2000:]}"
    assert outcome.code == 0, shown
    assert "Traceback" not in outcome.err + outcome.out, shown
    assert not any(line.startswith("error:") for line in outcome.err_lines), shown
    assert not PYTHON_WARNING.search(outcome.err), f"a Python warning on stderr\n{shown}"
    assert shows in outcome.out + outcome.err, shown  # a command writing a file says so on stderr
    for name in writes:
        assert (folder / name).exists(), f"{name} not written\n{shown}"


def test_every_command_has_its_real_process_here() -> None:
    import typer.main

    from realrecall.cli import app

    def names(group: Any, prefix: str = "") -> Iterator[str]:
        for name, command in group.commands.items():  # typer's groups (its click may be vendored)
            if hasattr(command, "commands"):
                yield from names(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}"

    assert sorted(names(typer.main.get_command(app))) == sorted(
        name for name in COMMANDS if not name.startswith("--")
    )


def test_the_process_imports_only_its_commands_module(tmp_path: Path) -> None:
    import typer.main

    from realrecall.cli import COMMAND_MODULES, app

    # Every top-level command has its module, so the process never lacks the command it runs.
    assert sorted(typer.main.get_command(app).commands) == sorted(COMMAND_MODULES)  # type: ignore[attr-defined]
    probe = (
        "import sys; sys.argv = ['realrecall', *sys.argv[1:]]\n"
        "from realrecall.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "shared = {'realrecall.cli.application', 'realrecall.cli.console', 'realrecall.cli.retriever_help',"
        " 'realrecall.cli.settings_options'}\n"
        "print(sorted(m for m in sys.modules if m.startswith('realrecall.cli.') and m not in shared))"
    )
    for args, modules in [
        (["evaluate", "--help"], ["realrecall.cli.evaluate"]),
        (["gold", "migrate", "--help"], ["realrecall.cli.gold"]),
        (["--help"], []),
        (["--version"], []),
        (["--help", "evaluate"], []),
        (["evalute"], sorted(f"realrecall.cli.{m}" for m in set(COMMAND_MODULES.values()))),
    ]:
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=tmp_path
        )
        assert done.stdout.splitlines()[-1] == repr(modules), (args, done.stderr[-2000:])


def test_evaluate_from_trec_files_imports_only_what_it_runs(tmp_path: Path) -> None:
    """Scoring TREC files needs numpy, rich for the table and typer for the options; nothing else.

    pydantic is the one typer 0.29 would add (it converts every option through a TypeAdapter: about
    0.09 s of a 500-query run's 0.3 s), hence pyproject's ``typer<0.29``. pandas and pyarrow read big
    run files only, and a model client has no place in scoring.
    """
    (tmp_path / "qrels.txt").write_text("q1 0 p1 1\nq2 0 p2 2\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("q1 Q0 p1 1 0.9 r\nq2 Q0 p3 1 0.8 r\n", encoding="utf-8")
    probe = (
        "import json, sys\n"
        "sys.argv = ['realrecall', 'evaluate', '--gold', 'qrels.txt', '--run', 'run.txt']\n"
        "from realrecall.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = json.loads(done.stdout.splitlines()[-1])
    loaded = {name.partition(".")[0] for name in modules}
    assert "numpy" in loaded  # the probe saw the scoring run
    unneeded = loaded & {"pydantic", "pydantic_core", "pandas", "pyarrow", "scipy", "openai", "httpx"}
    assert not unneeded, f"evaluate's process imported {sorted(unneeded)}"
    # A run needs no retriever: the registry and the retriever modules are read for --help alone.
    retrievers = {name for name in modules if name.startswith("realrecall.evaluate.retrievers.")}
    assert retrievers <= {"realrecall.evaluate.retrievers.base", "realrecall.evaluate.retrievers.options"}


@pytest.mark.parametrize("columns", ["80", "200"])
@pytest.mark.parametrize("root", [["--help"], [], ["--help", "evaluate"]])
def test_the_root_listing_from_the_table_is_the_commands_own(columns: str, root: list[str]) -> None:
    """The process lists the commands from COMMANDS without importing them: the same text, to the
    byte, as the help of the app with every command registered (a changed docstring fails here)."""
    env = {**os.environ, "COLUMNS": columns}
    listed = subprocess.run(
        [sys.executable, "-m", "realrecall", *root], capture_output=True, text=True, env=env
    )
    registered = subprocess.run(
        [sys.executable, "-c", "from realrecall.cli import main; main(['--help'])"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert registered.returncode == 0, registered.stderr
    # No arguments at all prints the help on stderr and exits 2 (click's no_args_is_help).
    assert (listed.stdout or listed.stderr) == registered.stdout
    assert "Commands:" in registered.stdout
    assert "  gold " in registered.stdout


def test_every_option_and_argument_of_every_command_has_help() -> None:
    """``--help`` explains each option: an option without help shows only its name and type."""
    import typer.main

    from realrecall.cli import app

    def commands(group: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
        yield prefix.strip() or "realrecall", group
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from commands(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}", command

    missing = [
        f"{name} {param.opts[0] if param.opts else param.name}"
        for name, command in commands(typer.main.get_command(app))
        for param in command.params
        if not (getattr(param, "help", None) or "").strip()
    ]
    assert missing == []

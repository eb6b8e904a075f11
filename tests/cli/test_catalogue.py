"""The bad-input catalogue (issue 8): every command, fed what new users get wrong, ends in one line.

Each case of ``catalogue_cases.CASES`` must exit 2 with exactly one ``error:`` line on stderr that
names the file (and line) or the option, with no traceback, and leave the workspace byte for byte as
it was: inputs unchanged, no output, no temp file. Cases that fail today are marked xfail (strict),
so a fix shows up as an XPASS whose mark is then removed from ``KNOWN_FAILURES``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from cli.catalogue_cases import (
    ACCEPTED,
    BASELINES,
    CASES,
    COPY_OF,
    FOLDER,
    GEN_LLM,
    HARDLINK_TO,
    KNOWN_FAILURES,
    NULL_DEVICE,
    REAL_PROCESS,
    SYMLINK_TO,
    WARNED,
    Accepted,
    Case,
    Edit,
    Warned,
)
from cli.harness import (
    Outcome,
    check_one_line_error,
    describe_changes,
    finish_process,
    run_in_process,
    snapshot,
    start_process,
)
from support.devices import null_device

CASE_BY_NAME = {case.name: case for case in CASES}


def run(args: tuple[str, ...]) -> Outcome:
    return run_in_process(args, io.StringIO(), io.StringIO())


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def apply(folder: Path, files: Mapping[str, Edit]) -> None:
    """Break the workspace as a case says (see the catalogue_cases docstring)."""
    for name, edit in files.items():
        path = folder / name
        if isinstance(edit, COPY_OF):
            content = (folder / edit.source).read_bytes()
            _remove(path)
            path.write_bytes(content)
        elif edit is None:
            _remove(path)
        elif edit is FOLDER:
            _remove(path)
            path.mkdir()
        elif edit is NULL_DEVICE:
            _remove(path)
            null_device(path)
        elif isinstance(edit, SYMLINK_TO):
            _remove(path)
            path.symlink_to(edit.target)
        elif isinstance(edit, HARDLINK_TO):
            _remove(path)
            os.link(folder / edit.target, path)
        elif isinstance(edit, str):
            path.write_text(edit, encoding="utf-8")
        elif isinstance(edit, bytes):
            path.write_bytes(edit)
        else:
            assert callable(edit), edit
            path.write_bytes(edit(path.read_bytes() if path.is_file() else b""))


def params(cases: Sequence[Case | Accepted | Warned]) -> list[object]:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case.name])]
            if case.name in KNOWN_FAILURES
            else [],
        )
        for case in cases
    ]


@pytest.fixture
def umask_022() -> Iterator[None]:
    """A known umask, so "new files follow the umask" has one expected mode (0644)."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _prepare(case: Case, workspace: Path, request: pytest.FixtureRequest) -> None:
    if case.unreadable and os.geteuid() == 0:
        pytest.skip("running as root, who reads any file: chmod 000 cannot make one unreadable")
    for module in case.needs:  # the README's test command installs no extra; .ci/run installs them all
        pytest.importorskip(module, reason=f"needs {module}, an extra the README test command lacks")
    monkeypatch = request.getfixturevalue("monkeypatch")
    for module in case.hide_modules:  # `import module` now raises ImportError, as when not installed
        monkeypatch.setitem(sys.modules, module, None)
    apply(workspace, case.files)
    for name in case.unreadable:
        (workspace / name).chmod(0)
    if case.server:
        request.getfixturevalue("llm_server")


@pytest.mark.parametrize("case", params(CASES))
def test_bad_input_gives_one_line_and_changes_nothing(
    case: Case, workspace: Path, request: pytest.FixtureRequest
) -> None:
    _prepare(case, workspace, request)
    before = snapshot(workspace)

    outcome = run(case.args)

    changes = describe_changes(before, snapshot(workspace))
    check_one_line_error(outcome, case.expect, allowed_before=case.allowed_before)
    assert changes == [], f"the failed command changed the workspace: {changes}"


def test_a_failing_command_as_a_real_process_behaves_the_same(
    catalogue_template: Path, tmp_path: Path
) -> None:
    """One bad input as a real process (``python -m realrecall``): the in-process harness hides nothing
    (exit code, stderr, files). One case is enough for the path from the entry point to the one line;
    each command's own real process is test_smoke.py's (a success), its bad inputs run in-process."""
    case = CASE_BY_NAME[REAL_PROCESS]
    env = {name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")}
    env["COLUMNS"] = "200"
    folder = tmp_path / "w"
    shutil.copytree(catalogue_template, folder, symlinks=True)
    apply(folder, case.files)
    before = snapshot(folder)

    outcome = finish_process(start_process(case.args, folder, env))

    changes = describe_changes(before, snapshot(folder))
    check_one_line_error(outcome, case.expect, allowed_before=case.allowed_before)
    assert changes == [], f"the failed command changed the workspace: {changes}"


@pytest.mark.parametrize("case", params(ACCEPTED))
def test_odd_but_valid_input_is_accepted_and_shown_as_written(
    case: Accepted, workspace: Path, umask_022: None
) -> None:
    apply(workspace, case.files)
    for args in case.before:
        first = run(args)
        assert first.code == 0, f"{args}: exit {first.code}\n{first.err}"
    before = snapshot(workspace)

    outcome = run(case.args)

    shown = f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-3000:]}"
    assert outcome.code == 0, shown
    assert "Traceback" not in outcome.err + outcome.out, shown
    for text in case.shows:
        assert text in outcome.out + outcome.err, f"{text!r} not shown as written\n{shown}"
    if case.json_stdout:
        json.loads(outcome.out)
    after = snapshot(workspace)
    for name in case.writes:
        assert (workspace / name).is_file(), f"{name} not written\n{shown}"
        assert stat.S_IMODE((workspace / name).stat().st_mode) == 0o644, f"{name} ignores the umask"
    rewritten = [name for name in before if name in after and before[name] != after[name]]
    assert set(rewritten) <= set(case.rewrites), f"inputs changed: {rewritten}"
    for name in rewritten:  # an in-place rewrite keeps the file's mode
        assert after[name][2] == before[name][2], f"{name}: mode {before[name][2]:o} -> {after[name][2]:o}"


@pytest.mark.parametrize("case", params(WARNED))
def test_doubtful_input_is_refused_or_warned_never_silent(case: Warned, workspace: Path) -> None:
    apply(workspace, case.files)
    before = snapshot(workspace)

    outcome = run(case.args)

    shown = f"exit {outcome.code}\n--- stderr\n{outcome.err}\n--- stdout\n{outcome.out[-2000:]}"
    assert "Traceback" not in outcome.err + outcome.out, shown
    if outcome.code == 2:
        check_one_line_error(outcome, (case.names,))
        assert describe_changes(before, snapshot(workspace)) == []
    else:
        assert outcome.code == 0, shown
        lines = [line.strip() for line in (outcome.err + outcome.out).splitlines()]
        warnings = [line for line in lines if line.startswith("warning:")]
        assert any(case.names in line for line in warnings), f"no warning naming {case.names!r}\n{shown}"


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_baseline_command_succeeds(name: str, workspace: Path) -> None:
    """Each bad case breaks one thing of a command line that works on the untouched workspace."""
    outcome = run(BASELINES[name])
    assert outcome.code == 0, f"exit {outcome.code}\n{outcome.err}"
    assert "Traceback" not in outcome.err + outcome.out


def test_baseline_llm_generate_succeeds(workspace: Path, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue("llm_server")
    outcome = run(GEN_LLM)
    assert outcome.code == 0, f"exit {outcome.code}\n{outcome.err}"
    assert (workspace / "gen.jsonl").is_file()


def test_the_catalogue_is_consistent() -> None:
    names = [case.name for case in CASES] + [c.name for c in ACCEPTED] + [c.name for c in WARNED]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(CASES) >= 120
    assert set(KNOWN_FAILURES) <= set(names), set(KNOWN_FAILURES) - set(names)
    case = CASE_BY_NAME[REAL_PROCESS]  # a real process gets no fake server, hidden module or chmod
    assert not case.server
    assert not case.hide_modules
    assert not case.unreadable

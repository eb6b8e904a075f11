"""README is the front door: short, its first lines the two commands CI runs, its links alive."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_stays_under_8000_characters():
    # What it is, install, the commands, the Python API and links; speed figures live in docs/speed.md.
    assert len(README) < 8000


def test_the_readme_opens_with_the_demo_line_and_the_test_line_ci_runs():
    lines = README.splitlines()
    assert lines[0] == "```bash"
    assert lines[1] == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/realrecall demo"
    assert lines[2] == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q"
    )
    assert lines[3] == "```"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert lines[2] in ci


def test_every_relative_link_of_the_readme_and_the_docs_names_a_file_that_exists():
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            path = target.partition("#")[0]
            if path and "://" not in path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def _resolves(dotted: str) -> bool:
    """Whether ``realrecall.a.b`` is a module, or an attribute of the deepest module it names."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_file_and_python_name_the_readme_and_the_docs_name_exists():
    # docs/extending.md once sent readers to names that had moved; a moved name must move its docs too.
    missing = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        paths = re.findall(r"`((?:src|tests|benchmarks)/[\w/.-]+\.(?:py|md|toml))`", text)
        missing += [f"{page.relative_to(ROOT)}: {path}" for path in paths if not (ROOT / path).exists()]
        names = re.findall(r"`(realrecall(?:\.\w+)+)", text)
        missing += [f"{page.relative_to(ROOT)}: {name}" for name in names if not _resolves(name)]
    assert missing == []

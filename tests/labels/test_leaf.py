"""realrecall.labels is a leaf: generate, curate and evaluate use it, and it uses none of them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import realrecall.labels

ALLOWED = {"realrecall.errors", "realrecall.files"}


def _imported(tree: ast.AST) -> set[str]:
    """Every realrecall module a file names in an import, at its top or inside a function."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return {name for name in names if name == "realrecall" or name.startswith("realrecall.")}


def test_no_labels_module_imports_another_part_of_realrecall() -> None:
    package = Path(realrecall.labels.__file__).parent
    files = sorted(package.glob("*.py"))
    assert files
    outside = {
        (path.name, name)
        for path in files
        for name in _imported(ast.parse(path.read_text(encoding="utf-8")))
        if not name.startswith("realrecall.labels") and name not in ALLOWED
    }
    assert outside == set()


def test_labelling_a_question_loads_no_other_part_of_realrecall() -> None:
    code = (
        "import json, sys\n"
        "import realrecall\n"
        "root = set(sys.modules)\n"
        "from realrecall.labels import default_type_rules\n"
        "rules = default_type_rules()\n"
        "print(rules.classify('why does sync fail?'), rules.classify_form('sync fails'))\n"
        "print(json.dumps(sorted(m for m in set(sys.modules) - root if m.startswith('realrecall'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert {"realrecall.labels", "realrecall.labels.rules"} <= loaded
    assert {m for m in loaded if not m.startswith("realrecall.labels")} <= ALLOWED

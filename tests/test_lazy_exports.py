"""Each package's exports are declared once, as ``X as X`` imports under ``if TYPE_CHECKING:``.

``realrecall._lazy`` reads those lines at run time (with regular expressions, to keep ``ast`` out of
the start-up): it must read them exactly as Python's parser does, and every name must then resolve
to the object its module defines.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from realrecall._lazy import read_exports

SOURCE = Path(__file__).resolve().parents[1] / "src" / "realrecall"
PACKAGES = sorted(
    ".".join(path.parent.relative_to(SOURCE.parent).parts)
    for path in SOURCE.rglob("__init__.py")
    if "_lazy_exports(__name__" in path.read_text(encoding="utf-8")
)


def _declared(package: str) -> list[ast.ImportFrom]:
    """The ``from ... import`` statements under the package's ``if TYPE_CHECKING:``."""
    tree = ast.parse(_source(package))
    blocks = [n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
    return [node for block in blocks for node in block.body if isinstance(node, ast.ImportFrom)]


def _source(package: str) -> str:
    return (SOURCE.parent / package.replace(".", "/") / "__init__.py").read_text(encoding="utf-8")


def test_the_packages_that_export_lazily_are_found():
    assert {"realrecall", "realrecall.evaluate", "realrecall.evaluate.retrievers", "realrecall.llm"} <= set(
        PACKAGES
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_the_run_time_reader_reads_the_declarations_as_python_does(package: str):
    expected = {alias.asname or alias.name: n.module for n in _declared(package) for alias in n.names}
    assert read_exports(_source(package)) == expected


@pytest.mark.parametrize("package", PACKAGES)
def test_every_declaration_is_an_explicit_re_export_and_nothing_else(package: str):
    tree = ast.parse(_source(package))
    block = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
    assert all(isinstance(node, ast.ImportFrom) and not node.level for node in block.body)
    # ``X as X`` is what makes a type checker treat the name as exported (mypy --strict, pyright).
    assert [a.name for n in _declared(package) for a in n.names if a.asname != a.name] == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_resolves_to_what_its_module_defines_and_all_lists_the_public_ones(package: str):
    module = importlib.import_module(package)
    declared = {alias.name: node.module for node in _declared(package) for alias in node.names}
    subpackages = {name for name, home in declared.items() if home == package}
    assert sorted(module.__all__) == sorted(set(declared) - subpackages)
    for name, home in declared.items():
        expected = importlib.import_module(f"{home}.{name}" if name in subpackages else home)
        value = getattr(module, name)
        assert value is (expected if name in subpackages else getattr(expected, name)), name
    assert set(declared) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = module.no_such_name


def test_a_package_loads_its_exports_only_when_they_are_used():
    code = (
        "import sys, realrecall.evaluate as e\n"
        "before = 'realrecall.evaluate.evaluation' in sys.modules\n"
        "e.evaluate\n"
        "print(before, 'realrecall.evaluate.evaluation' in sys.modules, 'evaluate' in vars(e))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]

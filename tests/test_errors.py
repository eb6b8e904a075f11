"""Every exception realrecall defines lives in ``realrecall.errors``, drawn in its docstring (as httpx's
``_exceptions.py``), and the version is written in one place."""

from __future__ import annotations

import ast
import builtins
import importlib.metadata
import inspect
import tomllib
from pathlib import Path

import realrecall
from realrecall import _version, errors

SOURCE = Path(realrecall.__file__).parent
PYPROJECT = SOURCE.parent.parent / "pyproject.toml"


def _is_exception_base(base: ast.expr, error_names: set[str]) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    return name in error_names or name.endswith(("Error", "Exception"))


def test_no_module_but_errors_defines_an_exception_class():
    error_names = {name for name, value in vars(errors).items() if isinstance(value, type)}
    elsewhere = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path == SOURCE / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(_is_exception_base(b, error_names) for b in node.bases):
                elsewhere.append(f"{path.relative_to(SOURCE.parent)}:{node.lineno}: {node.name}")
    assert elsewhere == []


def _exception_classes() -> list[type[BaseException]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == errors.__name__
    ]


def test_the_docstring_draws_every_exception_under_its_parent():
    lines = (errors.__doc__ or "").splitlines()
    drawn = {}
    for number, line in enumerate(lines):
        words = line.replace("├──", " ").replace("└──", " ").replace("│", " ").split()
        if line.startswith("    ") and words and words[0].isidentifier():
            drawn[words[0]] = (number, len(line) - len(line.lstrip(" ├└─│")))
    for cls in _exception_classes():
        assert cls.__name__ in drawn, f"{cls.__name__} is not drawn in errors.py's docstring"
        parent = cls.__bases__[0].__name__
        number, indent = drawn[cls.__name__]
        # The parent is the nearest line above drawn less indented.
        above = [(n, i, name) for name, (n, i) in drawn.items() if n < number and i < indent]
        nearest = max(above, default=(0, 0, "Exception"))
        assert nearest[2] == parent, f"{cls.__name__} is drawn under {nearest[2]}, its parent is {parent}"


def test_every_user_facing_error_is_public_and_every_signal_is_not():
    for cls in _exception_classes():
        user_facing = issubclass(cls, errors.RealrecallError)
        assert (cls.__name__ in errors.__all__) == user_facing, cls.__name__


def test_the_version_is_written_once_and_the_installed_metadata_reads_it():
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "realrecall._version.__version__"}
    assert realrecall.__version__ is _version.__version__
    assert importlib.metadata.version("realrecall") == _version.__version__

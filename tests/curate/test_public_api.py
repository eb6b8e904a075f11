"""The public API of realrecall.curate is what its __all__ says."""

from __future__ import annotations

import inspect

import realrecall.curate as curate


def test_all_names_every_public_class_and_function_and_nothing_else() -> None:
    # The package exports lazily (each name imported on first use; tests/test_lazy_exports.py): each
    # name it lists must be a class or a function of realrecall.
    for name in curate.__all__:
        value = getattr(curate, name)
        assert inspect.isclass(value) or inspect.isfunction(value), name
        assert value.__module__.startswith("realrecall."), name
    eager = {
        name
        for name, value in vars(curate).items()
        if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
    }
    assert eager <= set(curate.__all__)


def test_the_library_has_no_print_call() -> None:
    import pathlib

    package = pathlib.Path(curate.__file__).parent
    offenders = [p.name for p in package.glob("*.py") if "print(" in p.read_text(encoding="utf-8")]
    assert offenders == []

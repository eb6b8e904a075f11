"""The public API of realrecall.generate: everything in __all__ exists and is documented."""

from __future__ import annotations

import inspect

import realrecall.generate as generate_package


def test_all_names_exist_and_public_callables_have_docstrings():
    for name in generate_package.__all__:
        value = getattr(generate_package, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert inspect.getdoc(value), name


def test_lexical_overlap_keeps_the_signature_calibrate_imports():
    from realrecall.text_features import lexical_overlap

    assert list(inspect.signature(lexical_overlap).parameters) == ["question", "passage", "language"]

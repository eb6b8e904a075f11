"""No public name shadows a submodule, and every public name means the same object whatever the import order.

``realrecall.generate`` was both a function (exported at the root) and a package: after
``from realrecall.generate import GenerateConfig`` the root name became the module and
``realrecall.generate(...)`` raised TypeError. The rule: a package's public names never equal the
name of one of its submodules.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import realrecall


def _modules() -> list[str]:
    names = ["realrecall"]
    for info in pkgutil.walk_packages(realrecall.__path__, "realrecall."):
        if ".__main__" not in info.name:
            names.append(info.name)
    return names


def _public(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    return list(getattr(module, "__all__", ()))


def test_no_public_name_equals_a_submodule_name() -> None:
    clashes = []
    for name in _modules():
        module = importlib.import_module(name)
        if not hasattr(module, "__path__"):
            continue
        submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
        clashes += [f"{name}.{public}" for public in _public(name) if public in submodules]
    assert clashes == []


# Run in fresh interpreters: each imports the modules in its own order, then reports what every
# public name of every package refers to (module name + qualified name, or the type of a constant).
_PROBE = """
import importlib, json, sys, types
order = json.loads(sys.argv[1])
for name in order:
    importlib.import_module(name)
seen = {}
for name in sorted(order):
    module = sys.modules[name]
    for public in getattr(module, "__all__", ()):
        value = getattr(module, public)
        if isinstance(value, types.ModuleType):
            seen[f"{name}.{public}"] = "module " + value.__name__
        else:
            qualname = getattr(value, "__qualname__", type(value).__name__)
            seen[f"{name}.{public}"] = f"{getattr(value, '__module__', '')}.{qualname}"
import realrecall
for stage in ("calibrate", "evaluate", "generate"):
    value = getattr(realrecall, stage)
    seen["realrecall." + stage] = getattr(value, "__name__", repr(value))
print(json.dumps(seen, sort_keys=True))
"""


def test_public_names_are_the_same_objects_in_any_import_order() -> None:
    modules = [m for m in _modules() if not m.startswith("realrecall.cli")]
    orders = [modules, list(reversed(modules)), sorted(modules, key=lambda m: (m.count("."), m[::-1]))]
    # Started side by side: each process's start-up and imports overlap with the others'.
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _PROBE, json.dumps(order)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for order in orders
    ]
    answers = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        answers.append(json.loads(out))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["realrecall.generate"] == "realrecall.generate"
    assert answers[0]["realrecall.calibrate"] == "realrecall.calibrate"
    assert answers[0]["realrecall.evaluate"] == "realrecall.evaluate"


def test_a_stage_is_its_package_before_and_after_importing_from_it() -> None:
    code = (
        "import realrecall, types\n"
        "assert isinstance(realrecall.generate, types.ModuleType)\n"
        "from realrecall.generate import GenerateConfig\n"
        "from realrecall import calibrate\n"
        "assert isinstance(calibrate, types.ModuleType) and callable(calibrate.calibrate)\n"
        "assert isinstance(realrecall.generate, types.ModuleType)\n"
        "assert callable(realrecall.generate.generate)\n"
        "from realrecall.calibrate import compare\n"
        "assert callable(compare) and not isinstance(compare, types.ModuleType)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr

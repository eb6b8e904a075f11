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
from typing import Any

import pytest

import realrecall

pytestmark = pytest.mark.slow  # a process importing every module in three orders


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


# One process checks everything that needs an interpreter of its own. First, with nothing of realrecall
# imported yet, what a stage name is before and after importing from it. Then, for each import order,
# every realrecall module is dropped from sys.modules and imported again in that order (third-party
# modules stay loaded: the names checked are realrecall's own), and the probe reports what every
# public name of every package refers to (module name + qualified name, or the type of a constant).
_PROBE = """
import importlib, json, sys, traceback, types


def stage_is_its_package():
    import realrecall
    assert isinstance(realrecall.generate, types.ModuleType)
    from realrecall.generate import GenerateConfig
    from realrecall import calibrate
    assert isinstance(calibrate, types.ModuleType) and callable(calibrate.calibrate)
    assert isinstance(realrecall.generate, types.ModuleType)
    assert callable(realrecall.generate.generate)
    from realrecall.calibrate import compare
    assert callable(compare) and not isinstance(compare, types.ModuleType)


def public_names(order):
    for name in [name for name in sys.modules if name == "realrecall" or name.startswith("realrecall.")]:
        del sys.modules[name]
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
    realrecall = sys.modules["realrecall"]
    for stage in ("calibrate", "evaluate", "generate"):
        value = getattr(realrecall, stage)
        seen["realrecall." + stage] = getattr(value, "__name__", repr(value))
    return seen


try:
    stage_is_its_package()
    stage = "ok"
except AssertionError:
    stage = traceback.format_exc()
orders = [public_names(order) for order in json.loads(sys.argv[1])]
print(json.dumps({"stage": stage, "orders": orders}, sort_keys=True))
"""


@pytest.fixture(scope="module")
def probe() -> dict[str, Any]:
    modules = [m for m in _modules() if not m.startswith("realrecall.cli")]
    orders = [modules, list(reversed(modules)), sorted(modules, key=lambda m: (m.count("."), m[::-1]))]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(orders)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_public_names_are_the_same_objects_in_any_import_order(probe: dict[str, Any]) -> None:
    answers = probe["orders"]
    assert len(answers) == 3
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["realrecall.generate"] == "realrecall.generate"
    assert answers[0]["realrecall.calibrate"] == "realrecall.calibrate"
    assert answers[0]["realrecall.evaluate"] == "realrecall.evaluate"


def test_a_stage_is_its_package_before_and_after_importing_from_it(probe: dict[str, Any]) -> None:
    assert probe["stage"] == "ok", probe["stage"]

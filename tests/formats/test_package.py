"""realrecall.formats is a leaf: the readers never import the types, and reading a gold set needs no numpy."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import realrecall.formats

_TYPES = ("realrecall.gold", "realrecall.corpus", "realrecall.runs")


def _loaded_after(code: str, watched: tuple[str, ...]) -> list[str]:
    """The watched modules a fresh interpreter has loaded after running ``code``."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_no_format_module_imports_a_type_module():
    # The types import formats/; the other way round would be an import cycle.
    modules = [info.name for info in pkgutil.iter_modules(realrecall.formats.__path__, "realrecall.formats.")]
    assert "realrecall.formats.jsonl" in modules
    code = "\n".join(f"import {name}" for name in modules)
    assert _loaded_after(code, _TYPES) == []


def test_gold_sets_and_corpora_load_without_numpy():
    # Only TREC runs need numpy; it stays in formats.trec_runs, away from the gold and corpus readers.
    assert _loaded_after("import realrecall.gold, realrecall.corpus", ("numpy",)) == []

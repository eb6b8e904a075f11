"""Imports run one way: down the layers, with no cycle, counting the imports made inside functions.

Every ``import`` and ``from ... import`` of a realrecall module is read from the source (the AST), at
module level or inside a function or method alike: a function-level import runs when the function is
first called, so it hides a cycle from Python's import machinery, not from this test. Only
``if TYPE_CHECKING:`` blocks are left out (they never run). A name imported from a package that
exports it lazily (its ``__init__``'s ``TYPE_CHECKING`` block) counts as an import of the module that
defines it; importing ``a.b.c`` from outside ``a`` also runs ``a``'s and ``a.b``'s ``__init__``.
Imports of third-party packages (numpy, the optional extras: chromadb, lancedb, torch...) are not
edges of this graph: only realrecall's own modules are.

The layers, top to bottom (docs/extending.md says the same). A module may import any module of its
own top-level package (``realrecall.evaluate.*`` among themselves; only cycles are refused there) and
any module of a layer below its own; never one of its own layer's other packages, nor one above.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "realrecall"

LAYERS: tuple[tuple[str, ...], ...] = (
    # ``python -m realrecall``, the command line, and the package's root (its public names, all lazy).
    ("__main__",),
    ("realrecall", "cli"),
    # What runs the stages together: the scheduled job; figures sent to an experiment tracker.
    ("pipeline", "tracking"),
    # Stages that read evaluate's results (calibrate, curate's review) or its retrievers (stores).
    ("calibrate", "curate", "stores"),
    # The two stages that make a gold set's figures and its synthetic questions, independent.
    ("evaluate", "generate"),
    # The core types and their loaders; resolving evidence to the chunks of a corpus.
    ("corpus", "gold", "runs", "resolution", "style_leak"),
    # File formats: each reads one family of files into plain records.
    ("formats",),
    # Leaf types and text helpers the formats and the types share; the labels the type rules give;
    # control characters in data shown as escapes (every renderer's); where the stages' work runs (a Ray
    # cluster, or this process).
    ("collection", "evidence", "provenance", "text_features", "tokens", "labels", "printable", "engine"),
    # Reading and writing files safely; what a grade may be; the one client of an LLM endpoint; how a
    # stage declares its settings.
    ("files", "grades", "llm", "settings"),
    # Every error, the version, and the package's small mechanisms.
    ("errors", "_version", "_lazy", "bulk"),
)


@dataclass(frozen=True)
class Import:
    """``importer`` imports ``target`` at ``line``; ``when`` says when the import runs."""

    importer: str
    target: str
    line: int
    when: str = ""  # "", "inside a function", "on first use of a lazy export"

    def where(self) -> str:
        path = _MODULES[self.importer].relative_to(SOURCE.parent)
        when = f" ({self.when})" if self.when else ""
        return f"{path}:{self.line}: {self.importer} imports {self.target}{when}"


def _module_files() -> dict[str, Path]:
    modules = {}
    for path in sorted(SOURCE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


_MODULES = _module_files()
_PACKAGES = {name for name, path in _MODULES.items() if path.name == "__init__.py"}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _lazy_exports(package: str) -> dict[str, tuple[str, int]]:
    """Name -> (module, line) of the ``TYPE_CHECKING`` import that declares it in ``package``."""
    exports = {}
    for node in ast.walk(ast.parse(_MODULES[package].read_text(encoding="utf-8"))):
        if _is_type_checking(node):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
                    for alias in inner.names:
                        exports[alias.asname or alias.name] = (inner.module, inner.lineno)
    return exports


_LAZY = {package: _lazy_exports(package) for package in _PACKAGES}


def _resolve(module: str, name: str | None) -> str:
    """The module ``from module import name`` loads: a submodule, a lazy export's home, or ``module``."""
    if name is not None and f"{module}.{name}" in _MODULES:
        return f"{module}.{name}"
    home, _ = _LAZY.get(module, {}).get(name or "", (module, 0))
    return _resolve(home, name) if home != module else module


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer.split(".") if importer in _PACKAGES else importer.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _ours(module: str) -> bool:
    return module == "realrecall" or module.startswith("realrecall.")


def _imports_of(importer: str) -> Iterator[Import]:
    def visit(node: ast.AST, when: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            inside = when or ("inside a function" if function else "")
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and _ours(base := _absolute(importer, child)):
                targets = [_resolve(base, alias.name) for alias in child.names]
            yield from (Import(importer, t, child.lineno, inside) for t in targets if _ours(t))
            yield from visit(child, inside)

    source = _MODULES[importer].read_text(encoding="utf-8")
    yield from dict.fromkeys(visit(ast.parse(source), ""))  # one per target and line, in order
    if importer in _PACKAGES and "_lazy_exports(__name__" in source:  # imported on first use
        exports = _LAZY[importer].items()
        lazy = "on first use of a lazy export"
        found = {Import(importer, _resolve(m, n), line, lazy) for n, (m, line) in exports}
        yield from sorted(found, key=lambda i: (i.line, i.target))


@functools.cache
def _all_imports() -> tuple[Import, ...]:
    return tuple(found for importer in _MODULES for found in _imports_of(importer))


def _graph(imports: Iterable[Import]) -> dict[str, set[Import]]:
    """Importer -> its imports, and the ``__init__`` of each package an import from outside it runs."""
    graph: dict[str, set[Import]] = defaultdict(set)
    for found in imports:
        parts = found.target.split(".")
        for depth in range(2, len(parts) + 1):
            target = ".".join(parts[:depth])
            if target == found.importer or (depth < len(parts) and found.importer.startswith(target + ".")):
                continue  # a module's own package is already being imported when it runs
            graph[found.importer].add(Import(found.importer, target, found.line, found.when))
    return graph


def _cycles(graph: Mapping[str, set[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted({i.target for i in graph.get(root, ())})))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted({i.target for i in graph.get(child, ())}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _unit(module: str) -> str:
    """The top-level package or module a module belongs to (``evaluate`` for realrecall.evaluate.x)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _upward() -> list[Import]:
    layer = {unit: number for number, units in enumerate(LAYERS) for unit in units}
    return [
        found
        for found in _all_imports()
        if _unit(found.importer) != _unit(found.target)
        and layer[_unit(found.target)] <= layer[_unit(found.importer)]
    ]


def test_every_package_and_top_level_module_is_in_exactly_one_layer():
    units = {_unit(module) for module in _MODULES}
    placed = [unit for layer in LAYERS for unit in layer]
    assert len(placed) == len(set(placed)), "a unit is in two layers"
    assert sorted(units - set(placed)) == [], "place these in LAYERS (and in docs/extending.md)"
    assert sorted(set(placed) - units) == [], "these are in LAYERS but not in src/realrecall"


def test_no_import_cycle_between_modules_even_through_function_level_imports():
    graph = _graph(_all_imports())
    report = []
    for component in _cycles(graph):
        report.append(" <-> ".join(component))
        edges = {f.where() for m in component for f in graph[m] if f.target in component}
        report += ["    " + edge for edge in sorted(edges)]
    assert report == [], "\n".join(report)


def test_no_import_runs_up_the_layers_or_across_one():
    assert [found.where() for found in _upward()] == []


def _loaded_with(module: str, eager: Mapping[str, set[Import]]) -> set[str]:
    """Every module importing ``module`` loads: its packages' ``__init__`` and its module-level imports."""
    parts = module.split(".")
    stack = [".".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
    seen: set[str] = set()
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack += [found.target for found in eager.get(current, ())]
    return seen


def test_no_import_inside_a_function_of_a_module_already_loaded_with_its_importer():
    # An import inside a function defers loading a module until the function runs; deferring one that
    # importing the module loads anyway saves nothing and only hides where the dependency is.
    eager = _graph(found for found in _all_imports() if not found.when)
    pointless = [
        found.where()
        for found in _all_imports()
        if found.when == "inside a function" and found.target in _loaded_with(found.importer, eager)
    ]
    assert pointless == []


def test_the_graph_sees_function_level_imports_and_lazy_exports():
    found = {(i.target, i.when) for i in _all_imports() if i.importer == "realrecall.cli.evaluate"}
    # cli.evaluate imports evaluate's library inside the command (a lazy load for start-up speed).
    assert any(target.startswith("realrecall.evaluate.") and when for target, when in found)
    assert _resolve("realrecall.evaluate", "evaluate") == "realrecall.evaluate.evaluation"
    assert _resolve("realrecall", "load_gold") == "realrecall.gold"
    lazy = {i.target for i in _all_imports() if i.importer == "realrecall.curate" and i.when}
    assert "realrecall.curate.importer" in lazy


def test_a_cycle_closed_by_an_import_inside_a_function_is_found():
    graph = {
        "a": {Import("a", "b", 1)},
        "b": {Import("b", "c", 1)},
        "c": {Import("c", "a", 1, "inside a function"), Import("c", "d", 1)},
    }
    assert _cycles(graph) == [["a", "b", "c"]]
    graph["c"] = {Import("c", "d", 1)}
    assert _cycles(graph) == []

"""The optional extras a pipeline needs installed: ``pip install 'realrecall[chroma,realism]'``.

A CI job installs realrecall before it runs the pipeline; ``realrecall extras pipeline.toml`` says what
to install with it, so a store or framework retriever named in pipeline.toml finds its library:

- the retriever's own extra (``chroma``, ``lancedb``, ``qdrant``; ``local`` for local-dense and a
  hybrid whose dense half is local-dense);
- for a custom retriever (``file.py:function``, ``module:object``), ``langchain`` or ``llamaindex``
  when its source imports LangChain or LlamaIndex (read, not run: the libraries may be missing);
- ``realism``: with ``[calibrate] realism = true``, the reports show the realism score, which needs
  scikit-learn;
- ``ray``: with ``[engine] engine = "ray"``, the run's work goes to a Ray cluster.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.evaluate.retrievers import find_spec
from realrecall.evaluate.settings import DEFAULT_RETRIEVER
from realrecall.pipeline.config import load_pipeline_config

__all__ = ["pipeline_extras", "retriever_extras"]

# Top-level packages of a framework -> the extra that installs it.
_FRAMEWORKS = {"langchain": "langchain", "langchain_core": "langchain", "llama_index": "llamaindex"}


def pipeline_extras(path: str | Path, *, retriever: str | None = None) -> tuple[str, ...]:
    """The extras the pipeline at ``path`` needs, sorted; ``retriever`` replaces the one it names."""
    config = load_pipeline_config(path)
    evaluation = config.evaluate
    name = retriever or evaluation.retriever or DEFAULT_RETRIEVER
    given = evaluation.retriever_options if retriever is None else {}
    options = {"dense_component": evaluation.hybrid_dense, **given}
    realism = {"realism"} if config.calibrate.realism else set()
    ray = {"ray"} if config.engine.on_ray else set()
    return tuple(sorted({*retriever_extras(name, options, base=config.path.parent), *realism, *ray}))


def retriever_extras(
    name: str, options: Mapping[str, Any] | None = None, *, base: Path | None = None
) -> set[str]:
    """The extras the retriever ``name`` (with ``options``) needs; ``base``: where a file path starts."""
    options = options or {}
    spec = find_spec(name)
    if spec.name == "hybrid":
        return retriever_extras(str(options.get("dense_component", "local-dense")), options)
    if spec.extra is not None:
        return {spec.extra}
    if ":" not in name:
        return set()
    source = _source_of(name.rsplit(":", 1)[0], base)
    return set() if source is None else _framework_extras(source)


def _source_of(target: str, base: Path | None) -> Path | None:
    """The file a custom retriever's code is in: ``file.py`` as given, or a module's file (not run)."""
    if target.endswith(".py"):
        path = Path(target)
        return path if path.is_absolute() or base is None else base / path
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def _framework_extras(source: Path) -> set[str]:
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    except OSError as exc:
        raise InputError(f"cannot read the retriever's code: {exc.strerror}", path=source) from exc
    except SyntaxError as exc:
        raise InputError(
            f"the retriever's code does not parse: {exc.msg}", path=source, line=exc.lineno
        ) from exc
    modules = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
    return {_FRAMEWORKS[m.split(".")[0]] for m in modules if m.split(".")[0] in _FRAMEWORKS}

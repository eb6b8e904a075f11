"""The docs' tables of metrics, retrievers, their options, prompt strategies and each stage's settings,
made from the registries and the settings' declarations.

    .venv/bin/python tests/support/docs_tables.py      # rewrite every generated table in docs/

A generated table sits between two comment lines naming it, ``<!-- generated: NAME ... -->`` and
``<!-- end generated: NAME -->``; everything between them is rewritten, nothing else is touched.
tests/test_docs_tables.py fails when a table differs from what the registries say. A registered
retriever whose section has no options table of its own gets one under "other retrievers".
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
COMMAND = ".venv/bin/python tests/support/docs_tables.py"
_BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[^;>]+?)(?:;[^>]*)? -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
    re.S,
)


def metrics_table() -> str:
    """Each metric name, its definition and the trec_eval measure it equals (``METRICS``)."""
    from realrecall.evaluate.metrics import METRICS

    rows = []
    for name, kind in METRICS.items():
        trec = kind.trec_eval if kind.trec_eval.endswith("_k") else f"{kind.trec_eval}` with `-M k"
        rows.append((f"{name}@k", kind.definition, f"`{trec}` = 1" if kind.trec_eval_is_one else f"`{trec}`"))
        if kind.cutoff == "optional":
            whole = f"as `{name}@k` with no cut-off (k: the whole run)"
            rows.append((name, whole, f"`{kind.trec_eval_whole}`"))
        if kind.budgeted:
            budget = f"as `{name}@k`, k the most top chunks whose tokens add up to N or less"
            rows.append((f"{name}@Ntok", budget, "none"))
    lines = ["| name | definition | trec_eval measure |", "|---|---|---|"]
    lines += [f"| `{name}` | {definition} | {trec} |" for name, definition, trec in rows]
    return "\n".join(lines) + "\n"


def retrievers_table() -> str:
    """Each name ``--retriever`` takes, what it is, and whether ``corpus export --from`` reads it."""
    from realrecall.evaluate.retrievers.registry import CUSTOM, RETRIEVERS

    lines = ["| `--retriever` | what it is | a store (`corpus export --from`) |", "|---|---|---|"]
    for spec in [*RETRIEVERS.values(), CUSTOM]:
        store = "yes" if spec.export is not None else ""
        lines.append(f"| `{spec.name}` | {spec.summary} | {store} |")
    return "\n".join(lines) + "\n"


def options_table(name: str) -> str:
    """The options of one retriever: name, type, default, meaning (``option_rows``)."""
    from realrecall.evaluate.retrievers.options import option_rows

    spec = _retriever(name)
    lines = [f"| option (`{spec.options.__name__}`) | takes | default | meaning |", "|---|---|---|---|"]
    lines += [
        f"| `{option}` | {kind} | {default} | {help_text} |"
        for option, kind, default, help_text in option_rows(spec)
    ]
    return "\n".join(lines) + "\n"


def strategies_table() -> str:
    """Each name ``--strategy`` takes and what it does (``generate.strategies.STRATEGIES``)."""
    from realrecall.generate.config import DEFAULT_STRATEGY as DEFAULT
    from realrecall.generate.strategies import STRATEGIES

    lines = ["| `--strategy` | how a question is written |", "|---|---|"]
    for name, spec in STRATEGIES.items():
        lines.append(f"| `{name}`{' (default)' if name == DEFAULT else ''} | {spec.summary} |")
    return "\n".join(lines) + "\n"


def settings_table(stage: str) -> str:
    """Each setting of a stage's pipeline.toml section: its key, its command-line option, what it
    takes, its default in a pipeline and its help, from the settings' declarations
    (``realrecall.settings``) and what the section starts from (``pipeline.config``)."""
    from realrecall.calibrate.settings import CalibrateSettings, DriftSettings
    from realrecall.pipeline.config import PIPELINE_EVALUATE, PIPELINE_GENERATE
    from realrecall.settings import EngineSettings, Settings, setting_fields, shown

    starts: dict[str, Settings] = {
        "generate": PIPELINE_GENERATE,
        "evaluate": PIPELINE_EVALUATE,
        "calibrate": CalibrateSettings(),
        "drift": DriftSettings(),
        "engine": EngineSettings(),
    }
    start = starts[stage]
    # The engine's keys are [engine]'s alone in a pipeline, though two stages' settings hold them.
    engine_keys = set() if stage == "engine" else {item.name for item in setting_fields(EngineSettings)}
    header = f"| key (`{type(start).__name__}`) | option | takes | default | meaning |"
    lines = [header, "|---|---|---|---|---|"]
    for item in setting_fields(type(start)):
        if item.has_text_form and item.name not in engine_keys:
            default = shown(_value(start, item.path)) or "none"
            cells = [f"`{item.name}`", f"`{item.option}`", _takes(item), default, _cell(item.help)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _value(settings: object, path: tuple[str, ...]) -> object:
    for name in path:
        settings = getattr(settings, name)
    return settings


def _takes(item: Any) -> str:
    """What a setting takes: its type, or the form its own reader reads (a shard's ``I/N``)."""
    from realrecall.settings import type_text

    takes = type_text(item.hint)
    if item.text is not None and "Python only" in takes:
        return f"text, `{item.text.metavar}`" + (" or none" if takes.endswith(" or none") else "")
    return takes


def _cell(text: str) -> str:
    """Text in a Markdown table cell: a ``|`` of its own would end the cell."""
    return text.replace("|", "\\|")


def other_retrievers(documented: set[str]) -> str:
    """The options of each registered retriever the page gives no options table of its own."""
    from realrecall.evaluate.retrievers.registry import RETRIEVERS

    others = [name for name in RETRIEVERS if f"options {name}" not in documented]
    if not others:
        return "(none: each has its section above)\n"
    parts = [f"`{name}`: {RETRIEVERS[name].summary}.\n\n{options_table(name)}" for name in others]
    return "\n".join(parts)


def _retriever(name: str) -> Any:
    from realrecall.evaluate.retrievers.registry import CUSTOM, RETRIEVERS

    return CUSTOM if name == CUSTOM.name else RETRIEVERS[name]


def table(name: str, page: str = "") -> str:
    """The text of the generated table called ``name`` (``metrics``, ``options bm25``...) in ``page``."""
    makers: dict[str, Callable[[], str]] = {
        "metrics": metrics_table,
        "retrievers": retrievers_table,
        "strategies": strategies_table,
        "other retrievers": lambda: other_retrievers(set(blocks(page))),
    }
    if name.startswith("options "):
        return options_table(name.removeprefix("options "))
    if name.startswith("settings "):
        return settings_table(name.removeprefix("settings "))
    return makers[name]()


def regenerated(text: str) -> str:
    """``text`` with every generated table rewritten."""
    return _BLOCK.sub(lambda m: m.group(1) + table(m.group("name"), text) + m.group(4), text)


def blocks(text: str) -> list[str]:
    """The names of the generated tables in ``text``."""
    return [match.group("name") for match in _BLOCK.finditer(text)]


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def main() -> int:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = regenerated(text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "src")]
    sys.exit(main())

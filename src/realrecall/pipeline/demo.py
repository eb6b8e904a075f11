"""``realrecall demo``: the whole pipeline, offline, on the sample data shipped in ``realrecall/data``.

The synthetic set comes from the extractive backend (a sentence of each chunk turned into a query, no
model), the worst case of vocabulary reuse, so the gap to the real questions is plain to see.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from realrecall.errors import OutputError
from realrecall.files import atomic_write_text
from realrecall.pipeline.config import load_pipeline_config
from realrecall.pipeline.run import PipelineResult, run_pipeline

__all__ = ["check_demo_folder", "demo_config_text", "run_demo", "sample_data_dir"]


def sample_data_dir() -> Path:
    """The folder of the packaged sample corpus and real question set."""
    return Path(str(resources.files("realrecall") / "data"))


def demo_config_text(data: Path) -> str:
    """The demo's ``pipeline.toml``: also a starting point for a real job."""
    return f"""# realrecall pipeline: run with `realrecall run pipeline.toml`
{_MARKER}
[corpus]
path = "{(data / "docs_corpus.jsonl").as_posix()}"

[real]
path = "{(data / "real_questions.jsonl").as_posix()}"
date = "2026-11-30"

[generate]
output = "synthetic.jsonl"
backend = "extractive"        # offline; use backend = "llm" and model = "..." with an endpoint
per_chunk = 1                 # any option of `realrecall generate`, by its name
seed = 0

[evaluate]
retriever = "bm25"
k = [1, 3, 5, 10, 20]
by = ["type", "language", "form"]

[calibrate]
metric = "recall@10"
max_age_days = 365

[output]
dir = "report"
history = "history.jsonl"
"""


# Tells the demo's own pipeline.toml (safe to rewrite on a rerun) from a project's.
_MARKER = "# written by `realrecall demo`: the demo rewrites this file on every run"


def check_demo_folder(folder: str | Path) -> None:
    """Refuse, before anything is written, a folder the demo would damage.

    The demo writes ``pipeline.toml`` and appends to ``history.jsonl`` in its folder: in a folder that
    is a file, or that holds a project's own pipeline, it would fail half-way or overwrite the
    project's config and mix demo rows into its history.
    """
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise OutputError("is a file, not a folder", path=target, hint="give --dir a folder for the demo")
    config = target / "pipeline.toml"
    if config.exists():
        try:
            text = config.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            text = ""
        previous = demo_config_text(sample_data_dir()).replace(_MARKER + "\n", "")
        if _MARKER not in text and text != previous:
            raise OutputError(
                "the folder holds a pipeline.toml that is not the demo's",
                path=config,
                hint="give the demo a folder of its own with --dir (the default is realrecall-demo)",
            )


def run_demo(
    folder: str | Path,
    *,
    progress: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> PipelineResult:
    """Write the demo's pipeline.toml into ``folder`` and run it there (``on_warning`` as in run_pipeline)."""
    target = Path(folder)
    check_demo_folder(target)
    config_path = target / "pipeline.toml"
    atomic_write_text(config_path, demo_config_text(sample_data_dir()))
    return run_pipeline(load_pipeline_config(config_path), progress=progress, on_warning=on_warning)

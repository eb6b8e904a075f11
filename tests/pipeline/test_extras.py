"""``realrecall extras``: the optional extras a pipeline's retriever and reports need installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from realrecall.errors import InputError
from realrecall.pipeline.extras import pipeline_extras, retriever_extras
from support import cli

PIPELINE = """\
[corpus]
path = "chunks.jsonl"

[generate]
output = "synthetic.jsonl"

[evaluate]
retriever = "{retriever}"
"""


@pytest.fixture
def pipeline(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "chunks.jsonl").write_text('{"id": "c1", "text": "one chunk"}\n', encoding="utf-8")

    def write(retriever: str) -> Path:
        path = tmp_path / "pipeline.toml"
        path.write_text(PIPELINE.format(retriever=retriever), encoding="utf-8")
        return path

    return write


@pytest.mark.parametrize(
    ("retriever", "extras"),
    [("bm25", ()), ("chroma", ("chroma",)), ("lancedb", ("lancedb",)), ("qdrant", ("qdrant",)),
     ("local-dense", ("local",)), ("hybrid", ("local",))],
)  # fmt: skip
def test_a_registered_retriever_names_its_extra(pipeline, retriever: str, extras: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    # A store's options (its folder, its collection) are checked where pipeline.toml names it; the
    # pull-request workflow names its retriever with --retriever.
    assert pipeline_extras(pipeline("bm25"), retriever=retriever) == extras
    done = cli.run("extras", str(pipeline("bm25")), "--retriever", retriever)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ",".join(extras) + "\n"
    if retriever in ("bm25", "local-dense", "hybrid"):
        assert pipeline_extras(pipeline(retriever)) == extras


def test_a_custom_retriever_names_the_framework_its_code_imports(pipeline, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "search.py").write_text(
        "from langchain_core.retrievers import BaseRetriever\nimport llama_index.core\n\n"
        "def search(query, k):\n    return []\n",
        encoding="utf-8",
    )
    assert pipeline_extras(pipeline("search.py:search")) == ("langchain", "llamaindex")
    assert retriever_extras("hybrid", {"dense_component": "dense"}) == set()
    # The pull-request workflow's own retriever replaces the pipeline's.
    assert pipeline_extras(pipeline("bm25"), retriever="qdrant") == ("qdrant",)


def test_the_realism_extra_is_named_only_when_the_reports_score_realism(pipeline) -> None:  # type: ignore[no-untyped-def]
    path = pipeline("bm25")
    assert pipeline_extras(path) == ()
    path.write_text(path.read_text(encoding="utf-8") + "[calibrate]\nrealism = true\n", encoding="utf-8")
    assert pipeline_extras(path) == ("realism",)


def test_an_unknown_retriever_is_one_line(pipeline) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="elastic"):
        pipeline_extras(pipeline("elastic"))

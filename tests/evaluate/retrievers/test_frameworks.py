"""LangChain and LlamaIndex objects as retrievers: their figures equal scoring their ranking as a run.

Each framework's own in-memory store holds the bundled sample corpus
(tests/evaluate/retrievers/framework_stores.py, deterministic hashing embeddings, no network). The
oracle is the object asked directly (its own ``similarity_search`` / ``invoke`` / ``retrieve``),
written as a TREC run and scored with ``--run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from evaluate.retrievers import framework_stores
from realrecall.corpus import load_corpus
from realrecall.errors import InputError
from realrecall.evaluate import evaluate
from realrecall.evaluate.retrievers import build_retriever, retrieve
from realrecall.gold import load_gold
from support.cli import run as cli

pytestmark = pytest.mark.slow  # LangChain's and LlamaIndex's stores, seconds

K = "1,5,10"
DEPTH = 10
STORES = "evaluate.retrievers.framework_stores"
_EVALUATE = (
    "evaluate",
    "--gold",
    str(framework_stores.gold_path()),
    "--corpus",
    str(framework_stores.corpus_path()),
)


def _langchain() -> dict[str, Any]:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    return framework_stores.langchain_objects()


def _llamaindex() -> dict[str, Any]:
    pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
    return framework_stores.llamaindex_objects()


def _queries() -> dict[str, str]:
    lines = framework_stores.gold_path().read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return {r["query_id"]: r["query"] for r in records}


def _write_run(path: Path, ranking: Callable[[str], Sequence[str]]) -> Path:
    """The framework's own ranking of every sample question, as a TREC run (scores fall with rank)."""
    lines = []
    for query_id, text in _queries().items():
        for rank, chunk_id in enumerate(ranking(text), start=1):
            lines.append(f"{query_id} Q0 {chunk_id} {rank} {DEPTH + 1 - rank} oracle")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _figures(tmp_path: Path, name: str, *retriever_args: str) -> dict[str, Any]:
    output = tmp_path / f"{name}.json"
    result = cli(
        *_EVALUATE,
        "--k", K, "-o", str(output), *retriever_args,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(output.read_text(encoding="utf-8"))
    (gold_set,) = data["gold_sets"]
    return {
        "overall": gold_set["overall"],
        "per_query": gold_set["per_query"],  # the columns: query ids and each metric's values
        "fingerprint": data["fingerprints"]["retriever"],
        "description": data["retriever"]["description"],
    }


def _assert_same_figures(adapter: dict[str, Any], oracle: dict[str, Any]) -> None:
    assert adapter["overall"] == oracle["overall"]
    assert adapter["per_query"] == oracle["per_query"]
    # A store that finds nothing would pass the comparison too: these rankings find the answers.
    assert adapter["overall"]["metrics"]["recall@10"] > 0.3


@pytest.mark.parametrize(
    ("name", "ranking"),
    [
        ("store", lambda o, q: [d.id for d in o["store"].similarity_search(q, k=DEPTH)]),
        ("retriever", lambda o, q: [d.id for d in o["store"].similarity_search(q, k=DEPTH)]),
        (
            "store_by_metadata",
            lambda o, q: [
                d.metadata["chunk_id"] for d in o["store_by_metadata"].similarity_search(q, k=DEPTH)
            ],
        ),
    ],
    ids=["vector-store", "vector-store-retriever-asked-for-k", "metadata-id-field"],
)
def test_a_langchain_object_scores_as_its_own_ranking_does_as_a_run(
    tmp_path: Path, name: str, ranking: Callable[[dict[str, Any], str], list[str]]
) -> None:
    objects = _langchain()
    oracle = _figures(
        tmp_path, "run", "--run", str(_write_run(tmp_path / "run.trec", lambda q: ranking(objects, q)))
    )
    options = ["--retriever-option", "id_field=chunk_id"] if name == "store_by_metadata" else []
    adapter = _figures(tmp_path, name, "--retriever", f"{STORES}:{name}", *options)
    _assert_same_figures(adapter, oracle)
    assert adapter["fingerprint"]["versions"]["langchain-core"] not in ("", "unknown")
    assert "LangChain" in adapter["description"]


@pytest.mark.parametrize(
    ("name", "ranking"),
    [
        (
            "index",
            lambda o, q: [
                n.node.node_id for n in o["index"].as_retriever(similarity_top_k=DEPTH).retrieve(q)
            ],
        ),
        ("index_retriever", lambda o, q: [n.node.node_id for n in o["index_retriever"].retrieve(q)][:DEPTH]),
        (
            "index_by_metadata",
            lambda o, q: [
                n.node.metadata["chunk_id"]
                for n in o["index_by_metadata"].as_retriever(similarity_top_k=DEPTH).retrieve(q)
            ],
        ),
    ],
    ids=["index", "retriever", "metadata-id-field"],
)
def test_a_llamaindex_object_scores_as_its_own_ranking_does_as_a_run(
    tmp_path: Path, name: str, ranking: Callable[[dict[str, Any], str], list[str]]
) -> None:
    objects = _llamaindex()
    oracle = _figures(
        tmp_path, "run", "--run", str(_write_run(tmp_path / "run.trec", lambda q: ranking(objects, q)))
    )
    options = ["--retriever-option", "id_field=chunk_id"] if name == "index_by_metadata" else []
    adapter = _figures(tmp_path, name, "--retriever", f"{STORES}:{name}", *options)
    _assert_same_figures(adapter, oracle)
    assert adapter["fingerprint"]["versions"]["llama-index-core"] not in ("", "unknown")
    assert "LlamaIndex" in adapter["description"]


def test_a_store_named_by_file_path_is_loaded_like_a_function(tmp_path: Path) -> None:
    objects = _langchain()
    run = _write_run(
        tmp_path / "run.trec", lambda q: [d.id for d in objects["store"].similarity_search(q, k=DEPTH)]
    )
    oracle = _figures(tmp_path, "run", "--run", str(run))
    adapter = _figures(tmp_path, "file", "--retriever", f"{framework_stores.__file__}:store")
    _assert_same_figures(adapter, oracle)


def test_the_python_api_takes_the_objects_themselves() -> None:
    langchain, llamaindex = _langchain(), _llamaindex()
    corpus = load_corpus(framework_stores.corpus_path())
    gold = load_gold(framework_stores.gold_path())
    queries = dict(list(_queries().items())[:5])
    llamaindex_top3 = llamaindex["index"].as_retriever(similarity_top_k=3)
    for target, direct in (
        (langchain["store"], lambda q: [d.id for d in langchain["store"].similarity_search(q, k=3)]),
        (llamaindex["index"], lambda q: [n.node.node_id for n in llamaindex_top3.retrieve(q)]),
    ):
        retriever = build_retriever(target, corpus, options={"id_field": None})
        assert retrieve(retriever, queries, 3) == {
            query_id: direct(text) for query_id, text in queries.items()
        }
        via_object = evaluate(gold, corpus=corpus, retriever=target, k=[10])
        via_built = evaluate(gold, corpus=corpus, retriever=build_retriever(target, corpus), k=[10])
        assert via_object.gold_sets[0].overall == via_built.gold_sets[0].overall
        assert via_object.retriever_fingerprint == via_built.retriever_fingerprint


def test_the_fingerprint_names_the_class_and_the_version_not_the_data() -> None:
    store = _langchain()["store"]
    corpus = load_corpus(framework_stores.corpus_path())
    fingerprint = build_retriever(store, corpus).fingerprint  # type: ignore[attr-defined]
    assert fingerprint["options"]["class"] == "langchain_core.vectorstores.in_memory.InMemoryVectorStore"
    assert len(json.dumps(fingerprint)) < 500  # not the store's repr with every vector
    by_field = build_retriever(store, corpus, options={"id_field": "chunk_id"}).fingerprint  # type: ignore[attr-defined]
    assert by_field != fingerprint


def test_documents_without_ids_are_one_line_naming_the_id_field_option(tmp_path: Path) -> None:
    _langchain()
    result = _evaluate_error(tmp_path, "no_ids")
    assert "without an id" in result
    assert "--retriever-option id_field=NAME" in result


def test_a_missing_metadata_field_is_one_line_naming_it(tmp_path: Path) -> None:
    _langchain()
    result = _evaluate_error(tmp_path, "store", "--retriever-option", "id_field=doc_key")
    assert "without a metadata field 'doc_key'" in result


@pytest.mark.parametrize(
    ("name", "attribute", "loader"),
    [("fixed_retriever", "k=4", _langchain), ("shallow_retriever", "similarity_top_k=2", _llamaindex)],
)
def test_a_retriever_whose_own_depth_is_below_k_is_refused_before_any_query(
    tmp_path: Path, name: str, attribute: str, loader: Callable[[], dict[str, Any]]
) -> None:
    loader()
    message = _evaluate_error(tmp_path, name)
    assert f"({attribute})" in message
    assert "fewer than the 10 asked" in message
    assert f"build it with {attribute.split('=')[0]}=10 or more" in message


def _evaluate_error(tmp_path: Path, name: str, *options: str) -> str:
    result = cli(
        *_EVALUATE,
        "--k", K, "--retriever", f"{STORES}:{name}", *options,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.err_lines) == 1, result.stderr
    return result.err_lines[0]


def test_a_module_needing_a_missing_framework_names_the_extra_to_install(tmp_path: Path) -> None:
    module = tmp_path / "my_chain.py"
    module.write_text("from langchain_not_installed_here.vectorstores import Store\nstore = Store()\n")
    result = cli(
        *_EVALUATE,
        "--retriever", f"{module}:store",
    )  # fmt: skip
    assert result.returncode == 2
    assert result.err_lines == [
        f"error: {module}:1: custom retriever '{module}:store': importing it failed: ModuleNotFoundError: "
        "No module named 'langchain_not_installed_here'; pip install 'realrecall[langchain]'"
    ]


def test_an_object_that_is_neither_function_nor_framework_object_is_refused(tmp_path: Path) -> None:
    module = tmp_path / "settings.py"
    module.write_text("store = {'k': 10}\n")
    result = cli(
        *_EVALUATE,
        "--retriever", f"{module}:store",
    )  # fmt: skip
    assert result.returncode == 2
    assert "is a dict, not a function" in result.stderr
    assert "LangChain retriever" in result.stderr


def test_recognising_an_object_imports_no_framework() -> None:
    code = (
        "import sys\n"
        "from realrecall.evaluate.retrievers.frameworks import framework_retriever\n"
        "from realrecall.evaluate.retrievers import build_retriever\n"
        "assert framework_retriever(lambda q, k: []) is None\n"
        "loaded = [m for m in sys.modules if m.startswith(('langchain', 'llama_index'))]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plain_functions_take_id_field_too() -> None:
    corpus = load_corpus(framework_stores.corpus_path())
    hits = [{"metadata": {"chunk_id": "b"}}, {"chunk_id": "a"}]
    retriever = build_retriever(lambda q, k: hits, corpus, options={"id_field": "chunk_id"})
    assert retriever.search(["q"], 5) == [["b", "a"]]
    with pytest.raises(InputError, match="without a metadata field 'id'"):
        build_retriever(lambda q, k: hits, corpus, options={"id_field": "id"}).search(["q"], 5)

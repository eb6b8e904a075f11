"""What the vector-store tests (chroma, lancedb, qdrant) check alike, over the bundled sample data.

The store holds the sample corpus with vectors from ``support.fake_openai.fake_embedding``, the same
function the fake endpoint embeds queries with, so ``embed_model=...`` against the fake server ranks
exactly as a real model would rank against vectors it made itself. Nothing is downloaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import realrecall
from realrecall.corpus import Chunk, load_corpus
from realrecall.evaluate.retrievers import build_retriever, parse_option_assignments, retrieve
from realrecall.gold import load_gold
from support import cli
from support.fake_openai import fake_embedding

SAMPLE = Path(realrecall.__file__).parent / "data"
CORPUS = SAMPLE / "docs_corpus.jsonl"
GOLD = SAMPLE / "real_questions.jsonl"
EMBED_MODEL = "text-embedding-3-small"


def sample_chunks() -> list[Chunk]:
    return list(load_corpus(CORPUS))


def embed(texts: Sequence[str]) -> np.ndarray:
    """What the fake endpoint answers for ``texts`` (the store's vectors and the queries' alike)."""
    return np.stack([fake_embedding(text) for text in texts])


def chunk_vectors(chunks: Sequence[Chunk]) -> np.ndarray:
    return embed([chunk.searchable_text() for chunk in chunks])


def assert_figures_equal_run(tmp_path: Path, retriever: str, options: Sequence[str]) -> dict[str, Any]:
    """``evaluate --retriever`` gives the figures ``evaluate --run`` gives for the adapter's own ranking.

    Returns the adapter's results.json, for further checks.
    """
    flags = [item for option in options for item in ("--retriever-option", option)]
    direct = tmp_path / "direct.json"
    done = cli.run(
        "evaluate", "--gold", str(GOLD), "--corpus", str(CORPUS), "--retriever", retriever, *flags,
        "--k", "1,5,10", "-o", str(direct),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    adapter = build_retriever(retriever, load_corpus(CORPUS), options=parse_option_assignments(options))
    gold = load_gold(GOLD)
    ranking = retrieve(adapter, {query.query_id: query.query for query in gold.queries}, 10)
    assert any(ranking.values())
    run = tmp_path / "adapter.trec"
    lines = [
        f"{query_id} Q0 {chunk_id} {rank} {100 - rank} {retriever}"
        for query_id, ids in ranking.items()
        for rank, chunk_id in enumerate(ids, start=1)
    ]
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored = tmp_path / "run.json"
    done = cli.run(
        "evaluate", "--gold", str(GOLD), "--corpus", str(CORPUS), "--run", str(run),
        "--k", "1,5,10", "-o", str(scored),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    first, second = (json.loads(path.read_text()) for path in (direct, scored))
    for ours, theirs in zip(first["gold_sets"], second["gold_sets"], strict=True):
        assert ours["overall"] == theirs["overall"]
        assert ours["n_queries"] == theirs["n_queries"] == len(gold.queries)
        assert ours["per_query"]["metrics"] == theirs["per_query"]["metrics"]
    assert first["gold_sets"][0]["overall"]["metrics"]["recall@10"] > 0.3  # a real ranking, not noise
    result: dict[str, Any] = first
    return result


def assert_export_round_trips(
    tmp_path: Path,
    store: str,
    options: Sequence[str],
    *more: str,
    metadata: Callable[[Chunk], dict[str, Any]] | None = None,
) -> Path:
    """``corpus export`` writes every sample chunk back (ids, texts, metadata), and bm25 evaluates over it.

    ``more``: further arguments of ``corpus export`` (``--page-size 7``). ``metadata``: the metadata
    expected for a chunk (default ``stored_metadata``, what the tests store).
    """
    metadata = metadata or stored_metadata
    flags = [item for option in options for item in ("--option", option)]
    exported = tmp_path / "exported.jsonl"
    done = cli.run("corpus", "export", "--from", store, *flags, *more, "-o", str(exported))
    assert done.returncode == 0, done.stderr
    got = {chunk.id: chunk for chunk in load_corpus(exported)}
    want = {chunk.id: chunk for chunk in sample_chunks()}
    assert got.keys() == want.keys()
    for chunk_id, chunk in want.items():
        assert got[chunk_id].text == chunk.text
        assert got[chunk_id].title == chunk.title
        assert dict(got[chunk_id].metadata) == metadata(chunk)
    done = cli.run("evaluate", "--gold", str(GOLD), "--corpus", str(exported), "--retriever", "bm25")
    assert done.returncode == 0, done.stderr
    return exported


def stored_metadata(chunk: Chunk) -> dict[str, Any]:
    """What the tests store as a record's metadata: the chunk's own, plus its title and id."""
    return {**chunk.metadata, "title": chunk.title, "chunk_id": chunk.id}


def evaluate_store(tmp_path: Path, name: str, retriever: str, options: Sequence[str]) -> dict[str, Any]:
    """``evaluate --retriever`` over the sample's real questions and a synthetic copy of them (so the
    results calibrate), written to ``tmp_path/NAME.json``; returns the results.json read back."""
    synthetic = tmp_path / "synthetic.jsonl"
    if not synthetic.exists():
        records = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
        synthetic.write_text(
            "".join(
                json.dumps(
                    {
                        **record,
                        "query_id": "s-" + record["query_id"],
                        "query": f"in harbord, {record['query']}",
                        "origin": "synthetic",
                    }
                )
                + "\n"
                for record in records
            ),
            encoding="utf-8",
        )
    flags = [item for option in options for item in ("--retriever-option", option)]
    output = tmp_path / f"{name}.json"
    done = cli.run(
        "evaluate", "--gold", str(GOLD), "--gold", str(synthetic), "--corpus", str(CORPUS),
        "--retriever", retriever, *flags, "-o", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return results


def approximate_warnings(results: dict[str, Any]) -> list[str]:
    return [warning for warning in results["warnings"] if "search is approximate" in warning]

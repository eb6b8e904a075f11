"""local-dense's corpus pass: progress while embedding, longest texts first, torch's threads.

No model is loaded: a hashing embedder stands in for all-MiniLM-L6-v2 (the model's own tests are in
test_local_dense.py), so these run in milliseconds.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Chunk, Corpus
from realrecall.evaluate.retrievers import DenseRetriever, RunSettings, build_retriever, local_dense
from support import cli


def corpus_of(n: int) -> Corpus:
    """``n`` chunks whose lengths go up and down, so corpus order is not length order."""
    return Corpus(
        tuple(
            Chunk(f"c{i}", " ".join(f"w{(i * 7 + j) % 50}" for j in range(1 + (i * 37) % 23)))
            for i in range(n)
        )
    )


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[HashingEmbedder]:
    """local-dense building a HashingEmbedder instead of loading the model; the list holds each one built."""
    built: list[HashingEmbedder] = []

    def fake_embedder(path: object, *, batch_size: int = 64) -> HashingEmbedder:
        built.append(HashingEmbedder())
        return built[-1]

    monkeypatch.setattr(local_dense, "SentenceTransformerEmbedder", fake_embedder)
    monkeypatch.setattr(local_dense, "default_model_path", lambda: tmp_path)
    return built


def test_embedding_the_corpus_reports_progress_per_slice(fake_model: list[HashingEmbedder]) -> None:
    seen: list[tuple[int, int]] = []
    settings = RunSettings(use_cache=False, index_progress=lambda done, total: seen.append((done, total)))
    build_retriever("local-dense", corpus_of(600), settings=settings)
    assert seen == [(0, 600), (256, 600), (512, 600), (600, 600)]


def test_the_corpus_goes_out_longest_first_and_comes_back_in_corpus_order(
    fake_model: list[HashingEmbedder],
) -> None:
    corpus = corpus_of(600)
    retriever = build_retriever("local-dense", corpus, settings=RunSettings(use_cache=False))
    lengths = [len(text) for text in fake_model[0].texts_seen]
    # One order for the whole corpus, not one per slice: every slice's texts are no shorter than the next's.
    assert lengths == sorted(lengths, reverse=True)
    assert fake_model[0].calls == 3
    in_corpus_order = DenseRetriever(corpus, HashingEmbedder(), slice_size=256)
    queries = ["w3 w10", "w17 w4 w40", "w1"]
    assert retriever.search(queries, 20) == in_corpus_order.search(queries, 20)


def test_cli_evaluate_shows_an_embedding_bar_then_a_retrieving_bar(
    fake_model: list[HashingEmbedder], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from realrecall.cli import application

    screen = io.StringIO()
    # A terminal, as a user sees it (the bar is not drawn into files or pipes).
    monkeypatch.setattr(application, "err", Console(file=screen, force_terminal=True, width=100))
    chunks = list(corpus_of(300))
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": c.id, "text": c.text}) + "\n" for c in chunks)
    )
    gold = [{"query_id": f"q{i}", "query": chunks[i].text, "gold_ids": [chunks[i].id]} for i in range(250)]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(q) + "\n" for q in gold))
    result = cli.run(
        "evaluate", "--gold", "gold.jsonl", "--corpus", "corpus.jsonl", "--retriever", "local-dense",
        "--cache-dir", "cache", "--origin", "real", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    drawn = screen.getvalue()
    # Both bars were drawn, embedding first (the corpus is embedded before any query is retrieved).
    assert "embedding" in drawn
    assert "retrieving" in drawn
    assert drawn.index("embedding") < drawn.index("retrieving")
    assert "embedding" not in result.stdout


def test_torch_gets_every_cpu_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    threads = SimpleNamespace(n=1)
    fake_torch = SimpleNamespace(
        get_num_threads=lambda: threads.n, set_num_threads=lambda n: setattr(threads, "n", n)
    )
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(local_dense.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    local_dense.use_every_cpu()
    assert threads.n == 3

    threads.n = 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    local_dense.use_every_cpu()
    assert threads.n == 1


def test_threads_are_set_only_when_realrecall_loads_torch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace())
    calls: list[str] = []
    monkeypatch.setattr(local_dense, "use_every_cpu", lambda: calls.append("set"))

    class FakeSentenceTransformers:
        @staticmethod
        def SentenceTransformer(path: str, **kwargs: object) -> object:
            return SimpleNamespace(encode=lambda texts, **kw: np.zeros((len(texts), 4)))

    monkeypatch.setattr(local_dense, "_import_extra", lambda: FakeSentenceTransformers)
    local_dense.SentenceTransformerEmbedder(tmp_path)
    assert calls == []

    monkeypatch.delitem(sys.modules, "torch")  # now realrecall is the one loading torch
    local_dense.SentenceTransformerEmbedder(tmp_path)
    assert calls == ["set"]

"""The catalogue's workspace: one folder of small valid inputs for every command, built once.

Each case gets its own copy (``workspace``) as the current folder, so the case table names files by
their plain relative names (``gold.jsonl``) and a case may break, delete or link any of them.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from cli.harness import run_in_process
from support.fake_openai import FakeOpenAI
from support.questions import http_question_handler

PACKAGE = resources.files("realrecall")
SAMPLE = PACKAGE.joinpath("data")
N_CHUNKS = 24
N_QUERIES = 8

PIPELINE_TOML = """\
[corpus]
path = "corpus.jsonl"

[real]
path = "gold.jsonl"
date = "2026-11-30"

[generate]
output = "pipeline_synth.jsonl"
backend = "extractive"

[evaluate]
k = [1, 5, 10]
by = ["type"]

[calibrate]
metric = "recall@10"

[output]
dir = "runs"
history = "history.jsonl"
"""

TYPE_RULES = """\
default = "conceptual"

[[rules]]
name = "howto"
type = "procedural"
ignore_case = true
pattern = '''\\bhow\\b'''
"""


def _chunks() -> list[dict[str, object]]:
    lines = SAMPLE.joinpath("docs_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[:N_CHUNKS]]


def _gold(
    chunks: list[dict[str, object]], *, prefix: str, origin: str, offset: int
) -> list[dict[str, object]]:
    """Queries whose text is a chunk's section title (so bm25 finds most of them)."""
    queries: list[dict[str, object]] = []
    for i in range(N_QUERIES):
        chunk = chunks[(3 * i + offset) % len(chunks)]
        section = str(chunk["title"]).split(" > ")[-1]
        queries.append(
            {
                "query_id": f"{prefix}{i}",
                "query": f"{section} in Harbor Notes",
                "gold": {chunk["id"]: 1},
                "origin": origin,
                "type": ("lookup", "conceptual")[i % 2],
                "language": "en",
            }
        )
    return queries


def _trec_run(queries: list[dict[str, object]], chunk_ids: list[str]) -> str:
    """A run that ranks each query's gold passage at rank 1, 2 or 3 among four others."""
    lines = []
    for n, query in enumerate(queries):
        gold_id = next(iter(query["gold"]))  # type: ignore[call-overload]
        others = [pid for pid in chunk_ids if pid != gold_id][n % 5 : n % 5 + 4]
        ranked = [*others[: n % 3], gold_id, *others[n % 3 :]]
        for rank, pid in enumerate(ranked, start=1):
            lines.append(f"{query['query_id']} Q0 {pid} {rank} {10 - rank:.1f} fixture")
    return "\n".join(lines) + "\n"


def _query_scores() -> str:
    """Per-query nDCG@10 of four systems on queries 1-12 (run measure qid value, trec_eval -q style)."""
    return "".join(
        f"sys{system}\tndcg_cut_10\t{query}\t{((system * 7 + query * 3) % 10) / 10 + system / 20:.4f}\n"
        for system in range(4)
        for query in range(1, 13)
    )


def _jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _build(folder: Path) -> None:
    chunks = _chunks()
    chunk_ids = [str(chunk["id"]) for chunk in chunks]
    real = _gold(chunks, prefix="q", origin="real", offset=0)
    synthetic = _gold(chunks, prefix="s", origin="synthetic", offset=1)
    files = {
        "corpus.jsonl": _jsonl(chunks),
        "gold.jsonl": _jsonl(real),
        "synth.jsonl": _jsonl(synthetic),
        "run.trec": _trec_run(real + synthetic, chunk_ids),
        "run.jsonl": _jsonl(
            # chunk 23 is no query's gold (those are chunks 0, 3, ..., 21)
            [{"query_id": q["query_id"], "ranked": [next(iter(q["gold"])), chunk_ids[23]]} for q in real]  # type: ignore[call-overload]
        ),
        "qrels.txt": "".join(f"{q['query_id']} 0 {next(iter(q['gold']))} 1\n" for q in real),  # type: ignore[call-overload]
        "answers.jsonl": _jsonl(
            [{"query_id": q["query_id"], "correct": i % 3 != 0} for i, q in enumerate(real)]
        ),
        "prompt.md": PACKAGE.joinpath("prompts", "question_generation.md").read_text(encoding="utf-8"),
        "judge_prompt.md": PACKAGE.joinpath("prompts", "answerability_judge.md").read_text(encoding="utf-8"),
        "tickets.csv": "question,passage\n"
        + "".join(f"how do I use {chunk_ids[i]}?,{chunk_ids[i]}\n" for i in range(6)),
        "type_rules.toml": TYPE_RULES,
        "judgements.jsonl": _jsonl(
            [
                {
                    "query_id": "q0",
                    "passage_id": chunk_ids[5],
                    "grade": 1,
                    "by": "ana",
                    "why": "also answers it",
                }
            ]
        ),
        "pipeline.toml": PIPELINE_TOML,
        "scores.tsv": _query_scores(),
        "scores_human.tsv": _query_scores(),  # a second file: judge ppi refuses one file given twice
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    with contextlib.chdir(folder):
        _must_succeed(
            ["evaluate", "--gold", "gold.jsonl", "--gold", "synth.jsonl", "--corpus", "corpus.jsonl",
             "--k", "1,5,10", "-o", "results.json", "--per-query", "per_query.jsonl"],
            ["evaluate", "--gold", "gold.jsonl", "--gold", "synth.jsonl", "--run", "run.trec",
             "--k", "1,5,10", "-o", "results_b.json"],
            ["run", "pipeline.toml"],
        )  # fmt: skip


def _must_succeed(*commands: list[str]) -> None:
    for args in commands:
        outcome = run_in_process(args, io.StringIO(), io.StringIO())
        if outcome.code != 0:
            raise AssertionError(
                f"building the catalogue workspace: {args} exited {outcome.code}: {outcome.err}"
            )


@pytest.fixture(scope="session")
def catalogue_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The valid inputs every case starts from (built once per session by the CLI itself)."""
    folder = tmp_path_factory.mktemp("catalogue_template")
    _build(folder)
    return folder


@pytest.fixture
def workspace(catalogue_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the template as the current folder, with no model endpoint configured."""
    folder = tmp_path / "w"
    shutil.copytree(catalogue_template, folder, symlinks=True)
    monkeypatch.chdir(folder)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    return folder


@pytest.fixture
def llm_server(workspace: Path, fake_openai: FakeOpenAI) -> FakeOpenAI:
    """The fake OpenAI endpoint answering one valid question per request (after ``workspace`` cleared
    the environment, so its OPENAI_* variables stay set)."""
    fake_openai.chat_handler = http_question_handler
    return fake_openai

"""`realrecall evaluate` end to end: tables, files, and one clear line with exit 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    corpus = tmp_path / "corpus.jsonl"
    chunks = [
        {"id": "c1", "text": "To reset your password open settings and choose reset password."},
        {"id": "c2", "text": "Sync runs every five minutes; conflicts keep both copies."},
        {"id": "c3", "text": "Backups are kept for thirty days before they are deleted."},
        {"id": "c4", "text": "Das Passwort ändern Sie unter Einstellungen."},
    ]
    corpus.write_text("".join(json.dumps(c) + "\n" for c in chunks))
    gold = tmp_path / "gold.jsonl"
    queries = [
        {"query_id": "q1", "query": "reset password", "gold": {"c1": 1}, "origin": "real", "type": "lookup"},
        {"query_id": "q2", "query": "how long are backups kept", "gold_ids": ["c3"], "origin": "real"},
        {"query_id": "q3", "query": "Passwort ändern", "gold": {"c4": 1}, "origin": "real", "language": "de"},
    ]
    gold.write_text("".join(json.dumps(q) + "\n" for q in queries))
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c1 1 2.0 x\nq1 Q0 c2 2 1.0 x\nq2 Q0 c2 1 3.0 x\nq2 Q0 c3 2 2.5 x\n")
    return {"corpus": corpus, "gold": gold, "run": run}


def test_bm25_on_a_small_corpus_prints_a_table_and_writes_both_files(files, tmp_path):
    results, per_query = tmp_path / "results.json", tmp_path / "pq.jsonl"
    done = cli.run(
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["gold"]), "--k", "1,3",
        "--by", "type", "--output", str(results), "--per-query", str(per_query),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "recall@1" in done.stdout
    assert "type=lookup" in done.stdout
    data = json.loads(results.read_text())
    assert data["retriever"]["name"] == "bm25"
    assert data["gold_sets"][0]["overall"]["metrics"]["recall@3"] == 1.0
    assert data["corpus"]["chunks"] == 4
    lines = [json.loads(line) for line in per_query.read_text().splitlines()]
    assert lines[0]["top"][0] == "c1"
    assert lines[0]["first_relevant_rank"] == 1


def test_scoring_a_trec_run_needs_no_corpus(files):
    done = cli.run(
        "evaluate", "--gold", str(files["gold"]), "--run", str(files["run"]), "--metrics", "recall@1,mrr"
    )
    assert done.returncode == 0, done.stderr
    assert "1 of 3 queries have no entry in the run" in done.stderr
    assert "0.3333" in done.stdout  # q1 found at rank 1, q2 at rank 2, q3 missing


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--k", "0,5"], "--k must hold whole numbers >= 1, got [0, 5]"),
        (["--metrics", "recal@10"], "unknown metric 'recal@10'"),
        (["--retriever", "bm26"], "unknown retriever 'bm26'"),
        (["--run", "RUN", "--retriever", "bm25"], "give --run or --retriever, not both"),
    ],
)
def test_bad_options_exit_2_with_one_line(files, args, expected):
    args = [str(files["run"]) if a == "RUN" else a for a in args]
    done = cli.run("evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["gold"]), *args)
    assert done.returncode == 2
    assert expected in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_gold_file_names_file_and_line_and_writes_nothing(files, tmp_path):
    files["gold"].write_text('{"query_id": "q1", "query": "x", "gold": {"c1": 1}}\n{"query_id": "q1"\n')
    results = tmp_path / "results.json"
    done = cli.run(
        "evaluate", "--corpus", str(files["corpus"]), "--gold", str(files["gold"]), "-o", str(results)
    )
    assert done.returncode == 2
    assert f"{files['gold']}:2: malformed JSON" in done.stderr
    assert not results.exists()


def test_retrieving_without_a_corpus_says_what_to_give(files):
    done = cli.run("evaluate", "--gold", str(files["gold"]))
    assert done.returncode == 2
    assert "--corpus is needed to retrieve" in done.stderr


# What must never load at start-up or on `--help` (issue 13, goal 3): numerical and model libraries,
# the clients and the vector stores. A command loads what it runs: scoring a run from files needs numpy
# and nothing else from this list.
_HEAVY = (
    "numpy", "scipy", "pandas", "pyarrow", "openai", "httpx", "tenacity", "sklearn", "chromadb",
    "lancedb", "qdrant_client", "bm25s", "torch", "sentence_transformers", "datasketch", "py3langid",
    "asyncio", "mlflow",
    # typer's rich help renderer and what it pulls in: help is click's plain text (60 ms of --help)
    "typer.rich_utils", "markdown_it", "pygments",
)  # fmt: skip
_COMMANDS = ("evaluate", "generate", "calibrate", "compare", "gold", "corpus", "run", "demo", "history",
             "log", "realism", "agreement", "judge", "plan", "drift")  # fmt: skip
_PROBE = """
import contextlib, io, json, sys
heavy = {heavy!r}
def loaded():
    return sorted(m for m in heavy if m in sys.modules)
import realrecall.cli
from realrecall.cli import main
seen = {{"import realrecall.cli": loaded()}}
for argv in [["--help"], *[[command, "--help"] for command in {commands!r}]]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
    seen[" ".join(argv)] = loaded()
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["evaluate", "--gold", sys.argv[1], "--run", sys.argv[2]])
seen["evaluate --run"] = loaded()
seen["numpy.ma"] = "numpy.ma" in sys.modules
print(json.dumps(seen))
"""


def test_cli_start_up_loads_no_heavy_library(files):
    # `realrecall --help` and every command's --help load none of them; scoring a run loads numpy only
    # (not numpy.ma either, which np.unique would pull in: ~50 ms of a 500-query evaluate).
    code = _PROBE.format(heavy=_HEAVY, commands=_COMMANDS)
    done = subprocess.run(
        [sys.executable, "-c", code, str(files["gold"]), str(files["run"])],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen.pop("evaluate --run") == ["numpy"]
    assert seen.pop("numpy.ma") is False
    assert seen == {name: [] for name in seen}
    assert len(seen) == 2 + len(_COMMANDS)


_BIG_RUN_PROBE = """
import contextlib, io, json, sys
import realrecall.formats.trec_fast as fast
fast.RUN_COLUMNS_MIN_BYTES = 0  # this small run read as a big one is: into Arrow columns
from realrecall.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["evaluate", "--gold", sys.argv[1], "--run", sys.argv[2], "-o", sys.argv[3]])
print(json.dumps({name: name in sys.modules for name in ("pyarrow", "pyarrow.compute", "pandas")}))
"""


def test_scoring_a_run_read_into_columns_loads_pyarrow_but_not_its_compute_module(files, tmp_path):
    # pyarrow.compute wraps every compute function with its docs as it is imported (30-40 ms of CPU,
    # a third of pyarrow's import): the column readers and the run call the functions by name.
    gold = tmp_path / "qrels.txt"
    gold.write_text("q1 0 c1 1\nq2 0 c3 2\nq2 0 c9 1\nq3 0 c4 1\n")
    results = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-c", _BIG_RUN_PROBE, str(gold), str(files["run"]), str(results)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"pyarrow": True, "pyarrow.compute": False, "pandas": False}
    per_query = json.loads(results.read_text())["gold_sets"][0]["per_query"]
    assert per_query["metrics"]["recall@10"] == [1.0, 1.0, 0.0]

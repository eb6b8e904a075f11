"""A fully cached rerun of ``realrecall generate`` over 2,000 chunks, side by side with
``python -c "import numpy, pandas"`` (issue 33, item 7: within 3x its CPU).

    .venv/bin/python benchmarks/bench_cached_rerun.py              # 2,000 chunks, 7 rounds
    .venv/bin/python benchmarks/bench_cached_rerun.py --chunks 500 --rounds 3

A corpus of prose chunks is written to a temporary folder and generated once against the fake
OpenAI-compatible server (tests/support/fake_openai.py, in its own process); then the contenders take
turns, each a fresh process, round after round (load from other processes falls on both alike): the
rerun, which must send no request, and the floor. The medians of their CPU seconds (user + system of
the child) are printed, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

TARGET = 3.0

_TOPICS = ["printer", "badge", "invoice", "backup", "calendar", "password", "parking", "laptop", "travel"]


def write_corpus(path: Path, n: int) -> None:
    """``n`` chunks of everyday prose, in 100 documents, each different."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            topic, other = _TOPICS[i % len(_TOPICS)], _TOPICS[(i // 7) % len(_TOPICS)]
            text = (
                f"Section {i} explains how the {topic} service works for team {i % 23}. When the "
                f"{other} request is approved, the office manager updates the shared list within "
                f"{i % 48 + 1} hours and sends a confirmation to everyone who asked. If nothing "
                f"arrives, open a ticket and mention reference {i * 7919 % 100000}."
            )
            record = {"id": f"chunk-{i:05d}", "text": text, "metadata": {"document": f"doc-{i // 20}"}}
            out.write(json.dumps(record) + "\n")


def timed_cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7, help="turns per contender (median reported)")
    args = parser.parse_args()

    from bench_generate import serve

    queue: multiprocessing.Queue[int] = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(0.0, queue), daemon=True)
    server.start()
    port = queue.get(timeout=60)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "sk-bench-placeholder",
        "COLUMNS": "100",
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            corpus, output = Path(tmp) / "chunks.jsonl", Path(tmp) / "synthetic.jsonl"
            write_corpus(corpus, args.chunks)
            rerun = [sys.executable, "-m", "realrecall", "generate", "--corpus", str(corpus)]
            rerun += ["--output", str(output), "--model", "bench-model", "--concurrency", "64"]
            first = timed_cpu(rerun, env)
            summary = json.loads(output.with_name("synthetic.summary.json").read_text("utf-8"))
            requests = summary["spend"]["requests"]
            print(f"first run: {summary['records']} questions, {requests} requests, {first:.1f} s CPU")
            floor = [sys.executable, "-c", "import numpy, pandas"]
            times: dict[str, list[float]] = {"floor": [], "rerun": []}
            for _ in range(args.rounds):
                times["floor"].append(timed_cpu(floor, env))
                times["rerun"].append(timed_cpu(rerun, env))
                summary = json.loads(output.with_name("synthetic.summary.json").read_text("utf-8"))
                if summary["runs"][-1]["requests"] != 0:
                    raise SystemExit("the rerun sent requests: it is not fully cached")
    finally:
        server.terminate()
    floor_cpu, rerun_cpu = (statistics.median(times[name]) for name in ("floor", "rerun"))
    ratio = rerun_cpu / floor_cpu
    print(f'python -c "import numpy, pandas": {floor_cpu:.3f} s CPU (median of {args.rounds})')
    print(f"cached rerun, {args.chunks} chunks, 0 requests: {rerun_cpu:.3f} s CPU (median of {args.rounds})")
    print(f"ratio {ratio:.2f} (target <= {TARGET:.0f})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

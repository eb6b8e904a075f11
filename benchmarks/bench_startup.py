"""Start-up of the CLI, side by side with ``python -c "import numpy"`` (issue 13, goal 3).

    .venv/bin/python benchmarks/bench_startup.py              # 7 rounds
    .venv/bin/python benchmarks/bench_startup.py --rounds 15

Each contender is a fresh process; the contenders take turns, round after round, so load from other
processes falls on all of them alike, and the median of each is reported: wall seconds and CPU seconds
(user + system of the child). Contenders: ``import numpy`` (the reference), ``realrecall --help``,
each command's ``--help``, and ``realrecall evaluate`` on 500 queries x 100 ids from TREC files
(qrels and run written once into a temporary folder). ``--src FOLDER`` times another checkout's
``src`` (an older commit unpacked with ``git archive``) with the same interpreter, for before/after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

COMMANDS = ["evaluate", "generate", "calibrate", "compare", "gold", "corpus", "run", "log", "realism"]


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="turns per contender (median reported)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src folder to time")
    parser.add_argument("--commands", action="store_true", help="also time each command's --help")
    args = parser.parse_args()

    from bench_scoring import make_data, write_trec

    env = {**os.environ, "PYTHONPATH": str(args.src.resolve()), "COLUMNS": "100"}
    cli = [sys.executable, "-m", "realrecall"]
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = make_data(500, 100, 0)
        qrels_path, run_path = write_trec(qrels, run, Path(tmp))
        contenders = {
            'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
            "realrecall --help": [*cli, "--help"],
            "realrecall evaluate, 500 queries x 100 from files": [
                *cli, "evaluate", "--gold", str(qrels_path), "--run", str(run_path),
            ],
        }  # fmt: skip
        if args.commands:
            for command in COMMANDS:
                contenders[f"realrecall {command} --help"] = [*cli, command, "--help"]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, argv in contenders.items():
                times[name].append(timed(argv, env))
    print(f"src: {args.src}; {args.rounds} rounds, medians")
    reference_cpu = statistics.median(cpu for _, cpu in times['python -c "import numpy"'])
    reference_wall = statistics.median(wall for wall, _ in times['python -c "import numpy"'])
    width = max(len(name) for name in times)
    header = f"{'wall s':>7}  {'cpu s':>7}  {'cpu / numpy':>11}  {'wall / numpy':>12}"
    print(f"  {'contender'.ljust(width)}  {header}")
    for name, rows in times.items():
        wall = statistics.median(w for w, _ in rows)
        cpu = statistics.median(c for _, c in rows)
        print(
            f"  {name.ljust(width)}  {wall:7.3f}  {cpu:7.3f}  {cpu / reference_cpu:11.2f}  "
            f"{wall / reference_wall:12.2f}"
        )
    print("  targets: realrecall --help within 2x import numpy; the 500-query evaluate under 0.35 s wall")


if __name__ == "__main__":
    main()

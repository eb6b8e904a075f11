"""Throughput of `generate` against the fake OpenAI server answering after 200 ms, and a cached rerun.

    .venv/bin/python benchmarks/bench_generate.py [--chunks 2000] [--concurrency 32]

Targets (issue 3): 2,000 chunks at concurrency 32 reach at least 80% of the bound
concurrency / delay = 32 / 0.2 s = 160 requests/s; a fully cached rerun of the same job takes < 2 s.
The server runs in its own process so that it does not share the interpreter lock with the client.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from realrecall.corpus import Chunk, Corpus  # noqa: E402
from realrecall.generate import GenerateConfig, generate  # noqa: E402
from realrecall.llm import ChatRequest, ChatResult, LLMConfig, OpenAIChatClient, Usage  # noqa: E402
from support.fake_openai import FakeOpenAI  # noqa: E402
from support.questions import http_question_handler  # noqa: E402


class SleepingClient:
    """A ChatClient that answers after ``delay`` with no HTTP at all: the generate stage's own overhead."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def complete(self, request: ChatRequest) -> ChatResult:
        await asyncio.sleep(self.delay)
        text = http_question_handler(request.to_body())
        return ChatResult(text, "stop", Usage(400, 20), request.model, 1, None, "json_schema")


def serve(delay: float, port_queue: multiprocessing.Queue) -> None:
    from support import fake_openai

    # The fake writes a reply's headers and body in two sends; with Nagle's algorithm on, the body
    # waits for the client's delayed ACK of the headers (about 40 ms a reply on Linux), which is
    # the server's cost, not the client's. (Worth setting in the fake itself.)
    fake_openai._Handler.disable_nagle_algorithm = True
    server = FakeOpenAI(delay=delay)
    server.chat_handler = http_question_handler
    server.start()
    port_queue.put(server.port)
    threading.Event().wait()


def make_corpus(n: int) -> Corpus:
    return Corpus(
        tuple(
            Chunk(
                id=f"chunk-{i:05d}",
                text=f"Section {i}: the office printer queue {i} is emptied every {i % 60} minutes; "
                f"ask desk {i % 17} for a badge to reach floor {i % 9}.",
                metadata={"document": f"doc-{i // 20}"},
            )
            for i in range(n)
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(args.delay, ports), daemon=True)
    server.start()
    base_url = f"http://127.0.0.1:{ports.get(timeout=30)}/v1"
    corpus = make_corpus(args.chunks)
    config = GenerateConfig(concurrency=args.concurrency)
    client = OpenAIChatClient(LLMConfig(base_url=base_url, api_key_env="REALRECALL_BENCH_KEY"))
    bound = args.concurrency / args.delay
    try:
        with tempfile.TemporaryDirectory() as folder:
            output = Path(folder) / "synthetic.jsonl"
            started, cpu = time.perf_counter(), time.process_time()
            summary = generate(corpus, output, config, client=client)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            stage = summary.stage("generation")
            assert stage is not None
            rate = stage.requests / elapsed
            started = time.perf_counter()
            cached = generate(corpus, output, config, client=client)
            rerun = time.perf_counter() - started
    finally:
        server.kill()
    print(f"chunks: {args.chunks}, concurrency: {args.concurrency}, server delay: {args.delay * 1000:.0f} ms")
    print(f"first run: {stage.requests} requests, {summary.total} questions in {elapsed:.2f} s")
    print(f"client CPU: {cpu:.2f} s = {cpu / max(1, stage.requests) * 1000:.1f} ms a request")
    print(
        f"throughput: {rate:.1f} requests/s = {rate / bound:.0%} of the bound {bound:.0f}/s (target >= 80%)"
    )
    print(f"cached rerun: {rerun:.2f} s, {cached.stage('generation').requests} requests (target < 2 s)")
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        alone = generate(corpus, Path(folder) / "s.jsonl", config, client=SleepingClient(args.delay))
        stage_rate = alone.stage("generation").requests / (time.perf_counter() - started)
    print(
        f"generate stage alone (in-process client sleeping {args.delay * 1000:.0f} ms, no HTTP): "
        f"{stage_rate:.1f} requests/s = {stage_rate / bound:.0%} of the bound"
    )
    ok = rate >= 0.8 * bound and rerun < 2.0 and cached.stage("generation").requests == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A few checks of the fake server itself: meaningful embeddings, concurrency, running as a process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from support.fake_openai import FakeOpenAI, answer_together, fake_embedding


def post_chat(base_url: str) -> dict:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_texts_sharing_words_embed_closer_than_unrelated_texts() -> None:
    query = fake_embedding("capital city of France")
    related = fake_embedding("Paris is the capital of France")
    unrelated = fake_embedding("photosynthesis in green plants")
    assert float(query @ related) > float(query @ unrelated) + 0.2
    assert np.isclose(np.linalg.norm(related), 1.0)
    assert np.array_equal(fake_embedding("Same Text"), fake_embedding("same text"))


def test_serves_32_requests_at_once() -> None:
    with FakeOpenAI() as server:
        server.chat_handler = answer_together(32)  # no answer until all 32 are in at once
        with ThreadPoolExecutor(max_workers=32) as pool:
            answers = list(pool.map(lambda _: post_chat(server.base_url), range(32)))
    assert len(answers) == 32
    assert server.count("chat") == 32


def test_runs_as_a_process_and_writes_its_port(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    script = Path(__file__).resolve().parents[1] / "support" / "fake_openai.py"
    process = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        printed = process.stdout.readline().strip() if process.stdout else ""
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        port = port_file.read_text().strip()
        assert port == printed
        answer = post_chat(f"http://127.0.0.1:{port}/v1")
        assert answer["choices"][0]["message"]["content"]
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stdout:
            process.stdout.close()

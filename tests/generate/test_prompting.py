"""Issue 12 items 1, 2 and 6: situation-first generation, query forms with a target mix, and the overlap
(identifiers counted apart) stored per question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generate.fakes import FakeChatClient
from realrecall.corpus import Chunk, Corpus
from realrecall.generate import GenerateConfig, generate
from realrecall.llm.types import ChatRequest

API_PASSAGE = "Pass n_results to collection.query to limit the matches; where_document filters the text."


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def api_corpus() -> Corpus:
    return Corpus((Chunk(id="api", text=API_PASSAGE, title="", metadata={}),), path="memory")


def test_identifiers_do_not_count_toward_the_overlap_filter_and_both_are_stored(tmp_path):
    def answer(request: ChatRequest) -> str:
        return json.dumps(
            {"question": "how do I get fewer hits back from collection.query, is it n_results?"}
        )

    output = tmp_path / "s.jsonl"
    config = GenerateConfig(max_overlap=0.3, max_attempts=1)
    summary = generate(api_corpus(), output, config, client=FakeChatClient(answer))
    assert summary.total == 1  # the old measure counted 3 of 6 content stems copied: 0.5 > 0.3
    [record] = records(output)
    assert record["provenance"]["overlap"] == 0.0
    assert record["provenance"]["identifier_overlap"] == 1.0

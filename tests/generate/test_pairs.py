"""Questions over two chunks (issue 12 item 5): related chunks, the pair prompt, gold holding both.

Regenerate the golden file after a deliberate prompt change with:
    REALRECALL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/generate/test_pairs.py
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, estimate, generate
from realrecall.generate.dry_run import token_counter
from realrecall.generate.pairs import PAIR_TYPES, pair_chunks
from realrecall.generate.planner import Slot, plan_slots
from realrecall.generate.sources import question_messages
from realrecall.generate.templates import builtin_prompt
from realrecall.llm.types import ChatRequest

GOLDEN = Path(__file__).parent / "golden" / "question_generation_pair.txt"
DIRECT_PROMPT = Path(str(resources.files("realrecall").joinpath("prompts", "question_generation.md")))
GENERATOR = {"backend": "llm", "model": "m"}


def doc_chunks() -> list[Chunk]:
    plans, printing = {"document": "plans"}, {"document": "print"}
    return [
        Chunk("a1", "The free plan keeps files for thirty days.", metadata=plans),
        Chunk("a2", "The team plan keeps files for a year and adds shared folders.", metadata=plans),
        Chunk("b1", "Printers on floor two need the driver from the intranet.", metadata=printing),
    ]


def test_a_chunk_s_partner_is_the_next_of_its_document_else_the_most_similar():
    chunks = doc_chunks()
    similar = Chunk("b2", "Printers on floor three need the same driver from the intranet page.")
    corpus = [*chunks, similar, Chunk("c1", "Lunch is served at noon in the canteen.")]
    pairing = pair_chunks(corpus, corpus)
    assert pairing.partners["a1"].id == "a2"
    assert pairing.partners["a2"].id == "a1"  # the last of its document takes the one before
    assert pairing.relations["a1"] == "same_document"
    assert pairing.partners["b2"].id == "b1"
    assert pairing.relations["b2"] == "similar"
    assert "c1" not in pairing.partners  # nothing related: one-chunk questions only


def test_the_multi_chunk_share_of_slots_is_drawn_apart_and_keeps_other_keys():
    chunks = [Chunk(f"c{i}", f"Text {i}.", metadata={"document": "d"}) for i in range(200)]
    partners = {chunk.id: chunks[(index + 1) % len(chunks)] for index, chunk in enumerate(chunks)}
    plain = plan_slots(chunks, GenerateConfig(), GENERATOR, partners=partners)
    mixed = plan_slots(chunks, GenerateConfig(multi_chunk=0.2), GENERATOR, partners=partners)
    paired = [slot for slot in mixed if slot.partner is not None]
    assert 25 <= len(paired) <= 55  # about 20% of 200
    assert {slot.type for slot in paired} <= set(PAIR_TYPES)
    single = {slot.key for slot in mixed if slot.partner is None}
    assert single <= {slot.key for slot in plain}  # the one-chunk slots are the ones planned before


def test_the_pair_prompt_renders_as_golden():
    first, second = doc_chunks()[:2]
    slot = Slot(first, 0, "comparison", "en", None, key="k", partner=second)
    messages = question_messages(
        builtin_prompt("question_generation_pair"), slot, "- how long are files kept"
    )
    text = "".join(f"=== {m['role']} ===\n{m['content']}\n" for m in messages)
    if os.environ.get("REALRECALL_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.read_text(encoding="utf-8") == text


def comparing(request: ChatRequest) -> str:
    return json.dumps({"question": f"what do I lose on the cheaper subscription {request.seed}"})


def test_a_question_over_two_chunks_has_both_in_its_gold(tmp_path):
    corpus = Corpus(tuple(doc_chunks()))
    client = FakeChatClient(comparing)
    output = tmp_path / "synthetic.jsonl"
    config = GenerateConfig(prompt=DIRECT_PROMPT, multi_chunk=1.0)
    generate(corpus, output, config, client=client)
    records = {json.loads(line)["query_id"]: json.loads(line) for line in output.read_text().splitlines()}
    assert records["syn-a1-0"]["gold"] == {"a1": 1, "a2": 1}
    assert records["syn-a1-0"]["pair"] == {"chunk": "a2", "relation": "same_document"}
    assert records["syn-a1-0"]["requested_type"] in PAIR_TYPES
    assert records["syn-b1-0"]["gold"] == {"b1": 1}  # no related chunk: a one-chunk question
    pair_request = next(
        r for r in client.generation_requests() if "needs both passages" in r.messages[-1]["content"]
    )
    shown = pair_request.messages[-1]["content"]
    assert "thirty days" in shown  # both passages are in the request
    assert "a year" in shown


def test_questions_over_two_chunks_carry_evidence_for_both_when_chunks_name_their_document(tmp_path):
    chunks = [
        Chunk("a1", "The free plan keeps files for thirty days.", doc_id="plans", start=0, end=42),
        Chunk("a2", "The team plan keeps files for a year.", doc_id="plans", start=43, end=80),
    ]
    output = tmp_path / "synthetic.jsonl"
    config = GenerateConfig(prompt=DIRECT_PROMPT, multi_chunk=1.0)
    generate(Corpus(tuple(chunks)), output, config, client=FakeChatClient(comparing))
    record = json.loads(output.read_text().splitlines()[0])
    assert [(item["doc_id"], item.get("chunk_id")) for item in record["evidence"]] == [
        ("plans", "a1"),
        ("plans", "a2"),
    ]


def test_multi_chunk_needs_a_model_and_a_share():
    with pytest.raises(InputError, match="need a model"):
        GenerateConfig(backend="extractive", multi_chunk=0.2)
    with pytest.raises(InputError, match="multi_chunk must be a share"):
        GenerateConfig(multi_chunk=1.5)


@pytest.mark.parametrize("strategy", ["situation", "direct"])
def test_the_dry_run_counts_one_pair_prompt_request_for_a_question_over_two_chunks(tmp_path, strategy):
    corpus = Corpus(tuple(doc_chunks()[:2]), path="memory")
    config = GenerateConfig(multi_chunk=1.0, strategy=strategy)
    result = estimate(corpus, tmp_path / "s.jsonl", config)
    assert (result.pending, result.requests) == (2, 2)  # the pair prompt writes them, in one call each
    client = FakeChatClient(comparing)
    generate(corpus, tmp_path / "s.jsonl", config, client=client)
    assert len(client.requests) == result.requests
    asked = sum(
        count_tokens(message["content"]) + 4 for request in client.requests for message in request.messages
    )
    assert asked == result.tokens_in  # the messages counted are the ones sent


def count_tokens(text: str) -> int:
    return token_counter("gpt-4o-mini")[0](text)

"""Questions over two chunks (issue 12 item 5): related chunks, the pair prompt, gold holding both.

Regenerate the golden file after a deliberate prompt change with:
    REALRECALL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/generate/test_pairs.py
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient, paraphrase
from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, estimate, generate
from realrecall.generate.dry_run import token_counter
from realrecall.generate.forms import FormChoice
from realrecall.generate.pairs import PAIR_TYPES, pair_chunks
from realrecall.generate.planner import Slot, plan_slots
from realrecall.generate.sources import question_messages
from realrecall.generate.templates import builtin_prompt
from realrecall.llm.types import ChatRequest
from support import cli

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
        builtin_prompt("question_generation_pair"),
        slot,
        "- how long are files kept",
        form_instruction=FormChoice("keywords", 4).instruction,
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


@pytest.mark.parametrize(("strategy", "calls"), [("situation", 2), ("direct", 1)])
def test_the_dry_run_counts_the_requests_of_a_question_over_two_chunks(tmp_path, strategy, calls):
    corpus = Corpus(tuple(doc_chunks()[:2]), path="memory")
    config = GenerateConfig(multi_chunk=1.0, strategy=strategy)
    result = estimate(corpus, tmp_path / "s.jsonl", config)
    # Situation first: step 1 over both passages, then the query; direct: the pair prompt, one call.
    assert (result.pending, result.requests) == (2, 2 * calls)
    client = FakeChatClient(comparing if strategy == "direct" else paraphrase)
    generate(corpus, tmp_path / "s.jsonl", config, client=client)
    assert len(client.requests) == result.requests
    asked = sum(
        count_tokens(message["content"]) + 4 for request in client.requests for message in request.messages
    )
    if strategy == "direct":  # situation first, step 2 is counted on a stand-in situation
        assert asked == result.tokens_in  # the messages counted are the ones sent


def count_tokens(text: str) -> int:
    return token_counter("gpt-4o-mini")[0](text)


# --- issue 33 item 3: situation first over two chunks, forms honoured, pairs counted --------------


def generation_text(request: ChatRequest) -> str:
    return "\n".join(message["content"] for message in request.messages)


def test_a_question_over_two_chunks_is_written_situation_first_and_its_writer_sees_neither_passage(
    tmp_path,
):
    chunks = doc_chunks()
    client = FakeChatClient()
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(strategy="situation", multi_chunk=1.0)
    generate(Corpus(tuple(chunks)), output, config, client=client)
    records = {json.loads(line)["query_id"]: json.loads(line) for line in output.read_text().splitlines()}
    record = records["syn-a1-0"]
    assert record["gold"] == {"a1": 1, "a2": 1}
    steps = [request for request in client.requests if chunks[0].text in generation_text(request)]
    step_one = steps[0]
    assert step_one.schema_name == "situation"
    assert set(step_one.json_schema["required"]) == {"user", "situation", "answer", "answer_b"}
    assert chunks[1].text in generation_text(step_one)  # step 1 sees both passages
    queries = [request for request in client.requests if request.schema_name == "question"]
    assert len(queries) == 3
    for request in queries:  # no writer of a query sees either passage, nor the titles
        text = generation_text(request)
        assert "<passage>" not in text
        assert all(chunk.text not in text for chunk in chunks)
    provenance = record["provenance"]
    assert provenance["strategy"] == "situation"
    assert provenance["prompts"]["situation"]["name"] == "situation_pair"
    assert provenance["situation"]["answer"] in chunks[0].text
    assert provenance["situation"]["answer_b"] in chunks[1].text
    assert record["requested_type"] in PAIR_TYPES
    # Each chunk's evidence is its own passage's quote.
    assert [item["text"] for item in record["evidence"]] == [
        provenance["situation"]["answer"],
        provenance["situation"]["answer_b"],
    ]


def test_a_pair_situation_whose_second_quote_is_not_in_the_partner_is_replaced(tmp_path):
    chunks = doc_chunks()[:2]
    made_up = json.dumps(
        {
            "user": "a manager",
            "situation": "I must pick a subscription for my group",
            "answer": chunks[0].text,
            "answer_b": "premium support answers within four business hours",
        }
    )
    client = FakeChatClient()
    client.script.append(made_up)
    config = GenerateConfig(strategy="situation", multi_chunk=1.0, per_chunk=1)
    summary = generate(Corpus(tuple(chunks)), tmp_path / "s.jsonl", config, client=client)
    assert summary.stage("generation").failures == {"answer_not_in_passage": 1}
    assert summary.total == 2


@pytest.mark.parametrize("strategy", ["situation", "direct"])
def test_a_question_over_two_chunks_is_asked_in_the_form_it_records(tmp_path, strategy):
    chunks = [
        Chunk(
            f"d{i}",
            f"Plan {i} keeps files for {i} days and offers {i} shared folders.",
            metadata={"document": "p"},
        )
        for i in range(12)
    ]
    client = FakeChatClient(paraphrase if strategy == "situation" else comparing)
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(strategy=strategy, multi_chunk=1.0, forms={"keywords": 1, "statement": 1})
    generate(Corpus(tuple(chunks)), output, config, client=client)
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert all("pair" in record for record in records)
    asked = [
        re.search(r"Form of the (?:query|question): (\w+)", generation_text(request)).group(1)  # type: ignore[union-attr]
        for request in client.requests
        if request.schema_name == "question"
    ]
    assert sorted(asked) == sorted(record["requested_form"] for record in records)
    assert set(asked) == {"keywords", "statement"}


def test_the_summary_counts_pairs_drawn_planned_made_and_why_not(tmp_path):
    unrelated = [
        Chunk("u1", "Lunch is served at noon in the canteen on the ground floor."),
        Chunk("u2", "Parking permits are renewed every January at the front desk."),
    ]
    corpus_path = tmp_path / "chunks.jsonl"
    rows = [{"id": chunk.id, "text": chunk.text} for chunk in [*unrelated, *doc_chunks()]]
    rows[2]["document"] = rows[3]["document"] = "plans"
    corpus_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(strategy="situation", multi_chunk=1.0)
    summary = generate(load_corpus(corpus_path), output, config, client=FakeChatClient())
    expected = {"drawn": 5, "planned": 2, "made": 2, "not_made": {"no_partner": 3, "not_kept": 0}}
    assert summary.pairs == expected
    written = json.loads(output.with_name("s.summary.json").read_text())
    assert written["pairs"] == expected
    assert any("3 of 5 question(s) drawn to be over two chunks" in warning for warning in summary.warnings)
    # Without --multi-chunk nothing is said about pairs.
    plain = generate(
        load_corpus(corpus_path), tmp_path / "p.jsonl", GenerateConfig(), client=FakeChatClient()
    )
    assert plain.pairs == {}
    assert "pairs" not in json.loads((tmp_path / "p.summary.json").read_text())


def test_the_cli_prints_the_pair_counts(fake_openai, tmp_path):
    corpus_path = tmp_path / "chunks.jsonl"
    rows = [
        {"id": "a", "text": "The free plan keeps files for thirty days.", "document": "plans"},
        {
            "id": "b",
            "text": "The team plan keeps files for a year and adds shared folders.",
            "document": "plans",
        },
        {"id": "c", "text": "Lunch is served at noon in the canteen on the ground floor."},
    ]
    corpus_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = tmp_path / "s.jsonl"
    done = cli.run("generate", "--corpus", str(corpus_path), "--output", str(output), "--multi-chunk", "1")
    assert done.returncode == 0, done.stderr
    assert (
        "questions over two chunks: 2 made of 2 planned, 3 drawn (no related chunk 1, not kept 0)"
        in done.stdout
    )
    assert "1 of 3 question(s) drawn to be over two chunks (--multi-chunk) were asked over one" in done.stderr

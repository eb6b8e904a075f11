"""Issue 12 items 1, 2 and 6: situation-first generation, query forms with a target mix, and the overlap
(identifiers counted apart) stored per question."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from generate.fakes import FakeChatClient, make_corpus, paraphrase, passage_of
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError, RealrecallError
from realrecall.evaluate.results import generator_of
from realrecall.generate import GenerateConfig, estimate, generate
from realrecall.generate.forms import DEFAULT_FORMS, FormPlan, plan_forms
from realrecall.generate.situation import (
    MIN_QUOTE_WORDS,
    VERBATIM_WORDS,
    Situation,
    answer_in_passage,
    copies_passage,
    parse_situation,
    situation_overlap,
    strategy_prompt_ref,
)
from realrecall.generate.templates import builtin_prompt
from realrecall.labels import default_type_rules
from realrecall.llm import LLMConfig, OpenAIChatClient
from realrecall.llm.types import ChatRequest
from realrecall.settings import setting_fields, settings_from
from realrecall.text_features import lexical_overlap
from support import cli
from support.fake_openai import FakeOpenAI
from support.questions import (
    EVERYDAY,
    http_question_handler,
    is_situation_request,
    passage_in,
    question_for_seed,
    situation_for_seed,
)

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
    config = GenerateConfig(max_overlap=0.3, max_attempts=1, strategy="direct")
    summary = generate(api_corpus(), output, config, client=FakeChatClient(answer))
    assert summary.total == 1  # the old measure counted 3 of 6 content stems copied: 0.5 > 0.3
    [record] = records(output)
    assert record["provenance"]["overlap"] == 0.0
    assert record["provenance"]["identifier_overlap"] == 1.0


# --- situation-first generation, against the recording fake endpoint ------------------------------


@pytest.fixture
def server(fake_openai: FakeOpenAI) -> FakeOpenAI:
    fake_openai.chat_handler = http_question_handler
    return fake_openai


@pytest.fixture
def client(server: FakeOpenAI) -> OpenAIChatClient:
    return OpenAIChatClient(
        LLMConfig(base_url=server.base_url, timeout=5.0, max_attempts=2, initial_wait=0.01)
    )


def contents(body: dict[str, Any]) -> str:
    return "\n".join(str(message["content"]) for message in body["messages"])


def test_situation_first_is_the_default_and_the_second_step_never_sees_the_passage(server, client, tmp_path):
    corpus = make_corpus(3)
    output = tmp_path / "s.jsonl"
    summary = generate(corpus, output, GenerateConfig(concurrency=1), client=client)
    assert summary.total == 3
    bodies = server.bodies("chat")
    assert len(bodies) == 6  # two steps a question
    for chunk, (first, second) in zip(corpus, zip(bodies[::2], bodies[1::2], strict=True), strict=True):
        assert first["response_format"]["json_schema"]["name"] == "situation"
        assert "<passage>\n" + chunk.text + "\n</passage>" in contents(first)
        assert second["response_format"]["json_schema"]["name"] == "question"
        # Neither the passage, nor its title, nor any sentence of it reaches the query step.
        assert "<passage>" not in contents(second)
        assert chunk.title not in contents(second)
        assert all(
            sentence.strip() not in contents(second) for sentence in chunk.text.split(".") if sentence.strip()
        )
        situation = json.loads(server_answer(first))["situation"]
        assert situation in contents(second)
    record = records(output)[0]
    provenance = record["provenance"]
    situation_prompt, query_prompt = builtin_prompt("situation"), builtin_prompt("situation_query")
    assert provenance["strategy"] == "situation"
    assert provenance["prompts"] == {
        "situation": {"name": "situation", "sha256": situation_prompt.sha256},
        "query": {"name": "situation_query", "sha256": query_prompt.sha256},
    }
    assert provenance["prompt"] == strategy_prompt_ref(situation_prompt, query_prompt).to_dict()
    assert provenance["situation"]["answer"] in corpus["c0"].text
    assert provenance["usage"]["prompt_tokens"] > 0
    # A rerun replays both steps from the cache.
    generate(corpus, output, GenerateConfig(concurrency=1), client=client)
    assert server.count("chat") == 6


def server_answer(body: dict[str, Any]) -> str:
    """What http_question_handler answers to ``body`` (it is a pure function of the body)."""
    return http_question_handler(body)


def test_the_strategy_is_part_of_the_generator_and_the_cache_key(server, client, tmp_path):
    corpus = make_corpus(2)
    situation_out, direct_out = tmp_path / "situation.jsonl", tmp_path / "direct.jsonl"
    generate(corpus, situation_out, GenerateConfig(), client=client)
    generate(corpus, direct_out, GenerateConfig(strategy="direct"), client=client)
    situation_record, direct_record = records(situation_out)[0], records(direct_out)[0]
    assert situation_record["provenance"]["slot_key"] != direct_record["provenance"]["slot_key"]
    assert direct_record["provenance"]["strategy"] == "direct"
    assert direct_record["provenance"]["prompt"]["name"] == "question_generation"
    generators = {
        generator_of(SimpleNamespace(fields={"provenance": record["provenance"]}))  # type: ignore[arg-type]
        for record in (situation_record, direct_record)
    }
    assert len(generators) == 2


def test_a_stated_answer_not_in_the_passage_asks_for_a_new_situation(tmp_path):
    made_up = json.dumps({"user": "a clerk", "situation": "I need the fax number", "answer": "Call 555-0100"})
    client = FakeChatClient()
    client.script.append(made_up)
    output = tmp_path / "s.jsonl"
    summary = generate(make_corpus(1), output, GenerateConfig(), client=client)
    assert summary.total == 1
    assert summary.stage("generation").failures == {"answer_not_in_passage": 1}
    situations = [r for r in client.requests if r.schema_name == "situation"]
    assert len(situations) == 2
    assert situations[0].seed != situations[1].seed
    assert records(output)[0]["provenance"]["attempt"] == 1


def test_a_rejected_query_is_asked_again_from_the_same_situation_without_the_passage(tmp_path):
    corpus = make_corpus(1)
    copied = json.dumps({"question": "Topic0 configuration lives in settings file number 0"})
    client = FakeChatClient()
    client.script.extend([situation_for_seed(1, corpus["c0"].text), copied])
    config = GenerateConfig(max_overlap=0.5)
    summary = generate(corpus, tmp_path / "s.jsonl", config, client=client)
    assert summary.total == 1
    assert summary.filtered == {"overlap": 1}
    assert [r.schema_name for r in client.requests] == ["situation", "question", "question"]
    retry = client.requests[-1]
    assert "copies the passage's own words" in retry.messages[-1]["content"]
    assert copied in [m["content"] for m in retry.messages]  # the rejected answer, shown back
    assert "<passage>" not in "\n".join(m["content"] for m in retry.messages)


def test_with_the_judge_the_final_query_is_checked_against_the_passage(tmp_path):
    def answer(request: ChatRequest) -> str:
        if request.schema_name == "verdict":
            return json.dumps({"answerable": "laptop" not in request.messages[-1]["content"], "reason": "r"})
        if request.schema_name == "situation":
            # No quote of the passage: with the judge the stated answer is not what is checked.
            return json.dumps({"user": "u", "situation": f"my problem {request.seed}", "answer": ""})
        judged = any(r.schema_name == "verdict" for r in client.requests)
        return json.dumps({"question": f"nightly copies when {request.seed}" if judged else "laptop slow?"})

    client = FakeChatClient(answer)
    summary = generate(make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(judge=True), client=client)
    assert summary.total == 1
    assert summary.filtered == {"unanswerable": 1}
    verdicts = [r for r in client.requests if r.schema_name == "verdict"]
    assert "laptop slow?" in verdicts[0].messages[-1]["content"]
    # An unanswerable query starts again from a new situation.
    assert [r.schema_name for r in client.requests].count("situation") == 2


def test_a_prompt_file_means_the_direct_strategy_and_situation_with_a_prompt_is_refused(tmp_path):
    assert GenerateConfig(prompt=tmp_path / "mine.md").effective_strategy == "direct"
    assert GenerateConfig().effective_strategy == "situation"
    assert GenerateConfig(backend="extractive").effective_strategy is None
    with pytest.raises(InputError, match="--strategy direct"):
        GenerateConfig(prompt=tmp_path / "mine.md", strategy="situation")
    with pytest.raises(InputError, match="unknown strategy 'both'"):
        GenerateConfig(strategy="both")
    assert settings_from(GenerateConfig, {"strategy": "direct"}).strategy == "direct"


def test_dry_run_shows_the_cost_of_each_strategy(server, tmp_path):
    corpus_path = tmp_path / "chunks.jsonl"
    rows = [
        {"id": f"a{i}", "text": f"The printer on floor {i} jams on A3 paper unless the tray is set."}
        for i in range(2)
    ]
    corpus_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["--corpus", str(corpus_path), "--output", str(tmp_path / "s.jsonl"), "--dry-run"]
    done = cli.run("generate", *args, "--price-in", "1", "--price-out", "2")
    assert done.returncode == 0, done.stderr
    assert "requests: 4 " in done.stdout
    assert "strategy situation (this run): 4 requests" in done.stdout
    assert "strategy direct (--strategy direct): 2 requests" in done.stdout
    direct = cli.run("generate", *args, "--strategy", "direct")
    assert "strategy direct (this run): 2 requests" in direct.stdout
    assert server.count("chat") == 0
    estimate_ = estimate(make_corpus(2), tmp_path / "x.jsonl", GenerateConfig())
    assert estimate_.strategies[0].strategy == "situation"  # the run's own first, then the registry's others
    by_name = {row.strategy: row for row in estimate_.strategies}
    situation, direct_estimate = by_name["situation"], by_name["direct"]
    assert situation.requests == 2 * direct_estimate.requests
    assert situation.tokens_out > direct_estimate.tokens_out


def test_situation_first_through_the_batch_api_takes_one_batch_a_step(server, tmp_path):
    corpus_path = tmp_path / "chunks.jsonl"
    rows = [
        {"id": f"b{i}", "text": f"Desk {i} has a printer that prints both sides when asked to."}
        for i in range(3)
    ]
    corpus_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = tmp_path / "s.jsonl"
    args = ["--corpus", str(corpus_path), "--output", str(output), "--batch", "--poll-interval", "0.01"]
    done = cli.run("generate", *args)
    assert done.returncode == 0, done.stderr
    assert len(records(output)) == 3
    assert server.count("batches") == 2
    assert server.count("chat") == 0
    assert all(record["provenance"]["strategy"] == "situation" for record in records(output))


def copying_step_one(copies: int, *, shuffled: bool = False):
    """A chat handler for the fake endpoint whose step 1 copies the passage into the situation for the
    first ``copies`` situations of each chunk (``shuffled``: its words in reverse order, no run of the
    passage left), then writes one in everyday words; step 2 answers a valid question."""
    asked: Counter[str] = Counter()

    def handler(body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        if not is_situation_request(messages):
            return http_question_handler(body)
        passage = passage_in(messages)
        asked[passage] += 1
        if asked[passage] <= copies:
            words = passage.split()
            copied = " ".join(reversed(words[:-1]) if shuffled else words[:-1])
            return json.dumps({"user": "a reader", "situation": copied, "answer": " ".join(words[:12])})
        return situation_for_seed(int(body.get("seed") or 0), passage)

    return handler


def test_a_situation_that_copies_the_passage_is_rejected_before_any_query_is_asked(server, client, tmp_path):
    server.chat_handler = copying_step_one(copies=1)
    corpus = make_corpus(3)
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(max_overlap=0.5, concurrency=1)
    summary = generate(corpus, output, config, client=client)
    assert summary.total == 3
    assert summary.stage("generation").failures == {"situation_overlap": 3}
    bodies = server.bodies("chat")
    steps = [body["response_format"]["json_schema"]["name"] for body in bodies]
    assert steps == ["situation", "situation", "question"] * 3  # no query from a copied situation
    for chunk in corpus:
        copied = " ".join(chunk.text.split()[:-1])
        # The new situation is asked for with the copied one shown back and why.
        retry = next(b for b in bodies if copied in contents(b) and "cannot be used" in contents(b))
        assert "the passage's own words" in contents(retry)
        assert retry["messages"][-2] == {
            "role": "assistant",
            "content": json.dumps(
                {"user": "a reader", "situation": copied, "answer": " ".join(chunk.text.split()[:12])}
            ),
        }
        assert all(
            copied not in contents(b)
            for b in bodies
            if "situation" not in b["response_format"]["json_schema"]["name"]
        )
    for record in records(output):
        assert record["provenance"]["situation_overlap"] <= 0.5
        assert record["provenance"]["attempt"] == 1


def test_a_step_one_that_always_copies_never_reaches_step_two(server, client, tmp_path):
    server.chat_handler = copying_step_one(copies=99)
    config = GenerateConfig(max_overlap=0.5, max_attempts=3)
    with pytest.raises(RealrecallError, match="situation_overlap: 3"):
        generate(make_corpus(1), tmp_path / "s.jsonl", config, client=client)
    steps = [body["response_format"]["json_schema"]["name"] for body in server.bodies("chat")]
    assert steps == ["situation"] * 3
    [failure] = records(tmp_path / "s.failures.jsonl")
    assert failure["rejections"] == ["situation_overlap"] * 3


def test_the_situation_overlap_is_stored_without_a_bound_and_a_tightened_bound_replaces_it(
    server, client, tmp_path
):
    server.chat_handler = copying_step_one(copies=1, shuffled=True)  # the passage's words, no run of it
    corpus = make_corpus(1)
    output = tmp_path / "s.jsonl"
    unbounded = generate(corpus, output, GenerateConfig(), client=client)
    [record] = records(output)
    assert record["provenance"]["situation_overlap"] > 0.9  # kept: no bound was set ("reader" is new)
    # ... but not silently.
    assert any(
        "1 of 1 question(s) were written from a situation that reuses the passage's words" in warning
        and "--max-overlap" in warning
        for warning in unbounded.warnings
    )
    assert set(record["provenance"]["situation"]["situation"].split()) < set(corpus["c0"].text.split())
    requests = server.count("chat")
    summary = generate(corpus, output, GenerateConfig(max_overlap=0.5), client=client)
    assert (summary.removed, summary.added) == (1, 1)  # replaced, as a question above the bound is
    assert not any("reuses the passage's words" in warning for warning in summary.warnings)
    [record] = records(output)
    assert record["provenance"]["situation_overlap"] <= 0.5
    # Step 1 was replayed from the cache, rejected, and a new situation asked for with feedback.
    new = server.bodies("chat")[requests:]
    assert [b["response_format"]["json_schema"]["name"] for b in new] == ["situation", "question"]
    assert "the passage's own words" in contents(new[0])


def test_a_situation_holding_eight_words_of_the_passage_in_a_row_is_rejected_without_a_bound(
    server, client, tmp_path
):
    server.chat_handler = copying_step_one(copies=1)
    corpus = make_corpus(2)
    output = tmp_path / "s.jsonl"
    summary = generate(corpus, output, GenerateConfig(concurrency=1), client=client)
    assert summary.total == 2
    assert summary.stage("generation").failures == {"situation_verbatim": 2}
    bodies = server.bodies("chat")
    queries = [b for b in bodies if b["response_format"]["json_schema"]["name"] == "question"]
    assert len(queries) == 2
    for chunk in corpus:
        passage = chunk.text.split()
        runs = {" ".join(passage[i : i + VERBATIM_WORDS]) for i in range(len(passage) - VERBATIM_WORDS + 1)}
        assert not any(run in contents(body) for body in queries for run in runs)


def test_a_copied_run_is_eight_words_of_the_passage_in_order():
    chunk = Chunk(id="c", text="Backups run nightly at two and keep thirty days of copies on disk.", title="")
    slot = SimpleNamespace(chunk=chunk, partner=None, language="en")
    eight = "my boss says backups run nightly at two and keep thirty days, is that so"
    seven = "my boss says backups run nightly at two and keep, is that so"
    assert copies_passage(Situation("a clerk", eight, ""), slot)  # type: ignore[arg-type]
    assert not copies_passage(Situation("a clerk", seven, ""), slot)  # type: ignore[arg-type]
    assert copies_passage(Situation(eight, "I am stuck", ""), slot)  # type: ignore[arg-type]


def test_situation_overlap_is_the_measure_questions_get():
    slot = SimpleNamespace(
        chunk=Chunk(
            id="c", text="Restart the sync agent after changing backup_dir.", title="Sync", metadata={}
        ),
        partner=None,
        language="en",
    )
    written = Situation(
        "a new admin", "my copies go to the old backup_dir after a restart", "Restart the sync"
    )
    assert situation_overlap(written, slot) == lexical_overlap(  # type: ignore[arg-type]
        "a new admin\nmy copies go to the old backup_dir after a restart",
        "Sync\nRestart the sync agent after changing backup_dir.",
        "en",
    )
    assert situation_overlap(written, slot) > 0  # type: ignore[arg-type]


STEP_ONE = """---
name: my_situation
purpose: step 1 for a court archive
variables: passage, audience
---
## system
Imagine {{audience}} who needs this ruling. Answer as JSON with user, situation and answer.
## user
<passage>
{{passage}}
</passage>
"""
STEP_TWO = """---
name: my_query
purpose: step 2 for a court archive
variables: situation, form_instruction
---
## user
Situation: {{situation}}
Type a search for a case law database ({{form_instruction}}).
"""


def test_prompt_files_replace_each_step_and_name_themselves_in_provenance(tmp_path):
    step_one, step_two = tmp_path / "one.md", tmp_path / "two.md"
    step_one.write_text(STEP_ONE)
    step_two.write_text(STEP_TWO)
    client = FakeChatClient(
        lambda r: (
            situation_for_seed(r.seed or 0, passage_of(r))
            if r.schema_name == "situation"
            else json.dumps({"question": question_for_seed(r.seed or 0)})
        )
    )
    config = GenerateConfig(prompt_situation=step_one, prompt_query=step_two, audience="judges' clerks")
    output = tmp_path / "s.jsonl"
    generate(make_corpus(1), output, config, client=client)
    first, second = client.requests
    assert first.messages == (
        {
            "role": "system",
            "content": "Imagine judges' clerks who needs this ruling. "
            "Answer as JSON with user, situation and answer.",
        },
        {"role": "user", "content": "<passage>\n" + make_corpus(1)["c0"].text + "\n</passage>"},
    )
    assert second.messages[0]["content"].startswith("Situation: I wonder why")
    assert "Type a search for a case law database (" in second.messages[0]["content"]
    [record] = records(output)
    prompts = record["provenance"]["prompts"]
    assert prompts["situation"] == {
        "name": "my_situation",
        "sha256": hashlib.sha256(STEP_ONE.encode()).hexdigest(),
    }
    assert prompts["query"] == {"name": "my_query", "sha256": hashlib.sha256(STEP_TWO.encode()).hexdigest()}
    # The built-in step 2 with the custom step 1 makes another generator (another cache key).
    only_one = GenerateConfig(prompt_situation=step_one, audience="judges' clerks")
    generate(make_corpus(1), tmp_path / "t.jsonl", only_one, client=client)
    assert records(tmp_path / "t.jsonl")[0]["provenance"]["slot_key"] != record["provenance"]["slot_key"]


def test_a_step_prompt_asking_for_what_the_step_does_not_fill_is_refused(tmp_path):
    leaky = tmp_path / "leaky.md"
    leaky.write_text(
        STEP_TWO.replace(
            "variables: situation, form_instruction", "variables: situation, form_instruction, passage"
        )
    )
    with pytest.raises(
        InputError, match=r"--prompt-query declares passage.*step 2 never sees the passage"
    ) as info:
        generate(
            make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(prompt_query=leaky), client=FakeChatClient()
        )
    assert str(leaky) in str(info.value)


def test_the_situation_options_are_refused_with_the_direct_strategy(tmp_path):
    for options in (
        {"audience": "nurses"},
        {"prompt_situation": tmp_path / "a.md"},
        {"prompt_query": tmp_path / "b.md"},
    ):
        with pytest.raises(InputError, match="the direct strategy does not use"):
            GenerateConfig(strategy="direct", **options)
        with pytest.raises(InputError, match="the direct strategy does not use"):
            GenerateConfig(prompt=tmp_path / "mine.md", **options)  # a prompt file means direct
    with pytest.raises(InputError, match="audience must name who searches"):
        GenerateConfig(audience="  ")
    assert GenerateConfig(audience=" nurses\n on  night shifts ").audience == "nurses on night shifts"


def test_the_audience_reaches_both_steps_from_the_command_line(server, tmp_path):
    corpus_path = tmp_path / "chunks.jsonl"
    rows = [{"id": "p1", "text": "Statins raise the risk of muscle pain in patients over seventy years old."}]
    corpus_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = tmp_path / "s.jsonl"
    audience = "clinicians searching a literature database"
    done = cli.run("generate", "--corpus", str(corpus_path), "--output", str(output), "--audience", audience)
    assert done.returncode == 0, done.stderr
    first, second = server.bodies("chat")
    for body in (first, second):
        assert audience in contents(body)
        assert "documentation site" not in contents(body)
    assert json.loads(output.with_suffix(".summary.json").read_text())["generator"]["audience"] == audience


def test_without_an_audience_the_style_examples_show_who_searches(tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_text(
        json.dumps({"query_id": "r1", "query": "statin myopathy elderly", "gold": {"x": 1}}) + "\n"
    )
    client = FakeChatClient()
    generate(make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(style_examples=real), client=client)
    first, second = client.requests
    for request in (first, second):
        text = "\n".join(m["content"] for m in request.messages)
        assert "the people who typed the real queries shown" in text
        assert '"statin myopathy elderly"' in text
        assert "documentation site" not in text


def test_a_situation_answer_is_strict_json_with_the_three_keys():
    good = json.dumps(
        {"user": "a new admin", "situation": "I want  nightly\ncopies", "answer": "Backups run"}
    )
    situation, reason = parse_situation(good)
    assert reason is None
    assert situation is not None
    assert situation.situation == "I want nightly copies"
    assert parse_situation('{"user": "u", "situation": "s"}') == (None, "schema_mismatch")
    assert parse_situation('{"user": "u", "situation": "42", "answer": ""}') == (None, "empty_situation")
    assert parse_situation("not json") == (None, "invalid_json")


def test_the_stated_answer_must_be_in_the_passage():
    passage = "Backups run nightly at 2 o'clock; restart the agent after changing the schedule."
    assert answer_in_passage("backups run nightly at 2", passage, "en")
    assert answer_in_passage("Restart the agent after changing the schedule!", passage, "en")
    assert not answer_in_passage("call the helpdesk on 555-0100", passage, "en")
    assert not answer_in_passage("", passage, "en")


def test_a_quote_of_fewer_than_three_content_words_grounds_nothing():
    passage = "Backups run nightly at 2 o'clock; restart the agent after changing the schedule."
    assert MIN_QUOTE_WORDS == 3
    # In the passage word for word, yet they would be in almost any passage.
    assert not answer_in_passage("the", passage, "en")
    assert not answer_in_passage("restart the agent", passage, "en")  # 2 content words
    assert answer_in_passage("restart the agent after changing", passage, "en")  # 3 content words
    # The number is stated where users read it.
    [judge] = [item for item in setting_fields(GenerateConfig) if item.name == "judge"]
    assert f"at least {MIN_QUOTE_WORDS} content words" in judge.help
    docs = (Path(__file__).parents[2] / "docs" / "generate.md").read_text("utf-8")
    assert f"at least {MIN_QUOTE_WORDS} content words" in docs


def test_a_one_word_quote_asks_for_a_new_situation_and_the_judge_replaces_the_quote(tmp_path):
    one_word = json.dumps({"user": "a clerk", "situation": "my nightly copies are missing", "answer": "the"})
    client = FakeChatClient()
    client.script.append(one_word)
    summary = generate(make_corpus(1), tmp_path / "s.jsonl", GenerateConfig(), client=client)
    assert summary.stage("generation").failures == {"answer_not_in_passage": 1}
    assert [r.schema_name for r in client.requests] == ["situation", "situation", "question"]

    # With the judge, the judge decides: the quote is not checked.
    def answerable(request: ChatRequest) -> str:
        if request.schema_name == "verdict":
            return json.dumps({"answerable": True, "reason": "it says when copies are made"})
        return paraphrase(request)

    judged = FakeChatClient(answerable)
    judged.script.append(one_word)
    config = GenerateConfig(judge=True)
    summary = generate(make_corpus(1), tmp_path / "j.jsonl", config, client=judged)
    assert summary.total == 1
    assert [r.schema_name for r in judged.requests] == ["situation", "question", "verdict"]


# --- query forms with a target mix ----------------------------------------------------------------

FORM_LINE = re.compile(r"Form of the (?:query|question): (\w+)")


def answer_in_form(request: ChatRequest) -> str:
    """A model that writes in the form it is asked for (keyword queries, questions, statements, typos)."""
    seed = request.seed or 0
    if request.schema_name == "situation":
        passage = re.search(r"<passage>\n(.*?)\n</passage>", request.messages[-1]["content"], re.DOTALL)
        return situation_for_seed(seed, passage.group(1) if passage else "")
    asked = FORM_LINE.search(request.messages[-1]["content"])
    form = asked.group(1) if asked else "question"
    words = [EVERYDAY[(seed >> shift) % len(EVERYDAY)] for shift in (0, 5, 10, 15)]
    written = {
        "keywords": f"{words[0]} {words[1]} {words[2]} {seed % 997}",
        "question": f"How do I get my {words[0]} {words[1]} {words[2]} working {seed % 997}?",
        "statement": f"My {words[0]} and {words[1]} stopped syncing with the {words[2]} again {seed % 997}.",
        "typo": f"{words[0]} {words[1]} not wokring {words[2]} {seed % 997}",
    }[form]
    return json.dumps({"question": written})


@pytest.mark.parametrize("strategy", ["situation", "direct"])
def test_the_form_mix_of_200_questions_is_within_10_points_of_the_target(tmp_path, strategy):
    corpus = Corpus(
        tuple(
            Chunk(id=f"k{i}", text=f"Item {i}: the printer queue {i} empties every {i} minutes.")
            for i in range(200)
        ),
        path="memory",
    )
    output = tmp_path / "s.jsonl"
    forms = {"keywords": 2.0, "question": 2.0, "typo": 1.0}
    config = GenerateConfig(strategy=strategy, forms=forms, near_duplicate=None, concurrency=16)
    summary = generate(corpus, output, config, client=FakeChatClient(answer_in_form))
    assert summary.total == 200
    written = records(output)
    requested = Counter(record["requested_form"] for record in written)
    for form, weight in forms.items():
        assert abs(requested[form] / 200 - weight / sum(forms.values())) <= 0.10, requested
    # The rules read the form the model wrote: keyword queries and questions are what was asked.
    for record in written:
        if record["requested_form"] in ("keywords", "question"):
            assert record["form"] == record["requested_form"], record["query"]


def test_without_forms_the_mix_and_lengths_are_measured_from_the_style_examples(tmp_path):
    real = tmp_path / "real.jsonl"
    queries = ["dog age by teeth", "printer jam tray two", "How do I reset my password?", "vpn slow home"]
    real.write_text(
        "".join(
            json.dumps({"query_id": f"r{i}", "query": q, "gold": {"x": 1}}) + "\n"
            for i, q in enumerate(queries)
        )
    )
    plan = plan_forms(None, real, default_type_rules())
    assert plan.source == "style examples"
    assert plan.mix == {"keywords": 3.0, "question": 1.0}
    assert plan.lengths == {"keywords": (3, 4, 4), "question": (6,)}
    choices = [plan.choose(0, f"c{i}", 0) for i in range(400)]
    share = sum(choice.form == "keywords" for choice in choices) / len(choices)
    assert abs(share - 0.75) <= 0.1
    assert {choice.words for choice in choices if choice.form == "question"} == {6}
    # A given mix wins over the measured one; the lengths still come from the real examples.
    given = plan_forms({"typo": 1.0}, real, default_type_rules())
    assert (given.source, given.mix, given.lengths) == ("forms", {"typo": 1.0}, plan.lengths)
    assert plan_forms(None, None, default_type_rules()) == FormPlan(dict(DEFAULT_FORMS), {}, "default")


def test_each_record_stores_the_requested_form_and_the_rules_form(tmp_path):
    output = tmp_path / "s.jsonl"
    config = GenerateConfig(forms={"keywords": 1.0})
    generate(make_corpus(2), output, config, client=FakeChatClient(answer_in_form))
    for record in records(output):
        assert (record["requested_form"], record["form"]) == ("keywords", "keywords")
    extractive = tmp_path / "e.jsonl"
    generate(make_corpus(2), extractive, GenerateConfig(backend="extractive"))
    assert all("requested_form" not in record for record in records(extractive))


def test_a_form_draw_depends_on_seed_chunk_and_index_only():
    plan = FormPlan({"keywords": 1.0, "question": 1.0, "typo": 1.0})
    assert plan.choose(3, "c1", 0) == plan.choose(3, "c1", 0)
    assert len({plan.choose(3, f"c{i}", 0).form for i in range(50)}) == 3


def test_unknown_forms_are_refused_with_the_known_ones():
    with pytest.raises(InputError, match="unknown query form 'haiku'") as info:
        GenerateConfig(forms={"haiku": 1.0})
    assert "keywords, question, statement, typo" in str(info.value)
    assert settings_from(GenerateConfig, {"forms": "keywords=2,typo"}).forms == {"keywords": 2.0, "typo": 1.0}

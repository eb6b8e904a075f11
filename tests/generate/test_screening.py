"""Chunk screening (issue 12 item 3): chunks no user would ask about are skipped, with their reason."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient
from realrecall.corpus import Chunk, Corpus, load_corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, generate
from realrecall.generate.screening import MIN_PROSE_WORDS, prose_words, screen_chunks, screen_reason
from realrecall.llm.types import ChatRequest
from realrecall.settings import settings_from
from support import cli
from support.reference import find_reference_data

PROSE = "Restart the sync service after you change the folder it watches, or it keeps the old one."
LINKS = "- [Getting started](/docs/start)\n- [Install](/docs/install)\n- [Reference](https://x.org/ref)\n"
CODE = '```python\nimport chromadb\nclient = chromadb.Client()\ncol = client.create_collection("a")\n```\n'
TAGS = '{% TabbedCodeBlock %}\n{% Tab label="python" %}\n{% /Tab %}\n{% /TabbedCodeBlock %}\n'
MENU = "Home\nDocs\nGuides\nAPI reference\nBlog\nPricing\n"
# Direct prompting: the screen does not depend on how questions are asked.
DIRECT_PROMPT = Path(str(resources.files("realrecall").joinpath("prompts", "question_generation.md")))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (LINKS, "link_list"),
        (CODE + "Then run it.", "code_only"),
        (TAGS, "template_tags"),
        (MENU, "navigation"),
        ("Next page", "too_short"),
        (PROSE, None),
        ("The printer on floor two jams on A3 paper.", None),  # one sentence: a fact a user may ask about
        (PROSE + "\n\n" + CODE + TAGS, None),  # prose beside the code: kept
        ("    " + PROSE.replace(", ", ",\n    "), None),  # a page copied indented whole is not code
    ],
)
def test_rules_skip_chunks_without_prose_and_name_why(text, reason):
    assert screen_reason(Chunk("c", text)) == reason


def test_a_chunk_starting_inside_a_code_block_reads_its_first_lines_as_code():
    text = "client.query(n_results=3)\n```\n\nChroma returns the closest matches first, in order of distance."
    assert prose_words(text) == 10  # "Chroma returns ... of distance"


def test_a_link_list_chunk_is_skipped_with_its_reason_in_the_summary(tmp_path):
    corpus = Corpus((Chunk("prose", PROSE), Chunk("links", LINKS)))
    output = tmp_path / "synthetic.jsonl"
    summary = generate(corpus, output, GenerateConfig(backend="extractive"))
    assert summary.screened == {"links": "link_list"}
    assert summary.chunks == 1
    assert summary.planned == 1
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [record["gold"] for record in records] == [{"prose": 1}]
    written = json.loads(summary.summary_path.read_text())
    assert written["screened"] == {"link_list": 1}  # never silent: counted by reason
    assert written["screened_chunks"] == {"links": "link_list"}


def test_no_screen_turns_the_rules_off(tmp_path):
    corpus = Corpus((Chunk("prose", PROSE), Chunk("links", LINKS + "Also see the FAQ for more help.")))
    summary = generate(corpus, tmp_path / "s.jsonl", GenerateConfig(backend="extractive", screen="off"))
    assert summary.screened == {}
    assert summary.planned == 2


def test_a_corpus_the_screen_empties_is_one_line_naming_the_reasons(tmp_path):
    with pytest.raises(InputError) as caught:
        generate(Corpus((Chunk("links", LINKS),)), tmp_path / "s.jsonl", GenerateConfig(backend="extractive"))
    assert "link_list 1" in str(caught.value)
    assert "--no-screen" in str(caught.value)


def test_screen_options_from_a_file_and_their_errors():
    assert settings_from(GenerateConfig, {"screen": True}).screen == "model"
    assert settings_from(GenerateConfig, {"screen": False}).screen == "off"
    assert settings_from(GenerateConfig, {"screen": "rules"}).screen == "rules"
    with pytest.raises(InputError, match="unknown screen"):
        GenerateConfig(screen="maybe")


def test_cli_reports_the_skipped_chunks(tmp_path):
    corpus = tmp_path / "chunks.jsonl"
    rows = [{"id": "prose", "text": PROSE}, {"id": "links", "text": LINKS}]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = tmp_path / "synthetic.jsonl"
    result = cli.run("generate", "--corpus", str(corpus), "--output", str(output), "--backend", "extractive")
    assert result.returncode == 0, result.stderr
    assert "chunks skipped by the screen: 1 (link_list 1)" in result.stdout
    off = cli.run(
        "generate", "--corpus", str(corpus), "--output", str(tmp_path / "b.jsonl"), "--backend", "extractive",
        "--no-screen",
    )  # fmt: skip
    assert off.returncode == 0, off.stderr
    assert "skipped by the screen" not in off.stdout


def screen_answers(request: ChatRequest) -> str:
    """The model screen says no to the cookie notice; questions are plain."""
    if request.schema_name == "screen":
        text = request.messages[-1]["content"]
        askable = "cookies" not in text
        return json.dumps({"askable": askable, "reason": "boilerplate" if not askable else "a how-to"})
    return json.dumps({"question": f"how do I fix my sync {request.seed}"})


def test_the_model_screen_asks_once_per_chunk_skips_what_it_rejects_and_is_cached(tmp_path):
    cookie = "We use cookies to improve your experience on this site. By browsing you accept them all."
    corpus = Corpus((Chunk("prose", PROSE), Chunk("cookie", cookie)))
    config = GenerateConfig(screen="model", prompt=DIRECT_PROMPT)
    client = FakeChatClient(screen_answers)
    output = tmp_path / "synthetic.jsonl"
    summary = generate(corpus, output, config, client=client)
    screens = [request for request in client.requests if request.schema_name == "screen"]
    assert len(screens) == 2
    assert all(request.temperature == 0.0 and request.json_schema for request in screens)
    assert summary.screened == {"cookie": "model_screen: boilerplate"}
    assert summary.to_dict()["screened"] == {"model_screen": 1}
    stage = summary.stage("screen")
    assert stage is not None
    assert stage.requests == 2
    assert [json.loads(line)["gold"] for line in output.read_text().splitlines()] == [{"prose": 1}]

    again = FakeChatClient(screen_answers)
    rerun = generate(corpus, output, config, client=again)
    assert again.requests == []  # the verdicts come from the cache
    assert rerun.screened == {"cookie": "model_screen: boilerplate"}


def test_a_failing_model_screen_keeps_the_chunk(tmp_path):
    def broken(request: ChatRequest) -> str:
        if request.schema_name == "screen":
            return "not json"
        return json.dumps({"question": "how do I restart the sync service"})

    config = GenerateConfig(screen="model", prompt=DIRECT_PROMPT, max_attempts=2)
    summary = generate(
        Corpus((Chunk("prose", PROSE),)), tmp_path / "s.jsonl", config, client=FakeChatClient(broken)
    )
    assert summary.screened == {}
    assert summary.total == 1
    stage = summary.stage("screen")
    assert stage is not None
    assert stage.failures == {"invalid_json": 2}


CHROMA = find_reference_data()


@pytest.mark.skipif(CHROMA is None, reason="shared/reference-data (Chroma docs chunks) is not here")
def test_chroma_docs_chunks_skipped_are_the_ones_without_prose():
    assert CHROMA is not None
    corpus = load_corpus(CHROMA / "chroma-docs" / "chroma_docs.json")
    kept, skipped = screen_chunks(corpus)
    reasons = Counter(skipped.values())
    # Measured 2026-12: 26 of 216 skipped (code_only 21, link_list 3, navigation 2).
    assert 15 <= len(skipped) <= 40, reasons
    assert reasons["code_only"] >= 10
    assert reasons["link_list"] >= 2
    by_id = {chunk.id: chunk for chunk in corpus}
    assert all(prose_words(by_id[chunk_id].text) < MIN_PROSE_WORDS for chunk_id in skipped)
    assert len(kept) + len(skipped) == len(corpus)


def test_a_dry_run_counts_the_model_screens_requests_and_the_questions_it_skips(tmp_path):
    from dataclasses import replace

    from realrecall.generate import estimate

    cookie = Chunk(
        "cookie", "We use cookies to improve your experience on this site. By browsing you accept them all."
    )
    other = Chunk(
        "other", "The printer on floor two jams on A3 paper unless you set the tray to manual feed."
    )
    corpus = Corpus((Chunk("prose", PROSE), cookie))
    output = tmp_path / "synthetic.jsonl"
    config = GenerateConfig(screen="model", prompt=DIRECT_PROMPT)
    without = estimate(corpus, output, replace(config, screen="rules"))
    before = estimate(corpus, output, config)
    # One screen request per chunk, beside the question requests of both chunks (not screened yet).
    assert (before.screen_requests, before.requests, before.pending) == (2, without.requests + 2, 2)
    assert before.max_requests == before.requests * config.max_attempts
    assert before.tokens_in > without.tokens_in
    assert [s.requests for s in before.strategies] == [w.requests + 2 for w in without.strategies]

    # A run screens the cookie notice (cached): no request for it, and no question asked about it.
    generate(Corpus((cookie, other)), output, config, client=FakeChatClient(screen_answers))
    after = estimate(corpus, output, config)
    assert (after.screen_requests, after.pending) == (1, 1)  # the prose chunk, never screened


def test_the_cli_dry_run_names_the_screens_requests(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "prose", "text": PROSE}) + "\n")
    args = ["generate", "--corpus", str(corpus), "--output", str(tmp_path / "s.jsonl"), "--dry-run"]
    result = cli.run(*args, "--screen", "--strategy", "direct")
    assert result.returncode == 0, result.stderr
    assert "requests: 2 " in result.stdout
    assert "of which the model screen (--screen): 1, one per chunk not screened before" in result.stdout

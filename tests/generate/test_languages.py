"""The language of questions (issue 12 item 4): the chunk's own, checked on every answer."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from generate.fakes import FakeChatClient
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.generate import GenerateConfig, generate
from realrecall.generate.languages import (
    check_language_codes,
    detect_chunk_language,
    language_text,
    wrong_language,
)
from realrecall.llm.types import ChatRequest
from support import cli

# Direct prompting: the check reads the answer, whatever way it was asked for.
DIRECT_PROMPT = Path(str(resources.files("realrecall").joinpath("prompts", "question_generation.md")))
ENGLISH = "The sync service copies every folder to the server each night and keeps thirty days of history."
GERMAN = "Der Synchronisationsdienst kopiert jede Nacht alle Ordner auf den Server und behält dreißig Tage."


def test_unknown_language_codes_are_refused_in_one_line():
    with pytest.raises(InputError) as caught:
        GenerateConfig(languages={"klingon": 1.0})
    assert "unknown language code 'klingon'" in str(caught.value)
    assert "\n" not in str(caught.value)
    check_language_codes(["de", "en", "ja"])  # ISO 639-1 codes the detector knows pass


def test_cli_refuses_languages_klingon(tmp_path):
    corpus = tmp_path / "chunks.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": ENGLISH}) + "\n")
    result = cli.run(
        "generate", "--corpus", str(corpus), "--output", str(tmp_path / "s.jsonl"), "--languages", "klingon"
    )
    assert result.returncode == 2
    assert "unknown language code 'klingon'" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_chunk_s_language_is_its_metadata_s_else_detected_in_its_prose():
    assert detect_chunk_language(Chunk("a", ENGLISH)) == "en"
    assert detect_chunk_language(Chunk("b", GERMAN)) == "de"
    assert detect_chunk_language(Chunk("c", ENGLISH, metadata={"language": "fr"})) == "fr"


def test_an_answer_is_wrong_when_another_language_is_confident_or_the_asked_one_unlikely():
    assert wrong_language("how do I persist a collection on disk", "de") == "en"
    assert wrong_language("Wie speichere ich eine Sammlung dauerhaft?", "en") == "de"
    assert wrong_language("Wie speichere ich eine Sammlung dauerhaft?", "de") is None
    # A real TREC DL 2023 keyword query: no language reaches 0.8 (English 0.73), but German is unlikely.
    assert wrong_language("cerebellar disease definition", "de") == "en"
    assert wrong_language("cerebellar disease definition", "en") is None


@pytest.mark.parametrize(
    "query",
    [
        "Urlaub beantragen",
        "Drucker druckt nicht",
        "Rechnung Kopie",
        "WLAN Passwort vergessen",
        "Ausweis verloren",
        "VPN langsam zuhause",
        "Backup wiederherstellen",
        "Gehaltsabrechnung Fehler",
        "Parkplatz reservieren",
        "Laptop Akku tauschen",
    ],
)
def test_german_keyword_queries_are_kept_on_a_german_slot(query: str) -> None:
    # Written for this test (the shared data has no German queries): short, with English loanwords.
    assert wrong_language(query, "de") is None


def test_an_english_keyword_query_is_not_rejected_on_an_english_slot_by_the_floor():
    # "apatite definition" reads French 0.41, English 0.10: no floor on the prompts' own language.
    assert wrong_language("apatite definition", "en") is None


def test_identifiers_and_code_are_left_out_of_what_the_detector_reads():
    assert language_text("Was macht n_results bei collection.query()?") == "Was macht bei"
    assert (
        language_text("why does `getOrCreate` fail with E2014 on HNSW --max-attempts")
        == "why does fail with on"
    )
    assert wrong_language("n_results collection.add()", "de") is None  # identifiers alone: no language
    assert wrong_language("Was macht n_results bei collection.query()?", "de") is None


def answers_in_english_first(request: ChatRequest) -> str:
    """English to every request that shows no feedback yet; German once told the language is wrong."""
    told = any("not written in the language" in message["content"] for message in request.messages)
    if told:
        return json.dumps({"question": "Wie oft kopiert der Dienst meine Ordner auf den Server?"})
    return json.dumps({"question": "how often does the service copy my folders to the server"})


def test_a_wrong_language_answer_is_regenerated_with_feedback(tmp_path):
    corpus = Corpus((Chunk("de1", GERMAN),))
    client = FakeChatClient(answers_in_english_first)
    output = tmp_path / "synthetic.jsonl"
    summary = generate(corpus, output, GenerateConfig(prompt=DIRECT_PROMPT), client=client)
    questions = client.generation_requests()
    assert len(questions) == 2
    assert "Language of the question: German" in questions[0].messages[-1]["content"]
    assert "not written in the language asked for" in questions[1].messages[-1]["content"]
    assert summary.filtered == {"wrong_language": 1}
    (record,) = [json.loads(line) for line in output.read_text().splitlines()]
    assert record["language"] == "de"
    assert record["query"].startswith("Wie oft")


def english_keywords_first(request: ChatRequest) -> str:
    """A real English keyword query (TREC DL 2023) first; German once told the language is wrong."""
    told = any("not written in the language" in message["content"] for message in request.messages)
    if told:
        return json.dumps({"question": "Wie oft kopiert der Dienst meine Ordner?"})
    return json.dumps({"question": "cerebellar disease definition"})


def test_an_english_keyword_answer_on_a_german_slot_is_regenerated(tmp_path):
    corpus = Corpus((Chunk("de1", GERMAN),))
    client = FakeChatClient(english_keywords_first)
    output = tmp_path / "synthetic.jsonl"

    summary = generate(corpus, output, GenerateConfig(prompt=DIRECT_PROMPT), client=client)

    assert summary.filtered == {"wrong_language": 1}
    (record,) = [json.loads(line) for line in output.read_text().splitlines()]
    assert (record["language"], record["query"]) == ("de", "Wie oft kopiert der Dienst meine Ordner?")


def test_a_question_kept_in_the_wrong_language_earlier_is_replaced_on_rerun(tmp_path):
    corpus = Corpus((Chunk("de1", GERMAN),))
    output = tmp_path / "synthetic.jsonl"
    generate(
        corpus, output, GenerateConfig(prompt=DIRECT_PROMPT), client=FakeChatClient(answers_in_english_first)
    )
    # An output written before answers were checked: its German slot holds an English question.
    record = json.loads(output.read_text())
    record["query"] = "how often does the service copy my folders to the server"
    output.write_text(json.dumps(record) + "\n")
    again = generate(
        corpus, output, GenerateConfig(prompt=DIRECT_PROMPT), client=FakeChatClient(answers_in_english_first)
    )
    assert again.removed == 1
    (fixed,) = [json.loads(line) for line in output.read_text().splitlines()]
    assert fixed["query"].startswith("Wie oft")


def mixed_corpus() -> Corpus:
    return Corpus(
        tuple([Chunk(f"en{i}", f"{ENGLISH} Office {i}.") for i in range(3)] + [Chunk("de0", GERMAN)])
    )


def german_question(request: ChatRequest) -> str:
    return json.dumps({"question": f"Wie oft kopiert der Dienst meine Ordner im Büro {request.seed}?"})


def test_german_questions_are_not_put_on_english_chunks_unless_allowed(tmp_path):
    config = GenerateConfig(prompt=DIRECT_PROMPT, languages={"de": 1.0})
    summary = generate(mixed_corpus(), tmp_path / "a.jsonl", config, client=FakeChatClient(german_question))
    records = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [record["gold"] for record in records] == [{"de0": 1}]
    assert summary.screened == {f"en{i}": "language_not_requested" for i in range(3)}

    across = GenerateConfig(prompt=DIRECT_PROMPT, languages={"de": 1.0}, cross_language=True)
    summary = generate(mixed_corpus(), tmp_path / "b.jsonl", across, client=FakeChatClient(german_question))
    records = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert sorted(record["language"] for record in records) == ["de"] * 4  # allowed on purpose
    assert summary.screened == {}


def test_by_default_each_question_is_in_its_chunk_s_language(tmp_path):
    def in_the_asked_language(request: ChatRequest) -> str:
        if "Language of the question: German" in request.messages[-1]["content"]:
            return german_question(request)
        return json.dumps({"question": f"how often are my folders copied to the server {request.seed}"})

    client = FakeChatClient(in_the_asked_language)
    generate(mixed_corpus(), tmp_path / "s.jsonl", GenerateConfig(prompt=DIRECT_PROMPT), client=client)
    records = {json.loads(line)["query_id"]: json.loads(line) for line in (tmp_path / "s.jsonl").open()}
    assert {query_id: record["language"] for query_id, record in records.items()} == {
        "syn-en0-0": "en",
        "syn-en1-0": "en",
        "syn-en2-0": "en",
        "syn-de0-0": "de",
    }


def test_the_language_model_is_read_once_a_process(monkeypatch):
    # Reading py3langid's model takes about 0.4 s of CPU: a run needs the full set (chunks), a
    # restricted one (answers) and the known codes, all from one read.
    from py3langid.langid import LanguageIdentifier

    from realrecall.generate import languages
    from realrecall.labels import language

    reads = []
    read = LanguageIdentifier.from_model_file.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        LanguageIdentifier,
        "from_model_file",
        classmethod(lambda cls, *a, **k: reads.append(a) or read(cls, *a, **k)),
    )
    language._identifier.cache_clear()
    languages.known_language_codes.cache_clear()
    try:
        assert detect_chunk_language(Chunk("e", ENGLISH)) == "en"
        assert wrong_language(GERMAN, "en") == "de"
        assert {"de", "en", "ja"} <= languages.known_language_codes()
        assert len(reads) == 1
    finally:  # the next tests get identifiers not built through the counting stand-in
        language._identifier.cache_clear()
        languages.known_language_codes.cache_clear()

"""Adding a retriever is one file (toy_retriever.py) plus one registry line: a register() call here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluate.retrievers import toy_retriever
from evaluate.retrievers.toy_retriever import ToyOptions
from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import RETRIEVERS, build_retriever, choices, register, unregister
from support import cli


@pytest.fixture
def toy() -> Iterator[None]:
    register(toy_retriever.RETRIEVER)  # the one line that makes "toy" a retriever
    yield
    unregister("toy")


@pytest.mark.usefixtures("toy")
def test_a_registered_retriever_is_built_by_name_with_options_as_text(pets_corpus: Corpus) -> None:
    retriever = build_retriever(
        "toy", pets_corpus, options={"reverse": "true", "limit": "2", "weight": "0.5", "notes": "a/b"}
    )
    assert retriever.search(["anything"], 10) == [["stocks", "birds"]]
    assert retriever.description == "toy weight=0.5 notes=a/b"


@pytest.mark.usefixtures("toy")
def test_a_registered_retriever_takes_its_options_dataclass(pets_corpus: Corpus) -> None:
    retriever = build_retriever("toy", pets_corpus, options=ToyOptions(limit=1, label="mine"))
    assert retriever.search(["q"], 5) == [["cats"]]
    assert retriever.description.startswith("mine ")


@pytest.mark.usefixtures("toy")
def test_a_registered_retriever_appears_in_the_registry_and_the_choices() -> None:
    assert RETRIEVERS["toy"] is toy_retriever.RETRIEVER
    assert choices() == ", ".join([*RETRIEVERS, "or module:function"])
    assert "toy" in choices().split(", ")


@pytest.mark.usefixtures("toy")
def test_an_unknown_option_of_the_new_retriever_names_it_and_its_options(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError) as caught:
        build_retriever("toy", pets_corpus, options={"revers": "true"})
    assert str(caught.value) == (
        "retriever toy has no option 'revers' (its options: reverse, limit, weight, label, notes); "
        "did you mean 'reverse'?"
    )


@pytest.mark.usefixtures("toy")
def test_the_cli_scores_the_new_retriever_with_retriever_options(tmp_path: Path) -> None:
    corpus, gold, results = tmp_path / "corpus.jsonl", tmp_path / "gold.jsonl", tmp_path / "results.json"
    corpus.write_text("".join(json.dumps({"id": f"c{i}", "text": f"text {i}"}) + "\n" for i in range(1, 4)))
    gold.write_text(json.dumps({"query_id": "q1", "query": "anything", "gold_ids": ["c3"]}) + "\n")
    args = ["evaluate", "--corpus", str(corpus), "--gold", str(gold), "--k", "1", "-o", str(results)]
    toy_args = [*args, "--retriever", "toy", "--retriever-option", "reverse=yes"]
    done = cli.run(*toy_args, "--retriever-option", "label=backwards")
    assert done.returncode == 0, done.stderr
    saved = json.loads(results.read_text())
    assert saved["retriever"]["description"].startswith("backwards ")
    assert saved["gold_sets"][0]["overall"]["metrics"]["recall@1"] == 1.0

    refused = cli.run(*toy_args, "--retriever-option", "limit=many")
    assert refused.returncode == 2
    assert (
        "retriever toy option limit must be an integer or none, got 'many'; e.g. limit=10" in refused.stderr
    )


def test_register_refuses_a_taken_name_and_the_custom_form() -> None:
    with pytest.raises(InputError, match="already registered"):
        register(RETRIEVERS["bm25"])
    spec = toy_retriever.RETRIEVER
    with pytest.raises(InputError, match="cannot be registered"):
        register(type(spec)(name="my:toy", options=spec.options, build=spec.build, summary=""))
    assert "toy" not in RETRIEVERS


def test_an_option_without_a_default_is_required_in_one_line(pets_corpus: Corpus) -> None:
    from dataclasses import dataclass

    from realrecall.evaluate.retrievers import RetrieverSpec

    @dataclass(frozen=True, kw_only=True)
    class NeedsIndex:
        index: str

    spec = RetrieverSpec(name="needs-index", options=NeedsIndex, build=toy_retriever.build, summary="")  # type: ignore[arg-type]
    register(spec)
    try:
        with pytest.raises(InputError) as caught:
            build_retriever("needs-index", pets_corpus)
    finally:
        unregister("needs-index")
    assert str(caught.value) == "retriever needs-index needs the option index; give index=VALUE"

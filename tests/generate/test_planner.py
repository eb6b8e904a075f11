"""Chunk selection and question slots: stratified sample, deterministic shards, weights, stability."""

from __future__ import annotations

from collections import Counter

import pytest

from generate.fakes import make_corpus
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.generate.config import GenerateConfig, Shard, parse_shard, parse_weights
from realrecall.generate.planner import (
    inclusion_probabilities,
    plan_slots,
    sample_chunks,
    sample_rate,
    select_chunks,
    shard_chunks,
)

GENERATOR = {"backend": "llm", "model": "m"}


def corpus_of(n: int, documents: int) -> Corpus:
    return make_corpus(n, documents=documents)


def test_a_sample_keeps_about_its_share_of_every_stratum():
    chunks = list(corpus_of(400, 4))  # 100 chunks per document
    sample = sample_chunks(chunks, 0.2, field="document", seed=1)
    assert 60 < len(sample) < 100
    counts = Counter(chunk.metadata["document"] for chunk in sample)
    assert set(counts) == {f"doc{i}" for i in range(4)}
    assert all(8 < count < 35 for count in counts.values())


def test_sampled_chunks_stay_sampled_when_the_corpus_grows_or_shrinks():
    # A chunk's membership depends on its id and the seed only (issue 12): 40 chunks added to 100, or
    # 30 taken away, leave every other chunk's membership as it was.
    chunks = list(corpus_of(140, 1))
    before = {c.id for c in sample_chunks(chunks[:100], 0.3, field="document", seed=0)}
    after = {c.id for c in sample_chunks(chunks, 0.3, field="document", seed=0)}
    assert before == {c for c in after if int(c.removeprefix("c")) < 100}
    fewer = {c.id for c in sample_chunks(chunks[30:100], 0.3, field="document", seed=0)}
    assert fewer == {c for c in before if int(c.removeprefix("c")) >= 30}


def test_a_count_is_a_rate_of_the_corpus_and_a_remembered_rate_keeps_the_sample():
    corpus = corpus_of(100, 1)
    config = GenerateConfig(sample=50)
    assert sample_rate(config, 100) == 0.5
    assert sample_rate(config, 140, remembered=0.5) == 0.5
    assert sample_rate(GenerateConfig(sample=0.05), 140) == 0.05
    assert sample_rate(GenerateConfig(sample=500), 100) == 1.0
    assert sample_rate(GenerateConfig(), 100) is None
    grown = corpus_of(140, 1)
    kept = {c.id for c in select_chunks(grown, config, sample_rate(config, 140, remembered=0.5))}
    assert {c.id for c in select_chunks(corpus, config)} <= kept


def test_a_stratum_with_no_draw_below_the_rate_gets_its_lowest_draw():
    chunks = [Chunk(f"a{i}", "x", metadata={"document": "a"}) for i in range(200)]
    chunks += [Chunk(f"b{i}", "x", metadata={"document": "b"}) for i in range(2)]
    sample = sample_chunks(chunks, 0.01, field="document", seed=0)
    counts = Counter(chunk.metadata["document"] for chunk in sample)
    assert counts["b"] == 1


def test_a_small_stratum_is_never_left_out_and_its_inclusion_probability_says_so():
    chunks = [Chunk(f"a{i}", "x", metadata={"area": "big"}) for i in range(98)]
    chunks += [Chunk(f"s{i}", "x", metadata={"area": "small"}) for i in range(2)]
    config = GenerateConfig(sample=5, stratify_by="area")
    corpus = Corpus(chunks)
    sample = select_chunks(corpus, config)
    assert Counter(chunk.metadata["area"] for chunk in sample)["small"] >= 1
    probabilities = inclusion_probabilities(corpus, config)
    # rate 5/100; p = rate + (1 - rate)^n / n: in, or the stand-in of a stratum with no draw below it.
    assert probabilities["a0"] == pytest.approx(0.05 + 0.95**98 / 98)
    assert probabilities["s0"] == pytest.approx(0.05 + 0.95**2 / 2)
    assert set(probabilities) == {c.id for c in corpus}
    assert set(inclusion_probabilities(corpus, GenerateConfig()).values()) == {1.0}


def test_horvitz_thompson_weights_count_the_corpus_on_average():
    # The probabilities are exact: over many seeds, the sampled chunks weighted by 1/p add up to the
    # corpus size on average (within 3%), small strata included.
    chunks = [Chunk(f"a{i}", "x", metadata={"area": "big"}) for i in range(60)]
    chunks += [Chunk(f"s{i}", "x", metadata={"area": "small"}) for i in range(3)]
    corpus = Corpus(chunks)
    totals = []
    for seed in range(400):
        config = GenerateConfig(sample=0.1, stratify_by="area", seed=seed)
        probabilities = inclusion_probabilities(corpus, config)
        totals.append(sum(1 / probabilities[c.id] for c in select_chunks(corpus, config)))
    assert sum(totals) / len(totals) == pytest.approx(63, rel=0.03)


def test_sample_by_another_metadata_field_and_chunks_without_it():
    chunks = [Chunk(f"c{i}", "x", metadata={"section": "s1"} if i < 6 else {}) for i in range(12)]
    sample = sample_chunks(chunks, 0.5, field="section", seed=0)
    assert set(Counter(chunk.metadata.get("section") for chunk in sample)) == {"s1", None}


def test_sample_is_deterministic_for_a_seed_and_varies_with_it():
    chunks = list(corpus_of(50, 5))
    first = [c.id for c in sample_chunks(chunks, 0.2, field="document", seed=7)]
    assert first == [c.id for c in sample_chunks(chunks, 0.2, field="document", seed=7)]
    assert first != [c.id for c in sample_chunks(chunks, 0.2, field="document", seed=8)]


def test_sample_of_the_whole_corpus_takes_every_chunk():
    chunks = list(corpus_of(5, 2))
    assert sample_chunks(chunks, 1.0, field="document", seed=0) == chunks
    assert select_chunks(Corpus(chunks), GenerateConfig(sample=50)) == chunks


def test_shards_are_disjoint_and_cover_the_corpus():
    chunks = list(corpus_of(200, 3))
    shards = [shard_chunks(chunks, Shard(i, 4)) for i in range(4)]
    ids = [chunk.id for shard in shards for chunk in shard]
    assert sorted(ids) == sorted(chunk.id for chunk in chunks)
    assert all(20 < len(shard) < 80 for shard in shards)


def test_shard_of_a_chunk_does_not_depend_on_the_other_chunks():
    chunks = list(corpus_of(60, 3))
    fewer = shard_chunks(chunks[::2], Shard(1, 3))
    assert {c.id for c in fewer} == {c.id for c in shard_chunks(chunks, Shard(1, 3))} & {
        c.id for c in chunks[::2]
    }


def test_select_applies_sample_then_shard():
    corpus = corpus_of(40, 2)
    config = GenerateConfig(sample=20, shard=Shard(0, 2))
    sample = {c.id for c in sample_chunks(list(corpus), 0.5, field="document", seed=0)}
    assert {c.id for c in select_chunks(corpus, config)} <= sample
    other = {c.id for c in select_chunks(corpus, GenerateConfig(sample=20, shard=Shard(1, 2)))}
    assert other | {c.id for c in select_chunks(corpus, config)} == sample


def test_types_and_languages_follow_the_weights():
    config = GenerateConfig(types={"lookup": 3, "conceptual": 1}, languages={"en": 1, "de": 1}, per_chunk=4)
    slots = plan_slots(list(corpus_of(500, 5)), config, GENERATOR)
    assert len(slots) == 2000
    types = Counter(slot.type for slot in slots)
    assert 0.70 < types["lookup"] / 2000 < 0.80
    languages = Counter(slot.language for slot in slots)
    assert 0.45 < languages["de"] / 2000 < 0.55


def test_personas_are_drawn_per_slot():
    config = GenerateConfig(personas=("an admin", "a student"), per_chunk=2)
    slots = plan_slots(list(corpus_of(50, 2)), config, GENERATOR)
    assert {slot.persona for slot in slots} == {"an admin", "a student"}


def test_slot_keys_change_with_chunk_text_generator_and_seed_only():
    chunks = list(corpus_of(3, 1))
    base = plan_slots(chunks, GenerateConfig(), GENERATOR)
    assert len({slot.key for slot in base}) == 3
    assert [s.key for s in plan_slots(chunks, GenerateConfig(), GENERATOR)] == [s.key for s in base]
    assert [s.key for s in plan_slots(chunks, GenerateConfig(max_overlap=0.5), GENERATOR)] == [
        s.key for s in base
    ]
    assert plan_slots(chunks, GenerateConfig(seed=1), GENERATOR)[0].key != base[0].key
    assert plan_slots(chunks, GenerateConfig(), {**GENERATOR, "model": "n"})[0].key != base[0].key
    edited = Chunk(chunks[0].id, chunks[0].text + " more", chunks[0].title, chunks[0].metadata)
    keys = [s.key for s in plan_slots([edited, *chunks[1:]], GenerateConfig(), GENERATOR)]
    assert keys[0] != base[0].key
    assert keys[1:] == [s.key for s in base[1:]]


def test_query_ids_name_chunk_and_index():
    slots = plan_slots(list(corpus_of(1, 1)), GenerateConfig(per_chunk=2), GENERATOR)
    assert [slot.query_id for slot in slots] == ["syn-c0-0", "syn-c0-1"]


def test_parse_weights_and_shard():
    assert parse_weights("lookup=2, conceptual", what="type") == {"lookup": 2.0, "conceptual": 1.0}
    assert parse_shard("1/4") == Shard(1, 4)
    with pytest.raises(InputError, match="unknown type"):
        parse_weights("lookup,nope", what="type", known={"lookup": ""})
    with pytest.raises(InputError, match="bad weight"):
        parse_weights("lookup=x", what="type")
    with pytest.raises(InputError, match="positive weight"):
        parse_weights("lookup=0", what="type")
    with pytest.raises(InputError, match="bad shard"):
        parse_shard("4/4")
    with pytest.raises(InputError, match="bad shard"):
        parse_shard("one")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"backend": "gpt"},
        {"types": {"riddle": 1}},
        {"per_chunk": 0},
        {"max_overlap": 1.5},
        {"temperature": 3.0},
        {"languages": {"klingon": 1.0}},
        {"cross_language": True},
        {"personas": (" ",)},
        {"price_in": -1.0},
        {"max_tokens": 0},
        {"model": " "},
        {"sample": 0},
        {"sample": 1.5},
        {"sample": -0.1},
        {"sample": float("nan")},
    ],
)
def test_bad_config_values_are_input_errors(kwargs):
    with pytest.raises(InputError):
        GenerateConfig(**kwargs)


def test_default_document_stratum_falls_back_to_common_names():
    chunks = [Chunk(f"c{i}", "x", metadata={"doc": "a" if i < 8 else "b"}) for i in range(12)]
    sample = sample_chunks(chunks, 0.01, field="document", seed=0)
    # Two strata (doc a and b), each with its stand-in: the doc field was read as the document.
    assert Counter(chunk.metadata["doc"] for chunk in sample) == {"a": 1, "b": 1}


def test_extractive_questions_take_the_language_of_their_chunk():
    chunks = [Chunk("de1", "x", metadata={"language": "de"}), Chunk("any", "y")]
    slots = plan_slots(chunks, GenerateConfig(backend="extractive", languages={"en": 1}), GENERATOR)
    assert [slot.language for slot in slots] == ["de", "en"]
    llm_slots = plan_slots(chunks, GenerateConfig(languages={"en": 1}), GENERATOR)
    assert [slot.language for slot in llm_slots] == ["de", "en"]  # each chunk's own, by default
    across = plan_slots(chunks, GenerateConfig(languages={"en": 1}, cross_language=True), GENERATOR)
    assert [slot.language for slot in across] == ["en", "en"]  # asked across languages on purpose

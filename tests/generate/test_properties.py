"""Properties that must hold for any input: delimiting, overlap bounds, shards, validation."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from realrecall.corpus import Chunk
from realrecall.generate.answers import parse_question
from realrecall.generate.config import Shard
from realrecall.generate.overlap import lexical_overlap
from realrecall.generate.planner import shard_chunks
from realrecall.generate.templates import delimit_data

TAG_HEAVY = st.text(alphabet=st.sampled_from(list("<>/ passagePASSAGE\n{}x")), max_size=80)


@given(st.one_of(st.text(max_size=200), TAG_HEAVY))
def test_delimited_data_can_never_open_or_close_the_passage_block(text):
    safe = delimit_data(text, "passage").lower()
    assert "</passage" not in safe
    assert "<passage" not in safe


@given(st.text(max_size=120), st.text(max_size=300), st.sampled_from(["en", "de", None, "fr"]))
def test_overlap_is_a_share(question, passage, language):
    value = lexical_overlap(question, passage, language)
    assert 0.0 <= value <= 1.0


@given(st.text(min_size=1, max_size=120))
def test_a_question_copied_from_its_passage_has_overlap_one_or_no_content(text):
    assert lexical_overlap(text, text, "en") in (0.0, 1.0)


@given(st.sets(st.text(min_size=1, max_size=12), max_size=40), st.integers(min_value=1, max_value=6))
def test_shards_partition_any_set_of_chunks(ids, count):
    chunks = [Chunk(chunk_id, "text") for chunk_id in sorted(ids)]
    parts = [shard_chunks(chunks, Shard(index, count)) for index in range(count)]
    assert sorted(c.id for part in parts for c in part) == sorted(ids)


@given(st.text(max_size=500))
def test_any_valid_question_is_one_line_of_bounded_length(text):
    question, reason = parse_question(json.dumps({"question": text}))
    assert (question is None) != (reason is None)
    if question is not None:
        assert "\n" not in question
        assert question == question.strip()
        assert len(question) <= 400

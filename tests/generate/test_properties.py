"""Properties that must hold for any input: delimiting, shards, validation (overlap: test_text_features)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from realrecall.corpus import Chunk
from realrecall.generate.answers import parse_question
from realrecall.generate.config import Shard
from realrecall.generate.planner import shard_chunks
from realrecall.generate.templates import delimit_data

TAG_HEAVY = st.text(alphabet=st.sampled_from(list("<>/ passagePASSAGE\n{}x")), max_size=80)


@given(st.one_of(st.text(max_size=200), TAG_HEAVY))
def test_delimited_data_can_never_open_or_close_the_passage_block(text):
    safe = delimit_data(text, "passage").lower()
    assert "</passage" not in safe
    assert "<passage" not in safe


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

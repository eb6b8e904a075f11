"""Outputs are never half-written: atomic replaces and an append log that survives a torn last line."""

from __future__ import annotations

import json

import pytest

from realrecall.files import AppendLog, atomic_write_text, iter_jsonl, write_jsonl_atomic


def test_atomic_write_leaves_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "results.json"
    atomic_write_text(target, "old")

    def records():
        yield {"a": 1}
        raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(target, records())
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_append_log_repairs_a_torn_last_record(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}\n{"n": 3, "tru')
    with AppendLog(path) as log:
        log.append({"n": 4})
    assert [record["n"] for _, record in iter_jsonl(path)] == [1, 2, 4]


def test_append_log_keeps_complete_files_untouched(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"n": 1}) + "\n")
    with AppendLog(path) as log:
        log.append({"n": 2, "text": "Größe"})
    assert path.read_text(encoding="utf-8").splitlines() == ['{"n": 1}', '{"n": 2, "text": "Größe"}']


def test_append_log_on_a_single_torn_line_starts_empty(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"n": 1')
    with AppendLog(path) as log:
        log.append({"n": 2})
    assert path.read_text() == '{"n": 2}\n'

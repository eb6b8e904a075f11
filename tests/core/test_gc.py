"""The collector paused around bulk steps comes back on, whatever happens, and nests."""

from __future__ import annotations

import gc

import pytest

from realrecall._gc import gc_paused


@gc_paused
def _state() -> bool:
    return gc.isenabled()


@gc_paused
def _fails() -> None:
    raise RuntimeError("boom")


def test_paused_inside_and_back_on_after_even_on_an_error():
    assert gc.isenabled()
    assert _state() is False
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        _fails()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        assert _state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_pauses_restore_only_at_the_outermost():
    @gc_paused
    def outer() -> tuple[bool, bool]:
        inner = _state()
        return inner, gc.isenabled()

    assert outer() == (False, False)
    assert gc.isenabled()


def test_loading_a_gold_set_runs_with_the_collector_paused(tmp_path, monkeypatch):
    # Reading a million queries made the collector walk every object again and again (17 s against 14).
    from realrecall import load_gold
    from realrecall.formats import trec_qrels

    seen: list[bool] = []
    real = trec_qrels.read_judgments
    monkeypatch.setattr(trec_qrels, "read_judgments", lambda *a: seen.append(gc.isenabled()) or real(*a))
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\n")

    assert len(load_gold(path, origin="real")) == 1

    assert seen == [False]
    assert gc.isenabled()

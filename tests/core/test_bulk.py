"""The process-wide switches of the bulk steps: off unless a caller opts in, and never around user code.

``@gc_paused`` on ``load_inputs`` once switched the collector off while a user's ``module:function``
was imported and built and a dense corpus embedded; it also switched it off for any program calling
the library. Now the switches act only inside ``bulk_mode`` (the CLI's), during a bulk step.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from realrecall.bulk import bulk_mode, bulk_step, give_back_memory, in_bulk_mode, small_pages


@bulk_step
def _collector() -> bool:
    return gc.isenabled()


@bulk_step
def _fails() -> None:
    raise RuntimeError("boom")


def test_outside_bulk_mode_a_bulk_step_leaves_the_collector_alone() -> None:
    assert not in_bulk_mode()
    assert _collector() is True
    assert gc.isenabled()


def test_in_bulk_mode_a_step_pauses_the_collector_and_it_comes_back_even_on_an_error() -> None:
    with bulk_mode():
        assert in_bulk_mode()
        assert gc.isenabled()  # only the steps themselves pause it
        assert _collector() is False
        assert gc.isenabled()
        with pytest.raises(RuntimeError):
            _fails()
        assert gc.isenabled()
    assert not in_bulk_mode()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with bulk_mode():
            assert _collector() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_steps_restore_the_collector_only_at_the_outermost() -> None:
    @bulk_step
    def outer() -> tuple[bool, bool]:
        inner = _collector()
        return inner, gc.isenabled()

    with bulk_mode():
        assert outer() == (False, False)
    assert gc.isenabled()


def test_the_opt_in_holds_for_its_own_thread_not_for_others() -> None:
    seen: list[bool] = []
    with bulk_mode():
        thread = threading.Thread(target=lambda: seen.append(in_bulk_mode()))
        thread.start()
        thread.join()
    assert seen == [False]


def test_the_huge_page_hint_is_switched_only_in_bulk_mode() -> None:
    hint = np._core.multiarray._get_madvise_hugepage
    before = hint()
    read = small_pages(hint)
    assert read() == before
    with bulk_mode():
        assert read() is False
    assert hint() == before


def test_memory_is_given_back_only_in_bulk_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[int] = []

    class Libc:
        def malloc_trim(self, pad: int) -> int:
            trims.append(pad)
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    give_back_memory()
    assert trims == []
    with bulk_mode():
        give_back_memory()
    assert trims == [0]


def test_loading_a_gold_set_pauses_the_collector_in_bulk_mode_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading a million queries made the collector walk every object again and again (17 s against 14).
    from realrecall import load_gold
    from realrecall.formats import trec_qrels

    seen: list[bool] = []
    real = trec_qrels.read_judgments
    monkeypatch.setattr(
        trec_qrels, "read_judgments", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k)
    )
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\n")

    assert len(load_gold(path, origin="real")) == 1
    with bulk_mode():
        assert len(load_gold(path, origin="real")) == 1

    assert seen == [True, False]
    assert gc.isenabled()


def test_giving_memory_back_does_not_import_pyarrow() -> None:
    import subprocess

    code = (
        "import sys; from realrecall.bulk import bulk_mode, give_back_memory\n"
        "with bulk_mode(): give_back_memory()\n"
        "assert 'pyarrow' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

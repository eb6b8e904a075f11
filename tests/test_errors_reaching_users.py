"""No bare ValueError or TypeError reaches a user and no assert checks input (issue 9).

What a caller can get wrong is an ``InputError`` (one line with a hint); an invariant the code relies
on is an explicit check, not an ``assert`` (which ``python -O`` removes).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import realrecall
from realrecall.calibrate.statistics import bootstrap_interval, z_value
from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.evaluate.metrics import precision_at
from realrecall.evaluate.retrievers import CachedEmbedder, DenseRetriever
from realrecall.generate.dedup import NearDuplicateIndex
from realrecall.generate.templates import builtin_prompt, render

SOURCE = Path(realrecall.__file__).parent


def _offences(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(SOURCE.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Assert):
            found.append(f"{where}: assert")
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id in ("ValueError", "TypeError"):
                found.append(f"{where}: raise {raised.id}")
    return found


def test_the_package_raises_no_bare_value_or_type_error_and_asserts_nothing():
    offences = [offence for path in sorted(SOURCE.rglob("*.py")) for offence in _offences(path)]
    assert offences == []


class WrongRows:
    """An embedder that answers one row too few."""

    name = "wrong-rows"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((max(0, len(texts) - 1), 3), dtype=np.float32)


def test_an_embedder_with_the_wrong_number_of_rows_is_an_input_error(tmp_path):
    corpus = Corpus((Chunk("a", "one"), Chunk("b", "two")))
    with pytest.raises(InputError, match=r"embedder 'wrong-rows' returned shape \(1, 3\) for 2 texts"):
        DenseRetriever(corpus, WrongRows())
    with pytest.raises(InputError, match="one row per text"):
        CachedEmbedder(WrongRows(), tmp_path).embed(["x", "y"])


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: NearDuplicateIndex(threshold=0), "near-duplicate threshold must be in (0, 1], got 0"),
        (lambda: z_value(1.5), "confidence must be between 0 and 1, got 1.5"),
        (
            lambda: bootstrap_interval([0.1, 0.2], rng=np.random.default_rng(0), method="magic"),
            "bootstrap must be one of percentile, bca, got 'magic'; e.g. percentile",
        ),
        (lambda: precision_at(None, None), "precision needs a cutoff k; ask for precision@K"),  # type: ignore[arg-type]
        (
            lambda: render(builtin_prompt("question_generation"), {}),
            "realrecall/prompts/question_generation.md: prompt 'question_generation' needs values for",
        ),
    ],
)
def test_a_wrong_value_from_a_caller_is_one_line_with_a_hint(call, expected):
    with pytest.raises(InputError) as info:
        call()
    assert expected in str(info.value)
    assert info.value.hint

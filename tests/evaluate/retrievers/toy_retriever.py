"""A retriever added the documented way: this one file, plus one ``register(RETRIEVER)`` call.

It ranks chunks in corpus order (or reversed), so a test can tell from the ranking that its options
arrived. Every kind of option the text conversion knows is here: int, float, bool, str, Path, optional.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from realrecall.corpus import Corpus
from realrecall.evaluate.retrievers import RetrieverSpec, RunSettings


@dataclass(frozen=True, kw_only=True)
class ToyOptions:
    reverse: Annotated[bool, "rank the corpus back to front"] = False
    limit: Annotated[int | None, "return at most this many ids"] = None
    weight: Annotated[float, "a number shown in the description"] = 1.0
    label: Annotated[str, "text shown in the description"] = "toy"
    notes: Annotated[Path | None, "a path shown in the description"] = None


class ToyRetriever:
    name = "toy"

    def __init__(self, corpus: Corpus, options: ToyOptions) -> None:
        self._ids = list(reversed(corpus.ids)) if options.reverse else list(corpus.ids)
        self._limit = options.limit
        self.description = f"{options.label} weight={options.weight} notes={options.notes}"

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        cut = min(k, self._limit) if self._limit is not None else k
        return [self._ids[:cut] for _ in queries]


def build(corpus: Corpus, options: ToyOptions, settings: RunSettings) -> ToyRetriever:
    return ToyRetriever(corpus, options)


RETRIEVER = RetrieverSpec(name="toy", options=ToyOptions, build=build, summary="corpus order, for tests")

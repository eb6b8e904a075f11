"""Fixtures for the retriever tests: small corpora written here and deterministic fake embedders."""

from __future__ import annotations

import pytest

from evaluate.retrievers.fakes import HashingEmbedder
from realrecall.corpus import Chunk, Corpus


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def pets_corpus() -> Corpus:
    """Five chunks about distinct topics, one with a title, so a query has one clear best match."""
    return Corpus(
        (
            Chunk("cats", "Cats sleep most of the day and purr when content."),
            Chunk("dogs", "Dogs bark at strangers and love running in the park."),
            Chunk("fish", "Goldfish swim in bowls and need clean water.", title="Aquarium care"),
            Chunk("birds", "Parrots can learn words and mimic human speech."),
            Chunk("stocks", "Stock markets fell sharply after the interest rate decision."),
        )
    )

"""Choosing a retriever by name."""

from __future__ import annotations

from types import ModuleType

import pytest

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.evaluate.retrievers import RETRIEVERS, Retriever, build_retriever


def test_unknown_name_lists_the_registry_and_the_custom_form(pets_corpus: Corpus) -> None:
    with pytest.raises(InputError) as caught:
        build_retriever("bm26", pets_corpus)
    assert str(caught.value) == (
        "unknown retriever 'bm26'; choose from bm25, dense, local-dense, hybrid, chroma, lancedb, qdrant, "
        "or module:function"
    )


def test_registry_holds_the_built_in_names() -> None:
    assert list(RETRIEVERS) == ["bm25", "dense", "local-dense", "hybrid", "chroma", "lancedb", "qdrant"]


def test_a_built_retriever_satisfies_the_protocol(pets_corpus: Corpus) -> None:
    retriever = build_retriever(" bm25 ", pets_corpus)
    assert isinstance(retriever, Retriever)
    assert retriever.description


def test_the_public_api_lists_everything_it_exports() -> None:
    import realrecall.evaluate.retrievers as package

    for name in package.__all__:  # exported lazily: vars() holds only what is loaded
        getattr(package, name)
    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, ModuleType) and name != "annotations"
    }
    assert public == set(package.__all__)

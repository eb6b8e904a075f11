"""One Embedder protocol: the retrievers' (issue 9); every embedder in the package satisfies it."""

from __future__ import annotations

import importlib
import pkgutil

import realrecall
from realrecall.evaluate.retrievers import CachedEmbedder, Embedder
from realrecall.evaluate.retrievers.base import Embedder as BaseEmbedder
from realrecall.llm import LLMConfig, OpenAIEmbedder


def test_there_is_one_embedder_protocol():
    found = {}
    for info in pkgutil.walk_packages(realrecall.__path__, "realrecall."):
        if ".__main__" in info.name:
            continue
        module = importlib.import_module(info.name)
        value = getattr(module, "Embedder", None)
        if value is not None:
            found[info.name] = value
    assert found
    assert {id(value) for value in found.values()} == {id(BaseEmbedder)}
    assert Embedder is BaseEmbedder


def test_the_endpoint_embedder_and_the_cache_are_embedders(tmp_path):
    endpoint = OpenAIEmbedder("m", LLMConfig(base_url="http://127.0.0.1:9/v1"))
    assert isinstance(endpoint, Embedder)
    assert isinstance(CachedEmbedder(endpoint, tmp_path), Embedder)

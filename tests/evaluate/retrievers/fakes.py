"""A deterministic fake embedder for the retriever tests (no model, no network)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

DIM = 64


class HashingEmbedder:
    """Bag of words hashed into 64 dimensions: texts sharing words get similar vectors, deterministically.

    ``calls`` and ``texts_seen`` count the work asked of it, so tests can prove the cache saved it.
    """

    def __init__(self, name: str = "fake-hashing-64") -> None:
        self.name = name
        self.calls = 0
        self.texts_seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_seen.extend(texts)
        vectors = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % DIM
                vectors[row, bucket] += 1.0
        return vectors

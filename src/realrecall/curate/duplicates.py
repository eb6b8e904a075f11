"""Near-duplicate passages: MinHash over word shingles, candidates from LSH, confirmed exactly.

Two passages are near-duplicates when the Jaccard similarity of their sets of word ``shingle``-grams
(case-folded words, ``realrecall.text_features.shingles``) reaches ``threshold``. MinHash LSH
(datasketch, fixed seed) proposes candidate pairs without comparing every pair; each candidate is then
confirmed with the exact Jaccard of the two shingle sets, so the pairs reported do not depend on
MinHash's estimation error. Clusters are the connected groups of confirmed pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from realrecall.corpus import Corpus
from realrecall.errors import InputError
from realrecall.text_features import jaccard, shingles

__all__ = ["DuplicatePair", "NearDuplicates", "find_near_duplicates"]

_SCHEME = "affine32"


@dataclass(frozen=True)
class DuplicatePair:
    """Two passage ids (in corpus order) and the exact Jaccard similarity of their shingles."""

    a: str
    b: str
    similarity: float


@dataclass(frozen=True)
class NearDuplicates:
    """Confirmed pairs and clusters (each in corpus order; clusters ordered by their first member)."""

    pairs: tuple[DuplicatePair, ...]
    clusters: tuple[tuple[str, ...], ...]
    threshold: float
    shingle: int

    def __post_init__(self) -> None:
        adjacency: dict[str, dict[str, float]] = {}
        for pair in self.pairs:
            adjacency.setdefault(pair.a, {})[pair.b] = pair.similarity
            adjacency.setdefault(pair.b, {})[pair.a] = pair.similarity
        object.__setattr__(self, "_adjacency", adjacency)

    def cluster_records(self) -> list[dict[str, Any]]:
        """One JSON-ready record per cluster: its ids and the confirmed pairs inside it."""
        records = []
        for number, cluster in enumerate(self.clusters, start=1):
            members = set(cluster)
            pairs = [{"a": p.a, "b": p.b, "similarity": p.similarity} for p in self.pairs if p.a in members]
            records.append({"cluster": number, "ids": list(cluster), "pairs": pairs})
        return records

    def neighbours(self, passage_id: str) -> dict[str, float]:
        """The passages paired with ``passage_id`` directly (not through a chain), with similarity."""
        return dict(self._adjacency.get(passage_id, {}))  # type: ignore[attr-defined]


def find_near_duplicates(
    corpus: Corpus,
    *,
    threshold: float = 0.8,
    shingle: int = 3,
    num_perm: int = 128,
    seed: int = 1,
) -> NearDuplicates:
    """Find the pairs of passages whose shingle Jaccard similarity is at least ``threshold``."""
    if not 0.0 < threshold <= 1.0:
        raise InputError(f"threshold must be in (0, 1], got {threshold}")
    if shingle < 1:
        raise InputError(f"shingle size must be at least 1, got {shingle}")
    sets = {chunk.id: shingles(chunk.searchable_text(), shingle) for chunk in corpus}
    sets = {pid: s for pid, s in sets.items() if s}
    order = {pid: position for position, pid in enumerate(corpus.ids)}
    from datasketch import MinHash, MinHashLSH  # heavy (scipy): loaded only when duplicates are sought

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    sketches = {}
    # Drawing the permutations is most of MinHash's set-up cost; they depend only on num_perm and seed.
    # The scheme is named so sketches stay comparable whatever a later datasketch makes the default.
    permutations = MinHash(num_perm=num_perm, seed=seed, scheme=_SCHEME).permutations
    for pid, shingle_set in sets.items():
        sketch = MinHash(num_perm=num_perm, seed=seed, permutations=permutations, scheme=_SCHEME)
        sketch.update_batch([s.encode() for s in shingle_set])  # a minimum: order does not matter
        sketches[pid] = sketch
        lsh.insert(pid, sketch)
    pairs = []
    for pid, sketch in sketches.items():
        for other in lsh.query(sketch):
            if order[other] <= order[pid]:
                continue
            similarity = jaccard(sets[pid], sets[other])
            if similarity >= threshold:
                pairs.append(DuplicatePair(pid, other, round(similarity, 6)))
    pairs.sort(key=lambda p: (order[p.a], order[p.b]))
    return NearDuplicates(tuple(pairs), _clusters(pairs, order), threshold, shingle)


def _clusters(pairs: list[DuplicatePair], order: Mapping[str, int]) -> tuple[tuple[str, ...], ...]:
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for pair in pairs:
        ra, rb = root(pair.a), root(pair.b)
        if ra != rb:
            parent[max(ra, rb, key=order.__getitem__)] = min(ra, rb, key=order.__getitem__)
    groups: dict[str, list[str]] = {}
    for node in parent:
        groups.setdefault(root(node), []).append(node)
    clusters = [tuple(sorted(members, key=order.__getitem__)) for members in groups.values()]
    return tuple(sorted(clusters, key=lambda c: order[c[0]]))

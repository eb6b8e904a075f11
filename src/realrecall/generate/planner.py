"""Which questions to ask: chunk selection (sample, shard) and one slot per question to write.

Every choice is a pure function of the seed and the chunk's id, never of the chunk's position or of
the other chunks, so adding or deleting chunks leaves the choices for the others unchanged (and their
cached answers valid):

- ``--sample N`` draws N chunks stratified by a metadata field (``document`` by default, or failing
  that ``doc``, ``doc_id``, ``document_id``, ``source``, ``file``): each stratum gets its share of N by
  largest remainder, and takes its chunks of lowest ``hash(seed, id)``. Chunks without the field form
  one stratum of their own.
- ``--shard i/n`` keeps the chunks whose ``sha256(id) mod n == i``: shards of one sample are disjoint
  and together cover it, whatever machine runs them.
- Each of the ``--per-chunk`` slots of a chunk draws its question type, language and persona from the
  weights, with a random generator seeded by ``(seed, chunk id, slot index)``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.generate.config import GenerateConfig, Shard

__all__ = [
    "Slot",
    "allocate",
    "check_stratify_field",
    "chunk_language",
    "inclusion_probabilities",
    "plan_slots",
    "sample_chunks",
    "select_chunks",
    "shard_chunks",
    "stratum",
]


@dataclass(frozen=True)
class Slot:
    """One question to write: its chunk, index among the chunk's questions, and what to ask for.

    ``key`` is the cache key: a hash of the chunk's content, the generator (backend, model, prompt,
    parameters, style examples), the seed and what is asked for. Same key, same question.
    """

    chunk: Chunk
    index: int
    type: str
    language: str
    persona: str | None
    key: str

    @property
    def query_id(self) -> str:
        return f"syn-{self.chunk.id}-{self.index}"


def _hash_int(*parts: object) -> int:
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def shard_chunks(chunks: Sequence[Chunk], shard: Shard) -> list[Chunk]:
    """The chunks of ``shard`` (see module doc), in their corpus order."""
    return [chunk for chunk in chunks if _hash_int("shard", chunk.id) % shard.count == shard.index]


def sample_chunks(chunks: Sequence[Chunk], n: int, *, field: str, seed: int) -> list[Chunk]:
    """A stratified sample of ``n`` chunks (all of them when ``n`` >= their number), in corpus order."""
    if n >= len(chunks):
        return list(chunks)
    strata: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        strata[stratum(chunk, field)].append(chunk)
    quotas = allocate({name: len(members) for name, members in strata.items()}, n)
    chosen: set[str] = set()
    for name, members in strata.items():
        ranked = sorted(members, key=lambda chunk: (_hash_int("sample", seed, chunk.id), chunk.id))
        chosen.update(chunk.id for chunk in ranked[: quotas[name]])
    return [chunk for chunk in chunks if chunk.id in chosen]


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """How many of ``n`` sampled chunks each stratum gets: one each when there is room, so no stratum
    is missing from the sample, then the rest in proportion to size (largest remainders).

    Small strata are thereby over-sampled; their questions carry a higher inclusion probability and
    count less in weighted figures, so the sample still estimates the corpus.
    """
    if n >= sum(sizes.values()):
        return dict(sizes)
    if n < len(sizes):
        return _largest_remainder(sizes, n)
    rest = _largest_remainder({name: size - 1 for name, size in sizes.items()}, n - len(sizes))
    return {name: 1 + rest[name] for name in sizes}


def _largest_remainder(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    total = sum(sizes.values())
    exact = {name: n * size / total for name, size in sizes.items()}
    quotas = {name: int(share) for name, share in exact.items()}
    left = n - sum(quotas.values())
    by_remainder = sorted(exact, key=lambda name: (-(exact[name] - quotas[name]), name))
    for name in by_remainder[:left]:
        quotas[name] += 1
    return quotas


def inclusion_probabilities(corpus: Corpus, config: GenerateConfig) -> dict[str, float]:
    """Each sampled chunk's probability of being in the sample: its stratum's quota over its size.

    Recorded on every synthetic question (``inclusion_probability``) so that figures over the sample
    can be weighted by ``1/p`` (Horvitz-Thompson) to estimate the whole corpus: a stratum sampled at
    1% counts ten times a stratum sampled at 10%. Without ``sample`` every chunk is in: p = 1.
    """
    chunks = list(corpus)
    if config.sample is None or config.sample >= len(chunks):
        return {chunk.id: 1.0 for chunk in chunks}
    names = {chunk.id: stratum(chunk, config.stratify_by) for chunk in chunks}
    sizes: dict[str, int] = defaultdict(int)
    for name in names.values():
        sizes[name] += 1
    quotas = allocate(sizes, config.sample)
    return {chunk_id: quotas[name] / sizes[name] for chunk_id, name in names.items()}


def select_chunks(corpus: Corpus, config: GenerateConfig) -> list[Chunk]:
    """The chunks a run writes questions for: the sample (if any), then the shard (if any)."""
    chunks = list(corpus)
    if config.sample is not None:
        check_stratify_field(corpus, config.stratify_by)
        chunks = sample_chunks(chunks, config.sample, field=config.stratify_by, seed=config.seed)
    if config.shard is not None:
        chunks = shard_chunks(chunks, config.shard)
    return chunks


def check_stratify_field(corpus: Corpus, field: str) -> None:
    """Refuse a stratification field that no chunk has: it would silently make one stratum (a typo,
    most likely). The default ``document`` is exempt: without it the sample is simply unstratified."""
    if field == "document" or any(field in chunk.metadata for chunk in corpus):
        return
    known = sorted({name for chunk in corpus for name in chunk.metadata})
    close = difflib.get_close_matches(field, known, n=1)
    if not known:
        hint = "the chunks have no metadata: leave stratify_by (--stratify-by) out"
    else:
        hint = (
            ("did you mean " + repr(close[0]) + "? " if close else "")
            + "fields the chunks have: "
            + ", ".join(known[:20])
            + (", ..." if len(known) > 20 else "")
        )
    raise InputError(
        f"no chunk has the metadata field {field!r} to stratify the sample by", path=corpus.path, hint=hint
    )


def chunk_language(chunk: Chunk) -> str | None:
    """The language a chunk's metadata names (``language`` or ``lang``), if any."""
    value = chunk.metadata.get("language", chunk.metadata.get("lang"))
    return value if isinstance(value, str) and value else None


STRATUM_ALIASES = ("doc", "doc_id", "document_id", "source", "file")


def stratum(chunk: Chunk, field: str) -> str:
    """The sample stratum of a chunk: its metadata value for ``field`` ("" when absent).

    For the default field ``document`` the usual other names of a chunk's document are tried too.
    """
    value = chunk.metadata.get(field)
    if value is None and field == "document":
        value = next((chunk.metadata[alias] for alias in STRATUM_ALIASES if alias in chunk.metadata), None)
    return "" if value is None else json.dumps(value, sort_keys=True)


def _weighted(rng: random.Random, weights: Mapping[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, weights=[weights[name] for name in names], k=1)[0]


def plan_slots(
    chunks: Sequence[Chunk], config: GenerateConfig, generator: Mapping[str, object]
) -> list[Slot]:
    """One slot per question: ``per_chunk`` for each chunk; ``generator`` describes what writes them.

    ``generator`` (backend, model, prompt hash, parameters, style example ids) goes into every key.
    """
    generator_text = json.dumps(generator, sort_keys=True)
    slots: list[Slot] = []
    for chunk in chunks:
        for index in range(config.per_chunk):
            rng = random.Random(_hash_int("slot", config.seed, chunk.id, index))
            question_type = _weighted(rng, config.types)
            language = _weighted(rng, config.languages)
            if config.backend == "extractive":
                # A sentence cut from the chunk is in the chunk's language, whatever was asked for.
                language = chunk_language(chunk) or language
            persona = rng.choice(config.personas) if config.personas else None
            key_material = json.dumps(
                [chunk.content_hash, generator_text, config.seed, index, question_type, language, persona]
            )
            key = hashlib.sha256(key_material.encode()).hexdigest()
            slots.append(Slot(chunk, index, question_type, language, persona, key))
    return slots

"""Which questions to ask: chunk selection (sample, shard) and one slot per question to write.

Every choice is a pure function of the seed and the chunk's id, never of the chunk's position or of
the other chunks, so adding or deleting chunks leaves the choices for the others unchanged (and their
cached answers valid):

- ``--sample R`` (a share, 0 < R < 1) keeps the chunks whose ``u = hash(seed, id)``, a number in
  [0, 1), is below R: a chunk's membership depends on its id and the seed only, so a corpus that grows
  or shrinks keeps every sampled chunk that is still there, and takes new chunks at the same rate.
  ``--sample N`` (a whole count >= 1) stands for the rate N / the number of chunks, fixed by the first
  run over an output and kept by later runs with the same N (``sample_rate``), so a grown corpus does
  not push sampled chunks out either. Every stratum of a metadata field (``document`` by default, or
  failing that ``doc``, ``doc_id``, ``document_id``, ``source``, ``file``; chunks without it form one
  stratum) is represented: a stratum with no chunk below R takes its chunk of lowest ``u`` instead.
  That stand-in is the only choice that can change as its stratum grows. A chunk's inclusion
  probability follows: ``R + (1 - R)^n / n`` in a stratum of n chunks.
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
from typing import TYPE_CHECKING

from realrecall.corpus import Chunk, Corpus
from realrecall.errors import InputError
from realrecall.generate.question_types import PAIR_TYPES

if TYPE_CHECKING:
    from realrecall.generate.config import GenerateConfig, Shard

__all__ = [
    "Slot",
    "check_stratify_field",
    "chunk_language",
    "inclusion_probabilities",
    "plan_slots",
    "sample_chunks",
    "sample_rate",
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
    partner: Chunk | None = None
    """The second chunk of a question over two chunks (``--multi-chunk``); its gold holds both."""
    pair_drawn: bool = False
    """Whether the ``multi_chunk`` draw asked for a question over two chunks: with ``partner`` None,
    the chunk had no related chunk and the slot asks over one (counted in the summary's ``pairs``)."""

    @property
    def query_id(self) -> str:
        return f"syn-{self.chunk.id}-{self.index}"


def _hash_int(*parts: object) -> int:
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def shard_chunks(chunks: Sequence[Chunk], shard: Shard) -> list[Chunk]:
    """The chunks of ``shard`` (see module doc), in their corpus order."""
    return [chunk for chunk in chunks if _hash_int("shard", chunk.id) % shard.count == shard.index]


def sample_rate(config: GenerateConfig, n_chunks: int, remembered: float | None = None) -> float | None:
    """The share of the chunks a sample keeps (None: no sample; 1.0: every chunk).

    ``--sample`` below 1 is the share itself. A count N is N / ``n_chunks``, unless ``remembered`` (the
    rate an earlier run over the same output used for the same N) is given: then that rate is kept, so
    that a corpus that grew does not push chunks out of the sample.
    """
    if config.sample is None:
        return None
    if config.sample < 1:
        return float(config.sample)
    if remembered is not None and 0.0 < remembered <= 1.0:
        return remembered
    return min(1.0, config.sample / max(1, n_chunks))


def _unit(seed: int, chunk_id: str) -> float:
    """A number in [0, 1) fixed by the seed and the chunk id: the chunk's draw for the sample."""
    return _hash_int("sample", seed, chunk_id) / 2**64


def _strata(chunks: Sequence[Chunk], field: str) -> dict[str, list[Chunk]]:
    strata: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        strata[stratum(chunk, field)].append(chunk)
    return strata


def _probability(rate: float, n: int) -> float:
    """A chunk's inclusion probability in a stratum of ``n``: its draw is below the rate, or no draw
    of its stratum is (probability ``(1 - rate)^n``) and its own is the lowest (1 in n)."""
    return min(1.0, rate + (1.0 - rate) ** n / n)


def sample_chunks(chunks: Sequence[Chunk], rate: float, *, field: str, seed: int) -> list[Chunk]:
    """The chunks a sample at ``rate`` keeps (see module doc), in corpus order."""
    if rate >= 1.0:
        return list(chunks)
    chosen: set[str] = set()
    for members in _strata(chunks, field).values():
        draws = {chunk.id: _unit(seed, chunk.id) for chunk in members}
        below = [chunk_id for chunk_id, draw in draws.items() if draw < rate]
        chosen.update(below or [min(draws, key=lambda chunk_id: (draws[chunk_id], chunk_id))])
    return [chunk for chunk in chunks if chunk.id in chosen]


def inclusion_probabilities(
    corpus: Corpus, config: GenerateConfig, rate: float | None = None
) -> dict[str, float]:
    """Each chunk's probability of being in the sample (``R + (1 - R)^n / n``, see module doc).

    Recorded on every synthetic question (``inclusion_probability``) so that figures over the sample
    can be weighted by ``1/p`` (Horvitz-Thompson) to estimate the whole corpus. Without ``sample``
    every chunk is in: p = 1. ``rate`` is the sample's rate (default: ``sample_rate`` of the corpus).
    """
    chunks = list(corpus)
    if rate is None:
        rate = sample_rate(config, len(chunks))
    if rate is None or rate >= 1.0:
        return {chunk.id: 1.0 for chunk in chunks}
    return {
        chunk.id: _probability(rate, len(members))
        for members in _strata(chunks, config.stratify_by).values()
        for chunk in members
    }


def select_chunks(corpus: Corpus, config: GenerateConfig, rate: float | None = None) -> list[Chunk]:
    """The chunks a run writes questions for: the sample (if any), then the shard (if any).

    ``rate``: the sample's rate (default: ``sample_rate`` of the corpus, nothing remembered).
    """
    chunks = list(corpus)
    if config.sample is not None:
        check_stratify_field(corpus, config.stratify_by)
        chosen = rate if rate is not None else sample_rate(config, len(chunks))
        chunks = sample_chunks(
            chunks, 1.0 if chosen is None else chosen, field=config.stratify_by, seed=config.seed
        )
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
    chunks: Sequence[Chunk],
    config: GenerateConfig,
    generator: Mapping[str, object],
    *,
    languages: Mapping[str, str] | None = None,
    partners: Mapping[str, Chunk] | None = None,
) -> list[Slot]:
    """One slot per question: ``per_chunk`` for each chunk; ``generator`` describes what writes them.

    ``generator`` (backend, model, prompt hash, parameters, style example ids) goes into every key.
    ``languages`` maps a chunk id to its language (``generate.languages``): a question is asked in
    its chunk's language unless ``cross_language`` draws it from the weights. ``partners`` maps a
    chunk id to a related chunk: a ``multi_chunk`` share of the slots (drawn from seed, chunk id and
    index, apart from the other draws) asks a question over both (``generate.pairs``).
    """
    generator_text = json.dumps(generator, sort_keys=True)
    slots: list[Slot] = []
    for chunk in chunks:
        for index in range(config.per_chunk):
            rng = random.Random(_hash_int("slot", config.seed, chunk.id, index))
            question_type = _weighted(rng, config.types)
            # Drawn even when unused, so that the draws after it (and the keys) stay as they were.
            language = _weighted(rng, config.languages or {"en": 1.0})
            if not config.cross_language or config.backend == "extractive":
                # The chunk's own language (a sentence cut from it is in it, whatever was asked for).
                own = (languages or {}).get(chunk.id) or chunk_language(chunk)
                language = own or (language if config.languages else "en")
            persona = rng.choice(config.personas) if config.personas else None
            identity: list[object] = [
                chunk.content_hash,
                generator_text,
                config.seed,
                index,
                question_type,
                language,
                persona,
            ]
            drawn = _hash_int("multi", config.seed, chunk.id, index) / 2**64 < config.multi_chunk
            partner = (partners or {}).get(chunk.id) if drawn else None
            if partner is not None:
                names = sorted(PAIR_TYPES)
                question_type = names[_hash_int("pair type", config.seed, chunk.id, index) % len(names)]
                identity = [*identity[:4], question_type, *identity[5:], partner.content_hash]
            key = hashlib.sha256(json.dumps(identity).encode()).hexdigest()
            slots.append(Slot(chunk, index, question_type, language, persona, key, partner, drawn))
    return slots

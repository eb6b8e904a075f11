"""evaluate's retrieval and scoring on the Ray engine: one Ray Data job for every gold set, or one Ray
task for each of many evaluations (``retrieve_and_score_each``: ``realrecall run`` over many pipelines).

The queries of all the gold sets go out in parts of whole search batches (64 queries, in each gold
set's own order, as ``retrieve`` asks them locally), to a pool of retrieval actors that each build the
retriever once (from its recipe, or as sent when it has none) and search; each part's per-query metrics
are computed where it was searched (``score_queries`` on the part). A run made elsewhere is scored in
stateless tasks. Back on the driver, each gold set's ranked lists become its run and its per-query
values its ``QueryScores``, in trec_eval's order: values equal to the local engine's to the last bit
(a query's values depend on its own judgments and ranking only). Means, slices and every other
statistic are computed by ``evaluate`` from these, as for the local engine.

Over many evaluations, each one's retriever is built in its own task, which retrieves and scores all
its gold sets as the local engine does (``score_queries`` on each whole gold set): the tasks run side
by side on the cluster, one evaluation each.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from realrecall.engine.cluster import ActorPool, Cluster, Stage
from realrecall.errors import InputError
from realrecall.evaluate.retrievers.base import retrieve
from realrecall.evaluate.retrievers.dense import (
    DenseOptions,
    dense_embedder,
    embed_corpus,
    embed_corpus_at_once,
)
from realrecall.evaluate.retrievers.hybrid import HybridOptions, part
from realrecall.evaluate.retrievers.local_dense import (
    LOCAL_SLICE,
    LocalDenseOptions,
    SentenceTransformerEmbedder,
    embedder_name,
    model_path,
)
from realrecall.evaluate.retrievers.options import CorpusEmbeddings, make_options
from realrecall.evaluate.retrievers.registry import About, DeferredRetriever, RetrieverRecipe, find_spec
from realrecall.evaluate.scoring import QueryScores, score_queries
from realrecall.gold import GoldSet
from realrecall.runs import Run

if TYPE_CHECKING:
    from realrecall.evaluate.budget import ContextTokens
    from realrecall.evaluate.retrievers import Retriever

__all__ = ["Job", "Scoring", "retrieve_and_score", "retrieve_and_score_each"]

# Queries a search call gets: retrieve's own batch, so each search sees the batches it sees locally.
SEARCH_BATCH = 64
# A scoring task's queries when a run is scored (no search): enough that a task's cost is the work.
SCORE_PART = 4096


@dataclass(frozen=True)
class Scoring:
    """How a part's queries are scored: ``score_queries``' arguments but the gold set and the run."""

    metrics: tuple[str, ...]
    relevance_threshold: int
    tokens: ContextTokens | None


@dataclass(frozen=True)
class _Part:
    """Queries of one gold set: their text (in the gold set's order) and judgments, and their ranked
    lists when a run is scored (only the queries the run has)."""

    gold: int
    queries: dict[str, str]
    judged: dict[str, Mapping[str, int]]
    ranked: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class _Done:
    ranked: dict[str, list[str]] | None
    scored: QueryScores
    about: About | None = None


@dataclass(frozen=True)
class Job:
    """One evaluation's retrieval and scoring: its gold sets (passages resolved) and how.

    ``retriever`` or ``run`` (the other None); ``name(retriever)`` names the run made of the
    retriever's rankings (as ``evaluate`` names it).
    """

    gold_sets: Sequence[GoldSet]
    retriever: Retriever | None
    run: Run | None
    depth: int
    scoring: Scoring
    name: Callable[[Any], str]


def retrieve_and_score(
    cluster: Cluster, job: Job, *, progress: Callable[[int, int], None] | None = None
) -> list[tuple[Run, QueryScores]]:
    """Each gold set's run (the retriever's ranking of its queries, or the job's run) and per-query
    scores, as one Ray Data job. ``progress(done, total)`` counts the queries of every gold set."""
    gold_sets, retriever, run, scoring = job.gold_sets, job.retriever, job.run, job.scoring
    parts = _parts(gold_sets, run)
    if retriever is not None:
        source = _corpus_embedded(cluster, retriever)
        setup = functools.partial(_searcher, source, job.depth, scoring)
        stage = Stage("retrieval", setup=setup, actors=cluster.settings.retrieval_actors)
    else:
        stage = Stage("scoring", function=functools.partial(_score_given, scoring=scoring))
    sizes = [len(part.queries) for part in parts]
    # A run scored here retrieves nothing: no "retrieving" count, as locally.
    done: list[_Done] = cluster.map(parts, stage, sizes=sizes, progress=progress if run is None else None)
    _built_as(retriever, next((item.about for item in done if item.about is not None), None))
    results = []
    for index, gold in enumerate(gold_sets):
        mine = [item for part, item in zip(parts, done, strict=True) if part.gold == index]
        if run is not None:
            gold_run = run
        else:
            ranked = dict(chain.from_iterable((item.ranked or {}).items() for item in mine))
            gold_run = Run.from_lists(ranked, name=job.name(retriever))
        results.append((gold_run, _joined(gold, [item.scored for item in mine], scoring)))
    return results


def retrieve_and_score_each(
    cluster: Cluster, jobs: Sequence[Job], *, progress: Callable[[int, int], None] | None = None
) -> list[list[tuple[Run, QueryScores]]]:
    """Each job's ``retrieve_and_score``, one Ray task a job (its retriever built once, there), in the
    jobs' order. ``progress(done, total)`` counts the jobs."""
    payloads = [
        _Whole(job.gold_sets, _source(job.retriever) if job.retriever is not None else None, job.run,
               job.depth, job.scoring, job.name)
        for job in jobs
    ]  # fmt: skip
    done: list[_WholeDone] = cluster.tasks(_whole, payloads, what="evaluation", progress=progress)
    for job, item in zip(jobs, done, strict=True):
        _built_as(job.retriever, item.about)
    return [item.computed for item in done]


@dataclass(frozen=True)
class _Whole:
    """What a task of ``retrieve_and_score_each`` gets: a job, its retriever as its recipe."""

    gold_sets: Sequence[GoldSet]
    source: RetrieverRecipe | Retriever | None
    run: Run | None
    depth: int
    scoring: Scoring
    name: Callable[[Any], str]


@dataclass(frozen=True)
class _WholeDone:
    computed: list[tuple[Run, QueryScores]]
    about: About | None


def _whole(job: _Whole) -> _WholeDone:
    """In a Ray task: one evaluation's gold sets retrieved and scored as the local engine does."""
    retriever = job.source() if isinstance(job.source, RetrieverRecipe) else job.source
    computed = []
    for gold in job.gold_sets:
        if retriever is not None:
            ranked = retrieve(
                retriever, {q.query_id: q.query for q in gold}, job.depth, batch_size=SEARCH_BATCH
            )
            gold_run = Run.from_lists(ranked, name=job.name(retriever))
        elif job.run is not None:
            gold_run = job.run
        else:
            raise RuntimeError("an evaluation with neither a retriever nor a run")
        scoring = job.scoring
        scores = score_queries(
            gold, gold_run, list(scoring.metrics), relevance_threshold=scoring.relevance_threshold,
            corpus=scoring.tokens,
        )  # fmt: skip
        computed.append((gold_run, scores))
    return _WholeDone(computed, About.of(retriever) if retriever is not None else None)


def _built_as(retriever: Retriever | None, about: About | None) -> None:
    """What the retriever built on the cluster reported of itself, for a retriever deferred here."""
    if isinstance(retriever, DeferredRetriever) and about is not None:
        retriever.built_as(about)


def _parts(gold_sets: Sequence[GoldSet], run: Run | None) -> list[_Part]:
    """Every gold set's queries in parts: whole search batches, a few parts an actor; a run's in
    bigger parts (scoring alone is cheap next to moving the data)."""
    total = sum(len(gold) for gold in gold_sets)
    if run is None:
        # Parts of whole batches, about 8 a CPU, at most 16 batches each (the bar moves, the load evens).
        batches = math.ceil(total / SEARCH_BATCH)
        size = SEARCH_BATCH * min(16, max(1, batches // 16))
    else:
        size = SCORE_PART
    parts = []
    for index, gold in enumerate(gold_sets):
        queries = gold.queries
        for start in range(0, len(queries), size):
            chosen = queries[start : start + size]
            ranked = None
            if run is not None:
                ranked = {q.query_id: list(run.ranked(q.query_id)) for q in chosen if q.query_id in run}
            parts.append(
                _Part(
                    gold=index,
                    queries={q.query_id: q.query for q in chosen},
                    judged={q.query_id: q.gold for q in chosen},
                    ranked=ranked,
                )
            )
    return parts


def _source(retriever: Retriever) -> RetrieverRecipe | Retriever:
    """What the actors build the retriever from: its recipe (``build_retriever`` attaches one), else
    the object itself, sent as it is. A recipe's ``index_progress`` is the driver's bar: not sent."""
    recipe = getattr(retriever, "recipe", None)
    if not isinstance(recipe, RetrieverRecipe) and isinstance(retriever, DeferredRetriever):
        recipe = retriever.recipe
    if not isinstance(recipe, RetrieverRecipe):
        return retriever
    if recipe.settings.index_progress is None:
        return recipe
    return dataclasses.replace(recipe, settings=dataclasses.replace(recipe.settings, index_progress=None))


def _corpus_embedded(cluster: Cluster, retriever: Retriever) -> RetrieverRecipe | Retriever:
    """What the retrieval actors build from (``_source``): for ``dense``, its corpus's rows embedded
    on the driver (``_embedded_here``); for ``local-dense`` (alone, or as hybrid's
    dense half) with its corpus's rows in it: embedded by a pool of embedding actors (each loading the
    model once), which then embed the retrieval actors' queries too (``_PoolEmbedder``): the model is
    loaded once a run, in the pool, and never in a retrieval actor.

    The pool gets the very calls the local engine makes, side by side (``embed_corpus_at_once``):
    the same batches, so the same rows to the last bit; the cache is read and written here, on the
    driver (each call's rows as they come back, so Ctrl-C keeps them), and the recipe's
    ``index_progress`` (the driver's bar) counts the corpus's texts.
    """
    source = _source(retriever)
    if not isinstance(source, RetrieverRecipe) or not isinstance(source.name, str) or not len(source.corpus):
        return source

    options = make_options(find_spec(source.name), source.options, defaults=source.defaults)
    if isinstance(options, HybridOptions) and options.dense_component == "dense":
        return _embedded_here(source, part(options, DenseOptions), retriever)
    if isinstance(options, DenseOptions) and not isinstance(options, HybridOptions):
        return _embedded_here(source, options, retriever)
    if not isinstance(options, LocalDenseOptions):
        return source
    path = model_path(options)
    name = embedder_name(path)
    # One actor a corpus call at most (a small corpus loads the model once); they stay for the queries.
    calls = max(1, math.ceil(len(source.corpus) / LOCAL_SLICE))
    size = cluster.pool_size(cluster.settings.retrieval_actors, calls)
    pool = cluster.pool(functools.partial(_embedding, path, options.batch_size), size, what="embedding")

    def embed_calls(
        calls: list[list[str]],
        progress: Callable[[int, int], None] | None,
        arrived: Callable[[int, np.ndarray], None] | None,
    ) -> list[np.ndarray]:
        sizes = [len(call) for call in calls]
        done: list[np.ndarray] = pool.map("embed", calls, sizes=sizes, progress=progress, arrived=arrived)
        return done

    rows = embed_corpus_at_once(
        source.corpus,
        name,
        embed_calls,
        source.settings,
        slice_size=LOCAL_SLICE,
        progress=_index_progress(retriever),
        length_sorted=True,
    )
    queries = _PoolEmbedder(pool, name, str(pool.attribute("description")))
    embedded = CorpusEmbeddings(name, tuple(source.corpus.ids), rows, query_embedder=queries)
    return dataclasses.replace(
        source, settings=dataclasses.replace(source.settings, corpus_embeddings=embedded)
    )


def _embedded_here(source: RetrieverRecipe, options: DenseOptions, retriever: Retriever) -> RetrieverRecipe:
    """``dense`` (an endpoint's model, or an embedder given in Python), alone or as hybrid's half, with
    its corpus's rows in it: embedded here, on the driver, as the local engine embeds them (the same
    slices through the cache, each slice's new vectors kept as it comes back, the driver's bar), so
    the corpus is sent to the endpoint once, not once a retrieval actor; the actors embed their queries.
    """
    embedder = dense_embedder(options, source.settings)
    rows = embed_corpus(source.corpus, embedder, progress=_index_progress(retriever))
    embedded = CorpusEmbeddings(embedder.name, tuple(source.corpus.ids), rows)
    return dataclasses.replace(
        source, settings=dataclasses.replace(source.settings, corpus_embeddings=embedded)
    )


class _PoolEmbedder:
    """An ``Embedder`` whose texts go to the run's embedding actors (``_corpus_embedded``): a retrieval
    actor's queries are embedded by the model loaded there, in the very calls the local engine makes
    (so the same vectors), and the retrieval actor loads no model of its own."""

    def __init__(self, pool: ActorPool, name: str, description: str) -> None:
        self._pool = pool
        self.name = name
        self.description = description

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors: np.ndarray = self._pool.call("embed", list(texts))
        return vectors


def _index_progress(retriever: Retriever) -> Callable[[int, int], None] | None:
    """The driver's embedding bar, as the retriever's recipe names it (None for a built retriever's)."""
    recipe = (
        retriever.recipe if isinstance(retriever, DeferredRetriever) else getattr(retriever, "recipe", None)
    )
    return recipe.settings.index_progress if isinstance(recipe, RetrieverRecipe) else None


def _embedding(path: Path, batch_size: int) -> SentenceTransformerEmbedder:
    """In each embedding actor, once: the model loaded (the pool then asks its ``embed``)."""
    return SentenceTransformerEmbedder(path, batch_size=batch_size)


def _searcher(source: RetrieverRecipe | Retriever, depth: int, scoring: Scoring) -> Callable[[_Part], _Done]:
    """In each retrieval actor, once: the retriever, built; then per part, search and score."""
    retriever = source() if isinstance(source, RetrieverRecipe) else source
    about = About.of(retriever)

    def search(part: _Part) -> _Done:
        ranked = retrieve(retriever, part.queries, depth, batch_size=SEARCH_BATCH)
        return _Done(ranked, _score(part.judged, Run.from_lists(ranked), scoring), about)

    return search


def _score_given(part: _Part, *, scoring: Scoring) -> _Done:
    """In a scoring task: a part of a given run (its queries' whole rankings), scored."""
    return _Done(None, _score(part.judged, Run.from_lists(part.ranked or {}), scoring))


def _score(judged: Mapping[str, Mapping[str, int]], run: Run, scoring: Scoring) -> QueryScores:
    """A part's ``QueryScores``, in its own trec_eval order (the driver joins the parts)."""
    return score_queries(
        judged,
        run,
        list(scoring.metrics),
        relevance_threshold=scoring.relevance_threshold,
        corpus=scoring.tokens,
    )


def _joined(gold: GoldSet, parts: Sequence[QueryScores], scoring: Scoring) -> QueryScores:
    """The parts' scores as the gold set's ``QueryScores``: every query in trec_eval's order."""
    ids = list(chain.from_iterable(part.query_ids for part in parts))
    if sorted(ids) != sorted(gold.ids):
        raise InputError(f"{gold.name}: the engine scored other queries than the gold set holds")
    by_id = sorted(range(len(ids)), key=ids.__getitem__)
    order = np.array(by_id, dtype=np.int64)

    def joined(arrays: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(arrays)[order]

    missing = set(chain.from_iterable(part.missing_run for part in parts))
    none_relevant = set(chain.from_iterable(part.no_relevant for part in parts))
    query_ids = [ids[i] for i in by_id]
    gold_position = {query_id: position for position, query_id in enumerate(gold.ids)}
    return QueryScores(
        query_ids=tuple(query_ids),
        values={name: joined([part.values[name] for part in parts]) for name in scoring.metrics},
        first_relevant_rank=joined([part.first_relevant_rank for part in parts]),
        missing_run=tuple(query_id for query_id in query_ids if query_id in missing),
        no_relevant=tuple(query_id for query_id in query_ids if query_id in none_relevant),
        relevance_threshold=scoring.relevance_threshold,
        gold_order=np.array([gold_position[query_id] for query_id in query_ids], dtype=np.int64),
    )

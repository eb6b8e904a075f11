"""``score``: trec_eval-exact metrics of a run on a gold set, per query and averaged.

Conventions, all trec_eval 10's:
- Queries are taken in trec_eval's order (``strcmp`` on the ids, i.e. code-point order).
- Gold queries with no entry in the run score 0 and count in every mean (trec_eval ``-c``); they are
  listed in ``missing_run``. Queries in the run but not in the gold set are ignored.
- Gold queries with no relevant passage at the threshold score 0 (nDCG excepted: it reads the raw
  grades, as trec_eval does) and count in the mean; they are listed in ``no_relevant``.
- Means add per-query values one by one in that order, then divide by the number of queries, so
  they equal trec_eval's ``all`` line to the last bit (``np.sum`` adds pairwise and can differ).
- Budgeted metrics (``recall@2000tok``) need the corpus, whose chunk texts are counted in tokens
  (``realrecall.evaluate.budget``); they read each query's whole ranking in the run.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, reduce
from itertools import chain, compress
from operator import add, attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from realrecall.bulk import bulk_step, give_back_memory
from realrecall.errors import InputError
from realrecall.evaluate.judged import rank_judgments
from realrecall.evaluate.metrics import Metric, parse_metric
from realrecall.gold import GoldSet
from realrecall.runs import Run

if TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.evaluate.budget import ContextTokens

__all__ = ["GoldLike", "QueryScores", "RunLike", "score", "score_queries"]

GoldLike = GoldSet | Mapping[str, Mapping[str, int]]
RunLike = Run | Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class QueryScores:
    """Per-query metric values of one run on one gold set, aligned with ``query_ids``."""

    query_ids: tuple[str, ...]
    """Every gold query, in trec_eval's order (code-point order of the ids)."""
    values: Mapping[str, np.ndarray]
    """Metric name (as asked) -> float64 array aligned with ``query_ids``."""
    first_relevant_rank: np.ndarray
    """int64 rank of the first relevant passage in the whole run, 0 when none was retrieved."""
    missing_run: tuple[str, ...]
    """Gold queries the run has no entry for (they score 0)."""
    no_relevant: tuple[str, ...]
    """Gold queries with no passage reaching the relevance threshold (they score 0)."""
    relevance_threshold: int = 1
    gold_order: np.ndarray | None = field(default=None, repr=False, compare=False)
    """int64: where each of ``query_ids`` stands in the gold set's own order (``values[m][i]`` is the
    query at ``gold_order[i]`` of the gold set); None when not known."""

    def in_gold_order(self, values: np.ndarray) -> np.ndarray:
        """``values`` (aligned with ``query_ids``) rearranged into the gold set's own order."""
        if self.gold_order is None:
            raise RuntimeError("the gold set's order is not known (QueryScores made without gold_order)")
        out = np.empty_like(values)
        out[self.gold_order] = values
        return out

    def mean(self, metric: str, query_ids: Iterable[str] | None = None) -> float:
        """Mean of ``metric`` over all queries, or over ``query_ids``, added in trec_eval's order."""
        values = self._values_of(metric)
        if query_ids is None:
            chosen = values
        else:
            try:
                indexes = sorted(set(map(self._position.__getitem__, query_ids)))
            except KeyError as exc:
                raise InputError(f"query {exc.args[0]!r} is not in the gold set") from None
            chosen = values[indexes]
        if len(chosen) == 0:
            raise InputError(f"no query to average {metric!r} over", hint="give at least one query id")
        # Added one by one in order, as trec_eval adds (``sum`` of floats is compensated from 3.12).
        return reduce(add, chosen.tolist(), 0.0) / len(chosen)

    def group_means(self, metrics: Sequence[str], groups: np.ndarray, count: int) -> list[dict[str, float]]:
        """Per group, ``{metric: mean}`` over its queries, equal to ``mean(metric, its query ids)``.

        ``groups``: each query's group, 0 to ``count - 1``, in the gold set's own order (int). A
        stable sort by group keeps trec_eval's order within each group, so each group's values are one
        run of the sorted ones, added one by one in that order as ``mean`` adds them: by
        ``np.cumsum``, which adds in order, unlike ``np.sum`` (each query id looked up for each slice
        and metric took 0.3 s of 100,000 queries' five slices).
        """
        if self.gold_order is None:
            raise RuntimeError("the gold set's order is not known (QueryScores made without gold_order)")
        in_order = groups[self.gold_order]  # each query's group, in trec_eval's order
        sizes = np.bincount(in_order, minlength=count)
        if not sizes.all():
            raise InputError("no query to average over in a group", hint="give each group a query")
        order = np.argsort(in_order, kind="stable")
        ends = np.cumsum(sizes)
        spans = list(zip((ends - sizes).tolist(), ends.tolist(), sizes.tolist(), strict=True))
        means: list[dict[str, float]] = [{} for _ in range(count)]
        for metric in metrics:
            ordered = self._values_of(metric)[order]
            # A small group's values are added by reduce (a numpy call costs a few us per group).
            listed = ordered.tolist() if sizes.min() < _CUMSUM_FROM else []
            for of_group, (start, end, size) in zip(means, spans, strict=True):
                if size < _CUMSUM_FROM:
                    of_group[metric] = reduce(add, listed[start:end], 0.0) / size
                else:
                    of_group[metric] = _sum_in_order(ordered[start:end]) / size
        return means

    @cached_property
    def _position(self) -> dict[str, int]:
        """Query id -> index into ``query_ids``, built once (each slice's mean built it again: 1.6 s of
        the 50 means of 100k queries)."""
        return dict(zip(self.query_ids, range(len(self.query_ids)), strict=True))

    def means(self) -> dict[str, float]:
        """``{metric: mean}`` over all queries, in the order the metrics were asked."""
        return {name: self.mean(name) for name in self.values}

    def _values_of(self, metric: str) -> np.ndarray:
        if metric in self.values:
            return self.values[metric]
        wanted = parse_metric(metric).name
        for name, values in self.values.items():
            if parse_metric(name).name == wanted:
                return values
        raise InputError(f"metric {metric!r} was not computed", hint=f"computed: {', '.join(self.values)}")


_CUMSUM_FROM = 64


def _sum_in_order(values: np.ndarray) -> float:
    """``reduce(add, values.tolist(), 0.0)`` in C: float64 additions one by one from 0.0, in order."""
    total: float = np.cumsum(np.concatenate(([0.0], values)))[-1].item()
    return total


def score(
    gold: GoldLike,
    run: RunLike,
    metrics: Sequence[str],
    *,
    relevance_threshold: int = 1,
    corpus: Corpus | ContextTokens | None = None,
) -> dict[str, float]:
    """Mean of each metric over all gold queries, equal to trec_eval 10 ``-c`` (see the module docs).

    ``corpus``: the chunks the run ranks, needed by budgeted metrics (``recall@2000tok``) only.
    """
    return score_queries(gold, run, metrics, relevance_threshold=relevance_threshold, corpus=corpus).means()


@bulk_step
def score_queries(
    gold: GoldLike,
    run: RunLike,
    metrics: Sequence[str],
    *,
    relevance_threshold: int = 1,
    corpus: Corpus | ContextTokens | None = None,
) -> QueryScores:
    """Per-query values of each metric for every gold query (see the module docs for conventions)."""
    parsed = _parse_metrics(metrics)
    threshold = _threshold(relevance_threshold)
    judgments, query_ids, order = _judgments(gold)
    the_run = as_run(run)
    tokens = _budget_tokens(parsed.values(), corpus)
    # Every row at once: a run read into columns hashes its query ids once per lookup (0.18 s a
    # lookup at a million run queries), and the rows of a million gold queries take 8 MB.
    rows = the_run._rows_of(query_ids)
    blocks = []
    for begin in range(0, len(query_ids), _QUERY_BLOCK):
        end = begin + _QUERY_BLOCK
        block = query_ids[begin:end]
        blocks.append(
            _score_block(judgments(begin, end), the_run, block, rows[begin:end], threshold, parsed, tokens)
        )
    if the_run._columns is not None:
        # The lookups' Arrow buffers, freed into pools that would keep them. Once, after the last
        # block: trimmed after each, every block's pages were new to the kernel again (a million
        # queries: 210,000 page faults and 0.6 s of system time a scoring, against 60,000 and 0.2 s;
        # the peak is the same, each block reusing the last one's pages).
        give_back_memory()
    return QueryScores(
        query_ids=tuple(query_ids),
        values={name: _joined([block.values[name] for block in blocks]) for name in parsed},
        first_relevant_rank=_joined([block.first_relevant_rank for block in blocks]),
        missing_run=tuple(chain.from_iterable(block.missing_run for block in blocks)),
        no_relevant=tuple(chain.from_iterable(block.no_relevant for block in blocks)),
        relevance_threshold=threshold,
        gold_order=order,
    )


# Queries are scored a block at a time: ranking the judged passages makes a dozen arrays as long as
# the block's judgments, ~400 MB at once for a million queries with three judgments each. Per-query
# values depend on that query's judgments only, so blocks give the same values to the last bit.
_QUERY_BLOCK = 1 << 17


@dataclass(frozen=True)
class _Block:
    values: dict[str, np.ndarray]
    first_relevant_rank: np.ndarray
    missing_run: tuple[str, ...]
    no_relevant: tuple[str, ...]


def _score_block(
    judgments: Sequence[Mapping[str, int]],
    run: Run,
    query_ids: Sequence[str],
    rows: np.ndarray,
    threshold: int,
    metrics: Mapping[str, Metric],
    tokens: ContextTokens | None,
) -> _Block:
    """The per-query values of ``query_ids`` (a block of them, in trec_eval's order, with their
    judgments aligned)."""
    judged = rank_judgments(judgments, run, query_ids, threshold, rows)
    prefixes = _budget_prefixes(metrics.values(), run, query_ids, tokens)
    return _Block(
        values={
            name: metric.compute(judged, prefixes.get(metric.budget or 0)) for name, metric in metrics.items()
        },
        first_relevant_rank=judged.first_relevant_rank,
        missing_run=judged.missing_run,
        no_relevant=tuple(compress(query_ids, (judged.num_relevant == 0).tolist())),
    )


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def as_run(run: RunLike) -> Run:
    """A ``Run`` from a run, ``{qid: {pid: score}}`` or ``{qid: [pid, ...]}``."""
    if isinstance(run, Run):
        return run
    if not isinstance(run, Mapping):
        raise InputError(
            f"a run must be a Run or a dict, got {type(run).__name__}",
            hint="give {query_id: {passage_id: score}} or {query_id: [passage_id, ...]}",
        )
    first = next(iter(run.values()), None)
    if first is None or isinstance(first, Mapping):
        # The run is dropped when scoring returns, so it may read the caller's dicts in place.
        return Run._borrow_scores(run)  # type: ignore[arg-type]
    return Run.from_lists(run)  # type: ignore[arg-type]


def _budget_tokens(metrics: Iterable[Metric], corpus: Corpus | ContextTokens | None) -> ContextTokens | None:
    """The chunks' token counts when a metric has a token budget (None when none has)."""
    budgeted = [metric for metric in metrics if metric.budget is not None]
    if not budgeted:
        return None
    from realrecall.evaluate.budget import ContextTokens

    if corpus is None:
        raise InputError(
            f"{budgeted[0].name} counts the tokens of the retrieved chunks, which needs the corpus",
            hint="give the corpus (--corpus CHUNKS) the run ranks",
        )
    return corpus if isinstance(corpus, ContextTokens) else ContextTokens(corpus)


def _budget_prefixes(
    metrics: Iterable[Metric], run: Run, query_ids: Sequence[str], tokens: ContextTokens | None
) -> dict[int, np.ndarray]:
    """Per token budget asked for, how many top chunks of each query's ranking fit in it."""
    budgets = sorted({metric.budget for metric in metrics if metric.budget is not None})
    if not budgets or tokens is None:
        return {}
    from realrecall.evaluate.budget import prefix_lengths

    depth = max((len(run.passage_ids(query_id)) for query_id in query_ids if query_id in run), default=0)
    rankings = run.ranked_many(query_ids, depth) if depth else [()] * len(query_ids)
    return {budget: prefix_lengths(rankings, tokens, budget) for budget in budgets}


def _parse_metrics(metrics: Sequence[str]) -> dict[str, Metric]:
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise InputError("no metric asked for", hint="name at least one, e.g. recall@10")
    return {name: parse_metric(name) for name in metrics}


def _threshold(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InputError(
            f"relevance threshold must be a whole number >= 0, got {value!r}",
            hint="grades at or above it count as relevant; the default is 1",
        )
    return int(value)


_Judgments = Callable[[int, int], list[Mapping[str, int]]]


def _judgments(gold: GoldLike) -> tuple[_Judgments, list[str], np.ndarray]:
    """The judgments of the queries from ``begin`` to ``end`` in trec_eval's order, the query ids in
    that order, and where each of them stands in the gold set's own order (int64: a million Python
    ints would take 32 MB).

    A gold set answers from its own tuple of queries, by position: no second dict of every query is
    built (40 MB for a million queries), and no id is looked up again.
    """
    if isinstance(gold, GoldSet):
        query_ids, order = _sorted_ids(gold.ids)
        judgments = _judgments_of_set(gold, order)
    elif isinstance(gold, Mapping):
        _check_qrels(gold)
        query_ids, order = _sorted_ids(list(gold))
        judged = list(gold.values())

        def judgments(begin: int, end: int) -> list[Mapping[str, int]]:
            return list(map(judged.__getitem__, order[begin:end].tolist()))

    else:
        raise InputError(
            f"gold must be a GoldSet or a dict, got {type(gold).__name__}",
            hint="give {query_id: {passage_id: grade}}",
        )
    if not query_ids:
        raise InputError("the gold set has no query", hint="add at least one query")
    return judgments, query_ids, order


def _sorted_ids(ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """``ids`` in code-point order, and where each stood: positions sorted by their ids give both,
    with no id -> position dict (its Python ints alone took 32 MB a million)."""
    by_id = sorted(range(len(ids)), key=ids.__getitem__)
    # The ids sorted again, not looked up by position: unique, they sort alike, and a second sort of
    # them (quick on ids in file order) costs less than a random access into the tuple each.
    return sorted(ids), np.array(by_id, dtype=np.int64)


def _judgments_of_set(gold: GoldSet, order: np.ndarray) -> _Judgments:
    queries = gold.queries

    def judgments(begin: int, end: int) -> list[Mapping[str, int]]:
        # C-level passes: a million queries' judgments in 0.1 s, not 0.5 s through a Python call each.
        return list(map(_GOLD, map(queries.__getitem__, order[begin:end].tolist())))

    return judgments


_GOLD = attrgetter("gold")


def _check_qrels(qrels: Mapping[str, Any]) -> None:
    # One C-level pass over the types; the slow search for the culprit runs only on bad input.
    key_types = set(map(type, qrels))
    judged_types = set(map(type, qrels.values()))
    grade_types = set()
    if judged_types <= {dict}:
        grade_types = set(map(type, chain.from_iterable(map(dict.values, qrels.values()))))
    if key_types <= {str} and judged_types <= {dict} and grade_types <= {int}:
        return
    for qid, judged in qrels.items():
        if not isinstance(qid, str) or not isinstance(judged, Mapping):
            raise InputError(
                f"gold entry {qid!r} is not a query id mapped to {{passage_id: grade}}",
                hint="give {query_id: {passage_id: grade}}",
            )
        for pid, grade in judged.items():
            if isinstance(grade, bool) or not isinstance(grade, numbers.Integral):
                raise InputError(
                    f"grade of passage {pid!r} in query {qid!r} must be an integer, got {grade!r}",
                    hint="use 1 for relevant, 0 for judged not relevant",
                )

"""The metrics, named as strings (``"recall@10"``, ``"mrr@10"``), each equal to a trec_eval measure.

Every metric is computed per query from ``RankedJudgments`` and agrees with trec_eval 10 bit for bit:
same float64 operations in the same order. A passage is relevant when its grade reaches the relevance
threshold (trec_eval ``-l``, default 1); nDCG uses the raw grades whatever the threshold, because
trec_eval does. Cut-off ``k`` counts ranks 1..k of the run as trec_eval orders it.

Each metric's definition and the trec_eval measure it equals are its entry in ``METRICS`` (docs/metrics.md's
table is made from it; the oracle tests compare every entry with that measure).

Budgeted metrics compare chunkings at equal context, since recall@k favours big chunks (ten 1,000-token
chunks hold more than ten 100-token ones): ``recall@Ntok`` and ``ndcg@Ntok`` (e.g. ``recall@2000tok``)
score the *prefix* of the ranking that fits in N tokens: chunks are counted whole, in rank order, and the
prefix is the longest run of top chunks whose cumulative token count is <= N (a chunk that would cross
the budget ends it: nothing of it is counted). ``recall@Ntok`` is 1 when a relevant chunk is in that
prefix; ``ndcg@Ntok`` is ``ndcg@k`` with k the prefix's length (its ideal DCG cut at the same length).
A first chunk longer than N leaves an empty prefix: both score 0. Tokens are counted by
``realrecall.tokens.metric_token_counter`` on each chunk's text, so these metrics need the corpus
(``realrecall.evaluate.budget``); no trec_eval measure equals them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from realrecall.errors import InputError
from realrecall.evaluate.judged import RankedJudgments, discounts, sequential_segment_sum

__all__ = ["METRICS", "Cutoff", "Metric", "MetricKind", "is_binary", "parse_metric", "trec_eval_alias"]

Cutoff = int | np.ndarray | None
"""A cut-off: one k for every query, one per query (int64 array: a budget's prefix lengths), or none."""

_BUDGET_SUFFIX = "tok"


def recall_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Success: 1.0 when at least one relevant passage ranks in the top k, else 0.0.

    ``recall@k = [first relevant rank <= k]``; equals trec_eval ``success_k``. This is the share of
    queries answered in the top k, which is what a RAG system needs (one good passage suffices).
    """
    first = judged.first_relevant_rank
    if k is None:  # parse_metric requires one; a direct caller may not have given it
        raise InputError("recall needs a cutoff k", hint="ask for recall@K, e.g. recall@10")
    return ((first > 0) & (first <= k)).astype(np.float64)


def passage_recall_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Share of the query's relevant passages found in the top k.

    ``passage_recall@k = |relevant in top k| / |relevant|`` (0 when nothing is relevant); equals
    trec_eval ``recall_k``.
    """
    found = judged.relevant_in_top(_one_cutoff(k, "passage_recall")).astype(np.float64)
    total = judged.num_relevant
    out = np.zeros(judged.n_queries, dtype=np.float64)
    has = total > 0
    out[has] = found[has] / total[has].astype(np.float64)
    return out


def complete_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Completeness: 1.0 when every relevant passage of the query ranks in the top k, else 0.0.

    ``complete@k = [|relevant in top k| = |relevant| > 0]``: 1 exactly when trec_eval's ``recall_k``
    is 1 (no trec_eval measure is this indicator itself). For a question that needs several passages
    (a comparison of two chunks) recall@k counts any one of them as success; complete@k asks for all.
    Equals recall@k on a query with one relevant passage.
    """
    k = _one_cutoff(k, "complete")
    if k is None:  # parse_metric requires one; a direct caller may not have given it
        raise InputError("complete needs a cutoff k", hint="ask for complete@K, e.g. complete@10")
    total = judged.num_relevant
    complete: np.ndarray = (total > 0) & (judged.relevant_in_top(k) == total)
    return complete.astype(np.float64)


def mrr_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Reciprocal rank of the first relevant passage, 0 when none ranks in the top k (or at all).

    ``mrr@k = 1 / first relevant rank`` if that rank is <= k; equals trec_eval ``recip_rank`` with the
    run cut at k (``-M k``); ``mrr`` (no k) equals plain ``recip_rank``.
    """
    first = judged.first_relevant_rank
    k = _one_cutoff(k, "mrr")
    hit = first > 0 if k is None else (first > 0) & (first <= k)
    out = np.zeros(judged.n_queries, dtype=np.float64)
    out[hit] = 1.0 / first[hit].astype(np.float64)
    return out


def precision_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Share of the top k that is relevant, counting missing ranks as not relevant.

    ``precision@k = |relevant in top k| / k``; equals trec_eval ``P_k``.
    """
    k = _one_cutoff(k, "precision")
    if k is None:  # parse_metric requires one; a direct caller may not have given it
        raise InputError("precision needs a cutoff k", hint="ask for precision@K, e.g. precision@10")
    return judged.relevant_in_top(k).astype(np.float64) / float(k)


def ndcg_at(judged: RankedJudgments, k: Cutoff) -> np.ndarray:
    """Normalised discounted cumulative gain with linear gains (Järvelin and Kekäläinen).

    ``DCG@k = sum over ranks r <= k of grade(r) / log2(r + 1)`` over passages with a positive grade,
    summed in rank order; the ideal DCG@k sorts every positive grade in the gold set (retrieved or
    not) in descending order; ``ndcg@k = DCG@k / IDCG@k`` (0 when no grade is positive). Grades are
    the raw gold grades whatever the relevance threshold. Equals trec_eval ``ndcg_cut_k``; ``ndcg``
    (no k) equals trec_eval ``ndcg``. ``k`` may be one cut-off per query (a budget's prefix lengths):
    both DCG and ideal DCG are then cut at each query's own k.
    """
    n = judged.n_queries
    gains = judged.grade > 0
    retrieved = gains & (judged.rank > 0)
    if k is not None:
        retrieved &= judged.rank <= _per_entry(k, judged.query)
    ranks = judged.rank[retrieved]
    table = discounts(int(ranks.max()) if len(ranks) else 0)
    dcg = sequential_segment_sum(
        judged.query[retrieved], judged.grade[retrieved].astype(np.float64) / table[ranks - 1], n
    )

    # Ideal ordering: positive grades descending within each query (entries are sorted by query).
    query, grade = judged.query[gains], judged.grade[gains]
    # Sorted by (query, grade descending) as one key: the query index (fewer than 2^31 a block) above
    # 32 bits holding 2^31 - grade (grades are 1 to 2^31 - 1 here). Entries come in query order, so a
    # stable sort of the nearly sorted keys is quick (np.lexsort took 4x as long).
    key = query << 32
    key += (1 << 31) - grade
    order = np.argsort(key, kind="stable")
    del key
    query, grade = query[order], grade[order]
    position = _position_in_segment(query)
    if k is not None:
        keep = position < _per_entry(k, query)
        query, grade, position = query[keep], grade[keep], position[keep]
    table = discounts(int(position.max()) + 1 if len(position) else 0)
    ideal = sequential_segment_sum(query, grade.astype(np.float64) / table[position], n)

    out = dcg.copy()
    positive = ideal > 0.0
    out[positive] = dcg[positive] / ideal[positive]
    return out


def _one_cutoff(k: Cutoff, kind: str) -> int | None:
    """``k`` for a metric that takes no token budget (parse_metric refuses one; this, a direct call)."""
    if isinstance(k, np.ndarray):
        raise InputError(f"{kind} takes no token budget", hint="budgeted metrics: recall@Ntok, ndcg@Ntok")
    return k


def _per_entry(k: int | np.ndarray, query: np.ndarray) -> int | np.ndarray:
    """A cut-off per entry: ``k`` itself, or each entry's query's own cut-off."""
    return k[query] if isinstance(k, np.ndarray) else k


def _position_in_segment(segment: np.ndarray) -> np.ndarray:
    if len(segment) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
    sizes = np.diff(np.r_[starts, len(segment)])
    return np.arange(len(segment)) - np.repeat(starts, sizes)


@dataclass(frozen=True)
class MetricKind:
    """One family of metrics: its kernel, whether it takes ``@k``, and the trec_eval measure it equals.

    ``trec_eval``: the measure ``name@k`` equals as ``trec_eval -q`` names it, ``k`` standing for the
    cut-off (``success_k`` is ``success_10`` for ``recall@10``); a name with no ``_k`` is measured on
    the run cut at depth k (trec_eval ``-M k``). ``trec_eval_whole``: for a cut-off that is optional,
    the measure ``name`` alone equals. The docs' metric table and the oracle tests read both.
    ``binary``: every per-query value is 0 or 1, so a mean over queries is a proportion (calibrate gives
    it a Wilson interval); any other metric's mean gets a bootstrap interval. Declared here, not read
    off the values: an MRR whose queries all happen to score 0 or 1 is still not a proportion.
    ``trec_eval_is_one``: the metric is not the trec_eval measure itself but 1 exactly where that
    measure is 1, else 0 (``complete@k`` from ``recall_k``); it then has no trec_eval alias.
    """

    compute: Callable[[RankedJudgments, Cutoff], np.ndarray]
    cutoff: str
    """``"required"`` or ``"optional"``."""
    trec_eval: str
    definition: str
    """What ``name@k`` is for one query, in one line (the docs' metric table shows it)."""
    trec_eval_whole: str | None = None
    binary: bool = False
    budgeted: bool = False
    """Whether ``@Ntok`` (a token budget) may replace ``@k``."""
    trec_eval_is_one: bool = False


METRICS: dict[str, MetricKind] = {
    "recall": MetricKind(
        recall_at,
        "required",
        "success_k",
        "1 if at least one relevant passage ranks in the top k, else 0",
        binary=True,
        budgeted=True,
    ),
    "passage_recall": MetricKind(
        passage_recall_at,
        "required",
        "recall_k",
        "relevant passages in the top k / relevant passages in the gold set (0 if none)",
    ),
    "complete": MetricKind(
        complete_at,
        "required",
        "recall_k",
        "1 if every relevant passage ranks in the top k, else 0 (0 if none is relevant)",
        binary=True,
        trec_eval_is_one=True,
    ),
    "mrr": MetricKind(
        mrr_at,
        "optional",
        "recip_rank",
        "1 / rank of the first relevant passage, 0 if none ranks in the top k",
        trec_eval_whole="recip_rank",
    ),
    "ndcg": MetricKind(
        ndcg_at,
        "optional",
        "ndcg_cut_k",
        "DCG@k / IDCG@k with linear gains (0 when no grade is positive)",
        trec_eval_whole="ndcg",
        budgeted=True,
    ),
    "precision": MetricKind(precision_at, "required", "P_k", "relevant passages in the top k / k"),
}


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: its kind and cut-off (``k``), or its token budget (``budget``)."""

    name: str
    kind: str
    k: int | None
    budget: int | None = None

    def compute(self, judged: RankedJudgments, prefix: np.ndarray | None = None) -> np.ndarray:
        """Per-query values (float64, aligned with ``judged.query_ids``).

        A budgeted metric needs ``prefix``: per query, how many top chunks fit in the budget
        (``realrecall.evaluate.budget.prefix_lengths``).
        """
        if self.budget is None:
            return METRICS[self.kind].compute(judged, self.k)
        if prefix is None:
            raise InputError(
                f"{self.name} counts the tokens of the retrieved chunks, which needs the corpus",
                hint="give the corpus (--corpus CHUNKS) the run ranks",
            )
        return METRICS[self.kind].compute(judged, prefix)

    @property
    def binary(self) -> bool:
        """Whether every per-query value is 0 or 1 (see :class:`MetricKind`)."""
        return METRICS[self.kind].binary

    def trec_eval_measure(self) -> tuple[str, int | None] | None:
        """The trec_eval measure this metric equals, and the run depth it needs (``-M``), if any.

        ``recall@10`` is ``("success_10", None)``, ``mrr@10`` ``("recip_rank", 10)``, ``ndcg``
        ``("ndcg", None)``; a budgeted metric equals none (None), nor does one that is only 1 where a
        measure is 1 (``complete@k``: see ``trec_eval_oracle``).
        """
        oracle = self.trec_eval_oracle()
        if oracle is None or oracle[2]:
            return None
        return oracle[0], oracle[1]

    def trec_eval_oracle(self) -> tuple[str, int | None, bool] | None:
        """How trec_eval gives this metric: its measure, the run depth (``-M``) it needs, and whether
        the metric is the indicator ``measure == 1`` (``complete@10``: ``("recall_10", None, True)``)
        rather than the measure itself; None when no trec_eval measure gives it (a budgeted metric)."""
        kind = METRICS[self.kind]
        if self.budget is not None:
            return None
        is_one = kind.trec_eval_is_one
        if self.k is None:
            return (kind.trec_eval_whole, None, is_one) if kind.trec_eval_whole is not None else None
        if kind.trec_eval.endswith("_k"):
            return f"{kind.trec_eval.removesuffix('_k')}_{self.k}", None, is_one
        return kind.trec_eval, self.k, is_one


def _choices() -> str:
    names = (
        f"{name}@k" if kind.cutoff == "required" else f"{name}, {name}@k" for name, kind in METRICS.items()
    )
    budgeted = (f"{name}@Ntok" for name, kind in METRICS.items() if kind.budgeted)
    return ", ".join([*names, *budgeted])


def parse_metric(name: str) -> Metric:
    """Parse ``"recall@10"``-style names; raises InputError naming the choices for anything else."""
    if not isinstance(name, str):
        raise InputError(f"metric name must be a string, got {name!r}", hint=f"choose from {_choices()}")
    kind_name, at, raw_k = name.strip().partition("@")
    kind = METRICS.get(kind_name)
    if kind is None:
        raise InputError(f"unknown metric {name!r}", hint=f"choose from {_choices()}")
    if not at:
        if kind.cutoff == "required":
            raise InputError(
                f"metric {name!r} needs a cut-off", hint=f"write it as {kind_name}@k, e.g. {kind_name}@10"
            )
        return Metric(kind_name, kind_name, None)
    if raw_k.endswith(_BUDGET_SUFFIX):
        return _budgeted(name, kind_name, kind, raw_k.removesuffix(_BUDGET_SUFFIX))
    if not (raw_k.isascii() and raw_k.isdigit()) or int(raw_k) < 1:
        raise InputError(
            f"metric {name!r} has a bad cut-off {raw_k!r}",
            hint=f"k must be a whole number >= 1, e.g. {kind_name}@10",
        )
    k = int(raw_k)
    return Metric(f"{kind_name}@{k}", kind_name, k)


def _budgeted(name: str, kind_name: str, kind: MetricKind, raw_budget: str) -> Metric:
    """``recall@2000tok``: the metric over the top chunks that fit in 2000 tokens."""
    if not kind.budgeted:
        allowed = ", ".join(f"{n}@Ntok" for n, k in METRICS.items() if k.budgeted)
        raise InputError(f"metric {name!r} takes no token budget", hint=f"budgeted metrics: {allowed}")
    if not (raw_budget.isascii() and raw_budget.isdigit()) or int(raw_budget) < 1:
        raise InputError(
            f"metric {name!r} has a bad token budget {raw_budget!r}",
            hint=f"the budget is a whole number of tokens >= 1, e.g. {kind_name}@2000tok",
        )
    budget = int(raw_budget)
    return Metric(f"{kind_name}@{budget}{_BUDGET_SUFFIX}", kind_name, None, budget)


def trec_eval_alias(name: str) -> str | None:
    """The other convention's name of a measure: ``ndcg@10`` <-> ``ndcg_cut_10``, ``mrr`` <-> ``recip_rank``.

    Read from ``METRICS``. Only a measure ``trec_eval -q`` prints without a run-depth option has one
    (``mrr@10`` has none: trec_eval measures it with ``-M 10``); None for any other name.
    """
    try:
        measure = parse_metric(name).trec_eval_measure()
    except InputError:
        measure = None
    if measure is not None:
        return measure[0] if measure[1] is None else None
    for kind_name, kind in METRICS.items():
        if kind.trec_eval_is_one:
            continue  # not the measure itself
        if name == kind.trec_eval_whole:
            return kind_name
        prefix = kind.trec_eval.removesuffix("k")
        if kind.trec_eval.endswith("_k") and name.startswith(prefix) and name[len(prefix) :].isdigit():
            return f"{kind_name}@{name[len(prefix) :]}"
    return None


def is_binary(name: str) -> bool:
    """Whether the metric named ``name`` takes only the values 0 and 1 per query.

    A name outside the registry (a results.json edited by hand) is not binary: its mean gets the
    bootstrap interval, which holds for any values.
    """
    try:
        return parse_metric(name).binary
    except InputError:
        return False

"""``evaluate``: score a retriever (or a run made elsewhere) on one or more gold sets, sliced."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial
from itertools import chain, compress, repeat
from operator import attrgetter, is_, is_not, methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from realrecall._version import __version__
from realrecall.bulk import bulk_step, give_back_memory
from realrecall.errors import InputError
from realrecall.evaluate.results import (
    RESERVED_FIELDS,
    CodedColumn,
    EvaluationResult,
    GoldPassages,
    GoldSetResult,
    JudgeLabelUse,
    PerQueryColumns,
    QueryRecords,
    QueryResult,
    SliceResult,
)
from realrecall.evaluate.results.columns import listed
from realrecall.evaluate.results.types import query_record, record_fields
from realrecall.evaluate.retrievers.base import retrieve
from realrecall.evaluate.settings import EvaluateSettings
from realrecall.evaluate.slicing import group_codes, slice_sort_key
from realrecall.files import file_sha256
from realrecall.formats.record_fields import NO_FIELDS
from realrecall.gold import GOLD_COUNT, GoldQuery, GoldSet
from realrecall.resolution import Resolution, resolve_gold
from realrecall.settings import settings_with
from realrecall.style_leak import style_leak_warning

if TYPE_CHECKING:
    from realrecall.corpus import Corpus
    from realrecall.engine.cluster import Cluster
    from realrecall.evaluate.budget import ContextTokens
    from realrecall.evaluate.on_cluster import Job
    from realrecall.evaluate.retrievers import Retriever
    from realrecall.evaluate.scoring import QueryScores
    from realrecall.labels import Labeller
    from realrecall.runs import Run

__all__ = ["DEFAULT_K", "EvaluateCall", "evaluate", "evaluate_each"]

DEFAULT_K = EvaluateSettings().k


def evaluate(
    gold_sets: Sequence[GoldSet] | GoldSet,
    *,
    corpus: Corpus | None = None,
    retriever: Retriever | object | None = None,
    run: Run | None = None,
    settings: EvaluateSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> EvaluationResult:
    """Score ``retriever`` (searching ``corpus``) or a finished ``run`` on every gold set.

    ``settings`` says how (``EvaluateSettings``; or its fields as keywords over it: ``k=(1, 5, 10)``,
    ``by="type"``, ``metrics=["recall@10"]``): the metrics (default: what the cut-offs ``k`` give), the
    slice fields, the relevance threshold, the retrieval depth and where gold passages come from.

    With a corpus, each gold set's passages are resolved first (``realrecall.resolution``): chunk ids
    and/or evidence, as ``gold_from`` (``auto``, ``ids`` or ``evidence``) says, a chunk holding at
    least ``evidence_coverage`` of an evidence span being gold; the results say how many passages came
    from where.

    Each gold set gets its overall figures, one slice per value of every field in ``by`` (with the
    number of queries behind it) and per-query outcomes. The retriever is asked for ``depth`` ids
    per query (default: the largest cutoff the metrics use, or, for budgeted metrics such as
    ``recall@2000tok``, as many as the corpus' smallest chunks that fit in the budget, plus one).
    With a corpus, each gold set also records the mean tokens of the top k chunks at each cut-off
    (``context_tokens``) and the result how tokens were counted (``token_method``). ``retriever`` may
    also be a LangChain retriever or vector store or a LlamaIndex retriever or index
    (``retrievers.frameworks``); the retriever fields of the settings are for ``evaluate_files``,
    which builds one by name.
    """
    settings = settings_with(EvaluateSettings, settings, options, what="evaluate")
    plan = _Plan.of(gold_sets, corpus=corpus, retriever=retriever, run=run, settings=settings)
    if not settings.engine_settings.on_ray:
        return plan.finish(progress=progress)
    from realrecall.engine.cluster import open_cluster
    from realrecall.evaluate.on_cluster import retrieve_and_score

    # Every gold set resolved first, then retrieved and scored in one job (``evaluate.on_cluster``).
    resolved = plan.resolve_all()
    with open_cluster(settings.engine_settings) as cluster:
        if cluster is None:
            raise RuntimeError("the Ray engine opened no cluster")
        computed = retrieve_and_score(cluster, plan.job(resolved), progress=progress)
    return plan.finish(resolved, computed)


@dataclass(frozen=True)
class EvaluateCall:
    """``evaluate``'s arguments, for ``evaluate_each``."""

    gold_sets: Sequence[GoldSet]
    corpus: Corpus | None = None
    retriever: Retriever | object | None = None
    run: Run | None = None
    settings: EvaluateSettings = dataclasses.field(default_factory=EvaluateSettings)


def evaluate_each(
    calls: Sequence[EvaluateCall], *, cluster: Cluster, progress: Callable[[int, int], None] | None = None
) -> list[EvaluationResult]:
    """``evaluate`` of each call on ``cluster``, each call's retrieval and scoring in a Ray task of its
    own (``realrecall run`` over many pipelines: one task a pipeline), in the calls' order.

    Everything but the retrieval and the per-query scores (the gold passages resolved, the means,
    slices, intervals and warnings) is computed here, as ``evaluate`` does: each result equals the one
    ``evaluate`` gives for the call. ``progress(done, total)`` counts the calls.
    """
    from realrecall.evaluate.on_cluster import retrieve_and_score_each

    plans = [
        _Plan.of(
            call.gold_sets, corpus=call.corpus, retriever=call.retriever, run=call.run, settings=call.settings
        )
        for call in calls
    ]
    resolved = [plan.resolve_all() for plan in plans]
    jobs = [plan.job(given) for plan, given in zip(plans, resolved, strict=True)]
    computed = retrieve_and_score_each(cluster, jobs, progress=progress)
    return [plan.finish(given, done) for plan, given, done in zip(plans, resolved, computed, strict=True)]


_Resolved = tuple[GoldSet, GoldPassages, list[str]]


@dataclass(frozen=True)
class _Plan:
    """What ``evaluate`` decides before any retrieval: the checked inputs, the metrics, the depths,
    the slices, and the warnings found so far. ``finish`` retrieves (or takes what the Ray engine
    computed), scores and builds the result."""

    gold_sets: list[GoldSet]
    corpus: Corpus | None
    retriever: Retriever | None
    run: Run | None
    settings: EvaluateSettings
    metric_names: list[str]
    slice_fields: list[str]
    recorded_depth: int
    depth: int
    tokens: ContextTokens | None
    warnings: list[str]

    @classmethod
    def of(
        cls,
        gold_sets: Sequence[GoldSet] | GoldSet,
        *,
        corpus: Corpus | None,
        retriever: Retriever | object | None,
        run: Run | None,
        settings: EvaluateSettings,
    ) -> _Plan:
        if (retriever is None) == (run is None):
            raise InputError("give either a retriever or a run, not both and not neither")
        checked_retriever = _as_retriever(retriever)
        gold_sets = _checked_gold_sets(gold_sets)
        k, by, depth = list(settings.k), list(settings.by), settings.depth
        _check_components(corpus=corpus, retriever=checked_retriever, run=run)
        _check_distinct_names(gold_sets)
        metric_names = list(settings.metric_names())
        # A set with questions that need several passages (two-chunk questions, multi-evidence qrels):
        # complete@k beside each recall@k, and a slice by how many passages a query needs, so multi-part
        # questions that fail show while any-hit recall looks fine (only the default metrics change).
        several = _needs_several(gold_sets, settings.relevance_threshold)
        if several and not settings.metrics:
            metric_names = _with_complete(metric_names)
        slice_fields = [*by, GOLD_COUNT] if several and GOLD_COUNT not in by else by
        recorded_depth = depth or _deepest_cutoff(metric_names, default=max(k))
        tokens = _context_tokens(corpus)
        warnings: list[str] = []
        if by:
            warnings.extend(_unknown_field_warnings(gold_sets, by))
        warnings.extend(_style_leak_warnings(gold_sets))
        return cls(
            gold_sets=gold_sets,
            corpus=corpus,
            retriever=checked_retriever,
            run=run,
            settings=settings,
            metric_names=metric_names,
            slice_fields=slice_fields,
            recorded_depth=recorded_depth,
            depth=depth or _retrieval_depth(metric_names, tokens, recorded_depth),
            tokens=tokens,
            warnings=warnings,
        )

    def resolve(self, gold: GoldSet) -> _Resolved:
        settings = self.settings
        return _resolved(gold, self.corpus, settings.gold_from, settings.evidence_coverage)

    def resolve_all(self) -> list[_Resolved]:
        """Every gold set's passages resolved, before the Ray engine retrieves and scores them all."""
        return [self.resolve(gold) for gold in self.gold_sets]

    def job(self, resolved: Sequence[_Resolved]) -> Job:
        """What the Ray engine retrieves and scores: the resolved gold sets and how."""
        from realrecall.evaluate.on_cluster import Job, Scoring

        gold_sets = [item[0] for item in resolved]
        if self.run is None:
            for gold in gold_sets:
                _check_query_texts(gold)
        scoring = Scoring(tuple(self.metric_names), self.settings.relevance_threshold, self.tokens)
        return Job(gold_sets, self.retriever, self.run, self.depth, scoring, retriever_name)

    def finish(
        self,
        resolved: Sequence[_Resolved] = (),
        computed: Sequence[tuple[Run, QueryScores]] = (),
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> EvaluationResult:
        """The result: each gold set retrieved and scored here (or as ``computed`` on the Ray engine,
        its gold sets ``resolved`` first), then its figures, slices and warnings."""
        from realrecall.evaluate.scoring import score_queries

        corpus, retriever, run, settings = self.corpus, self.retriever, self.run, self.settings
        metric_names, tokens = self.metric_names, self.tokens
        k, by = list(settings.k), list(settings.by)
        warnings = list(self.warnings)
        results = []
        for index, given in enumerate(self.gold_sets):
            gold, passages, resolution_warnings = resolved[index] if resolved else self.resolve(given)
            _give_back_memory(gold)
            warnings.extend(resolution_warnings)
            if computed:
                gold_run, scores = computed[index]
            else:
                gold_run = _run_for(gold, run, retriever, self.depth, progress)
                scores = score_queries(
                    gold,
                    gold_run,
                    metric_names,
                    relevance_threshold=settings.relevance_threshold,
                    corpus=tokens,
                )
            missing_passages = len(gold.missing_passages(corpus.ids)) if corpus is not None else 0
            warnings.extend(_warnings_for(gold, scores, missing_passages))
            warnings.extend(_reserved_field_warnings(gold))
            if corpus is not None:
                warnings.extend(
                    _unknown_id_warning(gold, gold_run, corpus, "the run" if run else "the retriever")
                )
            result = _gold_set_result(
                gold,
                gold_run,
                scores,
                metric_names,
                by,
                self.recorded_depth,
                missing_passages,
                self.slice_fields,
            )
            del scores
            _give_back_memory(gold)
            context = _context_at(gold, gold_run, tokens, metric_names, k)
            results.append(
                replace(
                    result,
                    gold_passages=passages,
                    context_tokens=context,
                    judge_labels=_judge_label_use(gold),
                )
            )
        description = (
            {"name": retriever_name(retriever), "description": retriever.description}
            if retriever is not None
            else {"name": "run", "description": f"run file {run.name if run is not None else ''}"}
        )
        approximate = getattr(retriever, "approximate", None)
        if approximate:
            description["approximate"] = str(approximate)
            warnings.append(approximate_warning(description["name"], str(approximate)))
        return EvaluationResult(
            retriever=description,
            corpus=_describe_corpus(corpus),
            metrics=tuple(metric_names),
            relevance_threshold=settings.relevance_threshold,
            gold_sets=tuple(results),
            created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            warnings=tuple(warnings),
            version=__version__,
            retriever_fingerprint=_fingerprint_of(retriever, run),
            token_method=None if tokens is None else tokens.method,
            engine=settings.engine_settings.engine if settings.engine_settings.on_ray else None,
        )


def _judge_label_use(gold: GoldSet) -> JudgeLabelUse | None:
    """How many of the judged pairs scored a judge graded (``formats.judge_marks``); None: none.

    Looks only at the marked queries: a gold set without marks costs one empty check.
    """
    marks = gold.judged_by_judge()
    if not marks:
        return None
    models: Counter[str] = Counter()
    touched = []
    for query_id, marked in marks.items():
        query = gold.get(query_id)
        scored = [] if query is None else [model for pid, model in marked.items() if pid in query.gold]
        if scored:
            touched.append(query_id)
            models.update(scored)
    if not touched:
        return None
    judged = sum(map(len, map(_GOLD, gold)))
    return JudgeLabelUse(
        pairs=sum(models.values()),
        judged_pairs=judged,
        n_queries=len(gold),
        query_ids=tuple(touched),
        models=dict(models.most_common()),
    )


def _needs_several(gold_sets: Sequence[GoldSet], threshold: int) -> bool:
    """Whether a query of any set has two or more relevant gold passages, or two evidence spans."""
    for gold in gold_sets:
        # Most sets judge one passage a query: one C-level pass rules them out.
        if max(map(len, map(_GOLD, gold)), default=0) < 2 and (
            gold.bare or max(map(len, map(_EVIDENCE, gold)), default=0) < 2
        ):
            continue
        if any(len(query.relevant(threshold)) >= 2 or len(query.evidence) >= 2 for query in gold):
            return True
    return False


def _with_complete(metrics: Sequence[str]) -> list[str]:
    """``metrics`` with ``complete@k`` right after each ``recall@k`` it lacks."""
    out: list[str] = []
    for name in metrics:
        out.append(name)
        kind, _, k = name.partition("@")
        if kind == "recall" and k.isdigit() and f"complete@{k}" not in metrics:
            out.append(f"complete@{k}")
    return out


def _give_back_memory(gold: GoldSet) -> None:
    """After a big gold set's scoring, the freed heap pages go back to the system: the C library keeps
    them (its mmap threshold grows with the arrays freed), counted in the RSS of every later step."""
    if len(gold) >= _GIVE_BACK_QUERIES:
        give_back_memory()


_GIVE_BACK_QUERIES = 1 << 16


def _context_tokens(corpus: Corpus | None) -> ContextTokens | None:
    """The chunks' token counts (counted when first needed); None without a corpus."""
    if corpus is None:
        return None
    from realrecall.evaluate.budget import ContextTokens

    return ContextTokens(corpus)


def _retrieval_depth(metrics: Sequence[str], tokens: ContextTokens | None, deepest: int) -> int:
    """How many ids to ask the retriever for: the deepest cut-off, or deeper for a token budget."""
    from realrecall.evaluate.metrics import parse_metric

    budgets = [budget for budget in (parse_metric(name).budget for name in metrics) if budget is not None]
    if not budgets or tokens is None:
        return deepest  # without a corpus a budgeted metric is refused when scored
    from realrecall.evaluate.budget import budget_depth  # token counting, only for a token budget

    return budget_depth(tokens, budgets, at_least=deepest)


def _context_at(
    gold: GoldSet, run: Run, tokens: ContextTokens | None, metrics: Sequence[str], k: Sequence[int]
) -> dict[int, float] | None:
    """Mean tokens of the top k chunks at each cut-off of the metrics (or of ``k``), over the gold set."""
    if tokens is None:
        return None
    from realrecall.evaluate.budget import mean_context_tokens

    cutoffs = _cutoffs(metrics) or sorted(set(k))
    rankings = run.ranked_many([query.query_id for query in gold], max(cutoffs))
    return mean_context_tokens(rankings, tokens, cutoffs)


def _cutoffs(metrics: Sequence[str]) -> list[int]:
    return sorted({int(tail) for _, _, tail in (m.rpartition("@") for m in metrics) if tail.isdigit()})


def _resolved(
    gold: GoldSet, corpus: Corpus | None, gold_from: str, coverage: float
) -> tuple[GoldSet, GoldPassages, list[str]]:
    """The gold set with its passages resolved against ``corpus``, where they came from, and warnings.

    Without a corpus nothing can be resolved: ids are used as they are, and queries anchored by
    evidence alone score 0 (said in a warning; ``gold_from="evidence"`` is refused).
    """
    with_evidence = [] if gold.bare else list(filter(_EVIDENCE, gold))
    if corpus is None:
        if with_evidence and gold_from == "evidence":
            raise InputError(
                f"gold set {gold.name!r} is scored from its evidence, which needs the corpus",
                path=gold.path,
                hint="give the corpus (--corpus), or --gold-from ids",
            )
        warnings = []
        evidence_only = [query.query_id for query in with_evidence if not query.gold]
        if evidence_only and gold_from == "auto":
            warnings.append(
                f"{gold.name}: {len(evidence_only)} queries name no chunk, only evidence "
                f"({_first(evidence_only)}); without the corpus it cannot be resolved and they score 0: "
                "give the corpus (--corpus)"
            )
        by_id = sum(map(len, map(_GOLD, gold)))
        return gold, GoldPassages(gold_from="ids", by_id=by_id), warnings
    resolved, resolution = resolve_gold(gold, corpus, gold_from=gold_from, coverage=coverage)
    return resolved, _gold_passages(resolution), _resolution_warnings(gold, resolution, with_evidence)


def _gold_passages(resolution: Resolution) -> GoldPassages:
    return GoldPassages(
        gold_from=resolution.gold_from,
        coverage=resolution.coverage,
        by_id=resolution.by_id,
        from_evidence=resolution.from_evidence,
        split=resolution.split,
        lost=resolution.lost,
        lost_queries=resolution.lost_queries,
        missing_ids=resolution.missing_ids,
        replaced_ids=resolution.replaced_ids,
    )


def _resolution_warnings(
    gold: GoldSet, resolution: Resolution, with_evidence: Sequence[GoldQuery]
) -> list[str]:
    warnings = []
    lost = resolution.lost_queries
    if lost:
        warnings.append(
            f"{gold.name}: {resolution.lost} evidence items were found in no chunk of the corpus, for "
            f"{len(lost)} queries ({_first(lost)}); a query left with no gold passage scores 0: check "
            "the corpus holds their documents (doc_id) and text, or lower --evidence-coverage"
        )
    if resolution.gold_from == "evidence" and len(with_evidence) < len(gold):
        without = [query.query_id for query in gold if not query.evidence]
        warnings.append(
            f"{gold.name}: {len(without)} queries have no evidence ({_first(without)}); scored from "
            "evidence only, they score 0: use --gold-from auto to take their ids"
        )
    return warnings


def _first(query_ids: Sequence[str], shown: int = 5) -> str:
    """The first few ids of a list, as a warning names them."""
    names = ", ".join(repr(query_id) for query_id in query_ids[:shown])
    return f"first: {names}" if len(query_ids) > shown else names


def _as_retriever(retriever: object) -> Retriever | None:
    """A LangChain or LlamaIndex object as a retriever; anything else as given (checked later)."""
    if retriever is None:
        return None
    from realrecall.evaluate.retrievers.frameworks import framework_retriever

    adapted = framework_retriever(retriever)
    return adapted if adapted is not None else cast("Retriever", retriever)


def _fingerprint_of(retriever: Retriever | None, run: Run | None) -> Mapping[str, Any]:
    """The retriever's fingerprint (``build_retriever`` attaches one), else its name and description.

    A run file is known only by its name: two run files are one retriever only if they say so.
    """
    if retriever is None:
        return {"name": "run", "run": run.name if run is not None else ""}
    given = getattr(retriever, "fingerprint", None)
    if isinstance(given, Mapping):
        return dict(given)
    return {"name": retriever_name(retriever), "description": retriever.description}


def _checked_gold_sets(gold_sets: Sequence[GoldSet] | GoldSet) -> list[GoldSet]:
    """The gold sets as a list; a single one is taken as a list of one."""
    sets = [gold_sets] if isinstance(gold_sets, GoldSet) else list(gold_sets)
    if not sets:
        raise InputError("no gold set given", hint="pass at least one gold set")
    for gold in sets:
        if not isinstance(gold, GoldSet):
            raise InputError(
                f"gold sets must be GoldSet objects, got {type(gold).__name__}",
                hint="read them with load_gold(path)",
            )
    return sets


def _check_components(corpus: Any, retriever: Any, run: Any) -> None:
    from realrecall.runs import Run

    if corpus is not None and not isinstance(corpus, _corpus_type()):
        raise InputError(
            f"corpus must be a Corpus, got {type(corpus).__name__}", hint="read it with load_corpus(path)"
        )
    if run is not None and not isinstance(run, Run):
        raise InputError(f"run must be a Run, got {type(run).__name__}", hint="read it with load_run(path)")
    if retriever is not None and not callable(getattr(retriever, "search", None)):
        raise InputError(
            f"retriever must have a search(queries, k) method, got {type(retriever).__name__}",
            hint="build one with build_retriever(name, corpus)",
        )


def _corpus_type() -> type:
    """``Corpus``, its module imported only when a corpus is given (a run's files alone need none)."""
    from realrecall.corpus import Corpus

    return Corpus


def _check_distinct_names(gold_sets: Sequence[GoldSet]) -> None:
    """Results, reports and ``--origin NAME=...`` tell gold sets apart by name: two of one name (the
    same file given twice, say) would be scored twice and read back as one set."""
    first: dict[str, GoldSet] = {}
    for gold in gold_sets:
        other = first.setdefault(gold.name, gold)
        if other is gold:
            continue
        same_file = (
            other.path is not None
            and gold.path is not None
            and Path(other.path).resolve() == Path(gold.path).resolve()
        )
        if same_file:
            raise InputError(f"gold set {gold.path} is given twice", hint="give each gold set once")
        raise InputError(
            f"two gold sets are named {gold.name!r} "
            f"({other.path or 'in memory'} and {gold.path or 'in memory'})",
            hint="rename one of the files: results tell gold sets apart by name",
        )


def _deepest_cutoff(metrics: Sequence[str], *, default: int) -> int:
    return max(_cutoffs(metrics), default=default)


def approximate_warning(name: str, how: str) -> str:
    """What results say of a retriever whose search is approximate (``how``: the index it walks)."""
    return (
        f"{name}'s search is approximate ({how}): two builds of the same vectors can rank differently, "
        "so a figure can move when the store is rebuilt (the fingerprint names the index searched)"
    )


def retriever_name(retriever: Any) -> str:
    return str(getattr(retriever, "name", type(retriever).__name__))


def _run_for(
    gold: GoldSet,
    run: Run | None,
    retriever: Retriever | None,
    depth: int,
    progress: Callable[[int, int], None] | None,
) -> Run:
    """The given run, or the retriever's ranking of this gold set's queries."""
    if run is not None:
        return run
    if retriever is None:
        raise InputError("give either a retriever or a run, not both and not neither")
    return _retrieve(retriever, gold, depth, progress)


def _retrieve(
    retriever: Retriever, gold: GoldSet, depth: int, progress: Callable[[int, int], None] | None
) -> Run:
    from realrecall.runs import Run

    _check_query_texts(gold)
    ranked = retrieve(retriever, {q.query_id: q.query for q in gold}, depth, progress=progress)
    return Run.from_lists(ranked, name=retriever_name(retriever))


def _check_query_texts(gold: GoldSet) -> None:
    empty = [q.query_id for q in gold if not q.query.strip()]
    if empty:
        raise InputError(
            f"{len(empty)} queries have no text (first: {empty[0]!r}); a retriever needs the question",
            path=gold.path,
            hint="TREC qrels carry no query text: give a JSON Lines or BEIR gold set, or score a --run",
        )


def _warnings_for(gold: GoldSet, scores: QueryScores, missing_passages: int) -> list[str]:
    warnings = []
    if missing_passages:
        warnings.append(
            f"{gold.name}: {missing_passages} gold passage ids are not in the corpus "
            "(those queries cannot reach a perfect score; check ids match the corpus)"
        )
    if scores.missing_run:
        warnings.append(
            f"{gold.name}: {len(scores.missing_run)} of {len(gold)} queries have no entry in the run; "
            "they score 0 (a retriever that returns nothing has missed)"
        )
    if scores.no_relevant:
        warnings.append(
            f"{gold.name}: {len(scores.no_relevant)} queries have no relevant passage at this threshold; "
            "they score 0"
        )
    return warnings


def _unknown_id_warning(gold: GoldSet, run: Run, corpus: Corpus, source: str) -> list[str]:
    """A run naming ids the corpus lacks scores 0 on them: say so instead of a silent 0.0.

    Typical causes: a custom retriever returning its vector store's own ids, or a run made over
    another corpus (or another chunking of it).
    """
    unknown: dict[str, None] = {}
    queries = 0
    for query in gold:
        missing = [pid for pid in run.passage_ids(query.query_id) if pid not in corpus]
        if missing:
            queries += 1
            unknown.update(dict.fromkeys(missing))
    if not unknown:
        return []
    examples = ", ".join(repr(pid) for pid in list(unknown)[:3])
    return [
        f"{gold.name}: {source} returned {len(unknown)} ids that are not in the corpus, for {queries} of "
        f"{len(gold)} queries (e.g. {examples}); they can never match a gold passage: return the "
        "corpus' chunk ids"
    ]


def _style_leak_warnings(gold_sets: Sequence[GoldSet]) -> list[str]:
    """A warning for each real set holding questions that were style examples of a synthetic set
    evaluated beside it (``style_leak_warning``); the results carry it to calibrate and run."""
    # C-level passes over the queries (a million qrels queries: 0.01 s, not 0.15).
    styled = [
        g
        for g in gold_sets
        if not g.bare and any(p.style_example_ids for p in filter(None, map(_PROVENANCE, g)))
    ]
    real = [g for g in gold_sets if "real" in map(_ORIGIN, g)]
    found = (style_leak_warning(s, r) for s in styled for r in real if r is not s)
    return [warning for warning in found if warning is not None]


def _unknown_field_warnings(gold_sets: Sequence[GoldSet], by: Sequence[str]) -> list[str]:
    """A ``by`` field no query has (a typo, or a field the gold sets lack) gives one ``(none)`` slice."""
    present: dict[str, None] = {}
    for gold in gold_sets:
        for query in gold:
            present.update(dict.fromkeys(_present_fields(query)))
    known = ", ".join(present) or "none"
    return [
        f"no query has the field {name!r}: its only slice is (none) (fields present: {known})"
        for name in dict.fromkeys(by)
        if name not in present and name not in ("query_id", "query")
    ]


def _present_fields(query: GoldQuery) -> list[str]:
    """``query.present_fields()`` once labelled: every query has a type and a form (see ``_Labels``)."""
    core = [
        name for name in ("origin", "type", "language") if name == "type" or getattr(query, name) is not None
    ]
    extra = [name for name, value in query.metadata.items() if name == "form" or value is not None]
    if "form" not in query.metadata:
        extra.append("form")
    return core + extra + (["provenance"] if query.provenance is not None else [])


@dataclass(frozen=True, eq=False)
class _Labels:
    """Each query's type and form as slices give them: its own, else the rules' (``realrecall.labels``).

    Strata match only if every query has a type and a form: a set without them (BEIR, TREC, an older
    synthetic set) gets them from the rules real and synthetic questions are typed by. Each column is
    labelled the first time a slice asks for it (a million distinct questions take 9 s), never for a
    run sliced by neither, and only the queries without a label of their own are labelled.
    """

    gold: GoldSet

    @cached_property
    def types(self) -> list[str | None]:
        return _own_or_rules(list(map(_TYPE, self.gold)), self.gold, _labeller().types)

    @cached_property
    def forms(self) -> list[str | None]:
        return _own_or_rules(list(map(_own_form, self.gold)), self.gold, _labeller().forms)

    @cached_property
    def gold_counts(self) -> list[Any]:
        """``query.field(GOLD_COUNT)`` of every query: its own field, else its relevant passages
        (grade >= 1) counted over all queries at once (a frozenset per query took 0.6 s of 100k)."""
        if self.gold.bare or all(map(_IS_NO_FIELDS, map(_METADATA, self.gold))):
            return _relevant_counts(self.gold)  # qrels queries: no record, no field of their own
        own = list(map(_own_gold_count, self.gold))
        if None not in own:
            return own
        counted = _relevant_counts(self.gold)
        return [count if value is None else value for value, count in zip(own, counted, strict=True)]

    def column(self, name: str) -> list[Any]:
        """``query.field(name)`` of every query, with the rules' type and form for a query without its
        own."""
        if name == "type":
            return self.types
        if name == "form":
            return self.forms
        if name == GOLD_COUNT:
            return self.gold_counts
        return list(map(methodcaller("field", name), self.gold))


def _every_judged_relevant(gold: GoldSet) -> bool:
    """Whether no judged passage of the set has a grade below 1 (none judged: vacuously)."""
    return gold.lowest_grade is None or gold.lowest_grade >= 1


def _relevant_counts(gold: GoldSet) -> list[int]:
    """Each query's number of judged passages of grade 1 or more, in C-level passes."""
    judged = list(map(_GOLD, gold))
    if _every_judged_relevant(gold):
        return list(map(len, judged))  # every judged passage relevant, as in most qrels
    counts = np.fromiter(map(len, judged), dtype=np.int64, count=len(judged))
    grades = np.fromiter(chain.from_iterable(map(_VALUES, judged)), dtype=np.int64, count=int(counts.sum()))
    query = np.repeat(np.arange(len(judged)), counts)
    relevant: list[int] = np.bincount(query[grades >= 1], minlength=len(judged)).tolist()
    return relevant


def _labeller() -> Labeller:
    """The rules' labeller, its module imported only when a query is labelled (the rules' module and
    tomllib took 12 ms of CPU at start-up, for every evaluate that never labels)."""
    from realrecall.labels import default_labeller

    return default_labeller()


def _own_or_rules(
    own: list[Any], gold: GoldSet, label: Callable[[Sequence[str]], Sequence[str]]
) -> list[Any]:
    """``own``, each None replaced by the rules' label of its query's text (labelled in one column)."""
    missing = list(map(_IS_NONE, own))
    if not any(missing):
        return own
    labelled = iter(label(list(compress(map(_QUERY, gold), missing))))
    return [value if value is not None else next(labelled) for value in own]


def _own_gold_count(query: GoldQuery) -> Any:
    """The gold_count a query's record gives (None for a qrels query, whose NO_FIELDS is not asked)."""
    metadata = query.metadata
    return None if metadata is NO_FIELDS else metadata.get(GOLD_COUNT)


def _own_form(query: GoldQuery) -> Any:
    """The form a query's record gives; NO_FIELDS (every qrels query's) is not asked: its get is Python."""
    metadata = query.metadata
    return None if metadata is NO_FIELDS else metadata.get("form")


@bulk_step
def _gold_set_result(
    gold: GoldSet,
    run: Run,
    scores: QueryScores,
    metrics: Sequence[str],
    by: Sequence[str],
    depth: int,
    missing_passages: int,
    slice_fields: Sequence[str] | None = None,
) -> GoldSetResult:
    """``slice_fields``: the fields sliced (default ``by``, the fields asked for and recorded as such)."""
    everyone = np.zeros(len(gold), dtype=np.intp)
    overall = SliceResult(None, None, len(gold), scores.group_means(metrics, everyone, 1)[0])
    slices = []
    labels = _Labels(gold)  # each column labelled only if a slice asks for it
    for field in by if slice_fields is None else slice_fields:
        values, groups = group_codes(labels.column(field))
        sizes = np.bincount(groups, minlength=len(values)).tolist()
        means = scores.group_means(metrics, groups, len(values))
        found = zip(zip(values, sizes, strict=True), means, strict=True)
        for (value, size), of_slice in sorted(found, key=_by_slice):
            slices.append(SliceResult(field, value, size, of_slice))
    queries = _EvaluatedQueries(
        gold=gold,
        by=tuple(by),
        metrics=tuple(metrics),
        values=tuple(scores.in_gold_order(scores.values[m]) for m in metrics),
        first_relevant_rank=scores.in_gold_order(scores.first_relevant_rank),
        run=run,
        depth=depth,
    )
    origins = _origin_counts(gold)
    path = Path(gold.path) if gold.path else None
    file = path if path is not None and path.is_file() else None
    return GoldSetResult(
        name=gold.name,
        path=gold.path,
        sha256=file_sha256(file) if file is not None else None,
        modified=_mtime(file) if file is not None else None,
        origins=origins,
        overall=overall,
        slices=tuple(slices),
        queries=queries,
        missing_run=len(scores.missing_run),
        no_relevant=len(scores.no_relevant),
        missing_passages=missing_passages,
    )


def _origin_counts(gold: GoldSet) -> dict[str, int]:
    """Queries per origin, first seen first, "unknown" for those without one: counted by Counter in C
    (a dict.get and a store per query took 0.06 s of 100k queries, a generator step each 0.03 s)."""
    origins: dict[str, int] = {}
    for origin, count in Counter(map(_ORIGIN, gold)).items():
        name = origin or "unknown"
        origins[name] = origins.get(name, 0) + count
    return origins


@dataclass(frozen=True, eq=False, repr=False)
class _EvaluatedQueries(QueryRecords):
    """The per-query outcomes of one gold set, kept as the gold set and metric columns.

    Columns and records are made from them as they are written; the top ids (ranking every query of the run)
    only when the per-query file or a caller reading the queries asks for them.
    """

    gold: GoldSet
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    values: tuple[np.ndarray, ...]
    """Per metric, float64 values in the gold set's order."""
    first_relevant_rank: np.ndarray
    """int64 in the gold set's order, 0 when nothing relevant was retrieved."""
    run: Run
    depth: int

    def __len__(self) -> int:
        return len(self.gold)

    def _tops(self) -> list[tuple[str, ...]]:
        tops: list[tuple[str, ...]] | None = self.__dict__.get("_top_ids")
        if tops is None:
            tops = self.__dict__["_top_ids"] = self.run.ranked_many(self.gold.ids, self.depth)
        return tops

    def _rows(
        self, *, with_top: bool
    ) -> Iterator[tuple[GoldQuery, dict[str, Any], int, tuple[str, ...] | None, dict[str, float]]]:
        tops: Iterable[tuple[str, ...] | None] = self._tops() if with_top else repeat(None, len(self))
        rows = zip(
            self.gold,
            listed(self.first_relevant_rank),
            tops,
            zip(*map(listed, self.values), strict=True),
            strict=True,
        )
        for query, rank, top, values in rows:
            yield query, _fields(query, self.by), rank, top, dict(zip(self.metrics, values, strict=True))

    def columns(self) -> PerQueryColumns:
        gold = self.gold
        core: dict[str, Iterable[Any]] = {
            "query_id": iter(gold.ids),
            "query": map(_QUERY, gold),
            "gold": _relevant_id_lists(gold),
            "origin": map(_ORIGIN, gold),
            "type": map(_TYPE, gold),
            "language": map(_LANGUAGE, gold),
            "fields": self._field_column(),
            "first_relevant_rank": CodedColumn.of_numbers(self.first_relevant_rank, zero_is_null=True)
            or (rank or None for rank in listed(self.first_relevant_rank)),
        }
        metrics = {
            name: CodedColumn.of_numbers(values) or listed(values)
            for name, values in zip(self.metrics, self.values, strict=True)
        }
        return PerQueryColumns(core, metrics)

    def _field_column(self) -> Iterable[dict[str, Any]]:
        gold, by = self.gold, self.by
        if by or (not gold.bare and (gold.has_fields or any(map(_PROVENANCE, gold)))):
            return (record_fields(_fields(query, by)) for query in gold)
        # Queries with no field of their own (TREC and BEIR qrels): one shared empty record, coded
        # (a million queries: 0.1 s, not 0.7).
        return CodedColumn([{}], np.zeros(len(gold), dtype=np.uint8))

    def records(self, *, with_top: bool) -> Iterator[dict[str, Any]]:
        for query, fields, rank, top, values in self._rows(with_top=with_top):
            yield query_record(
                query.query_id, query.query, _relevant_ids(query), query.origin, query.type,
                query.language, fields, rank or None, top, values,
            )  # fmt: skip

    def _results(self) -> tuple[QueryResult, ...]:
        name = self.gold.name
        return tuple(
            QueryResult(
                query_id=query.query_id,
                query=query.query,
                gold=tuple(_relevant_ids(query)),
                origin=query.origin,
                type=query.type,
                language=query.language,
                first_relevant_rank=rank or None,
                top=top or (),
                metrics=values,
                fields=fields,
                gold_set=name,
            )
            for query, fields, rank, top, values in self._rows(with_top=True)
        )


_QUERY, _TYPE, _ORIGIN, _LANGUAGE = map(attrgetter, ("query", "type", "origin", "language"))
_METADATA = attrgetter("metadata")
_IS_NONE = partial(is_, None)
_IS_NO_FIELDS = partial(is_, NO_FIELDS)
_PROVENANCE, _GOLD, _EVIDENCE = map(attrgetter, ("provenance", "gold", "evidence"))
_VALUES = methodcaller("values")


def _describe_corpus(corpus: Corpus | None) -> Mapping[str, Any] | None:
    if corpus is None:
        return None
    path = Path(corpus.path) if corpus.path else None
    return {
        "path": corpus.path,
        "sha256": file_sha256(path) if path is not None and path.is_file() else None,
        "chunks": len(corpus),
    }


def _mtime(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).isoformat(timespec="seconds")


def _relevant_ids(query: GoldQuery) -> list[str]:
    """``sorted(query.relevant())`` in C-level passes (a million queries: 0.4 s, not 1.3)."""
    gold = query.gold
    return sorted(compress(gold, map(_AT_LEAST_ONE, gold.values())))


_AT_LEAST_ONE = (1).__le__  # relevant() with its default threshold, as results.json records it


def _relevant_id_lists(gold: GoldSet) -> Iterable[list[str]]:
    """``_relevant_ids`` of each query; when no grade is below 1 (most qrels), each query's judged ids
    sorted, with no Python code per query (a million queries: 0.35 s, not 0.7)."""
    if _every_judged_relevant(gold):
        return map(sorted, map(_GOLD, gold))
    return map(_relevant_ids, gold)


def _fields(query: GoldQuery, by: Sequence[str]) -> dict[str, Any]:
    """Every field of the query's gold-set record (not only those sliced here), so that calibrate and
    compare can slice the results by any of them; a ``by`` field the query lacks is recorded as None,
    but for ``form``: a query without one has the rules' (``QueryResult.label``), not a null."""
    if not query.metadata and query.provenance is None and not by:
        return {}  # a qrels query, say: nothing to copy
    fields = {name: _jsonable(value) for name, value in query.metadata.items()}
    if query.provenance is not None:
        fields["provenance"] = _jsonable(query.provenance.to_dict())
    for name in by:
        if name not in RESERVED_FIELDS and name not in _LABELLED:
            fields.setdefault(name, _jsonable(query.field(name)))
    return fields


# Fields a query without its own takes from the rules (``type`` is a core field, reserved).
_LABELLED = frozenset({"form"})


def _by_slice(item: tuple[tuple[Any, int], dict[str, float]]) -> tuple[int, int, str]:
    """``slice_sort_key`` of a slice's value and size, its means beside them."""
    return slice_sort_key(item[0])


def _reserved_field_warnings(gold: GoldSet) -> list[str]:
    """A gold-set field named like a per-query key (``top``, ``metrics``...) cannot be recorded."""
    if gold.bare:
        return []
    # NO_FIELDS, shared by every qrels query, is passed over: its iteration is Python code.
    names = set(chain.from_iterable(filter(partial(is_not, NO_FIELDS), map(_METADATA, gold))))
    taken = sorted(names.intersection(RESERVED_FIELDS))
    return [
        f"{gold.name}: field {name!r} is not carried into the results: the name is taken by the "
        "per-query record; rename it in the gold set to slice by it"
        for name in taken
    ]


def _jsonable(value: Any) -> Any:
    """A gold-set value as JSON holds it: JSON values as they are, anything else as its text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return str(value)

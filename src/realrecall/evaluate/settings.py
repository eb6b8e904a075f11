"""``EvaluateSettings``: every option of the evaluate stage, declared once, with its default and rules.

``realrecall evaluate``'s options, the ``[evaluate]`` section of pipeline.toml and the keyword arguments
of ``evaluate``, ``evaluate_files`` and ``load_inputs`` are its fields (``realrecall.settings`` derives
them from the declarations below). Kept free of heavy imports: the CLI reads it at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from realrecall.errors import InputError, SettingError
from realrecall.evaluate.retrievers.options import RunSettings
from realrecall.resolution import DEFAULT_COVERAGE, GoldFrom, check_coverage
from realrecall.settings import EngineSettings, Flag, StageSettings

__all__ = [
    "DEFAULT_RETRIEVER",
    "HEADLINE_METRIC",
    "EvaluateSettings",
    "check_cutoffs",
    "default_metrics",
    "headline_metric",
]

DEFAULT_RETRIEVER = "bm25"
"""The retriever built when none is named (and no run is scored)."""

HEADLINE_METRIC = "recall@10"
"""The metric reports lead with when none is named (calibrate's ``METRIC``), if it was evaluated."""


def headline_metric(metrics: Sequence[str]) -> str:
    """The metric a report leads with when none is named: ``HEADLINE_METRIC`` if evaluated, else the
    first. ``gold review`` lists the misses at its cut-off, so it shows what the headline counts."""
    return HEADLINE_METRIC if HEADLINE_METRIC in metrics else metrics[0]


@dataclass(frozen=True, kw_only=True)
class EvaluateSettings(StageSettings):
    """How the evaluate stage scores: which retriever, which cut-offs and metrics, which slices.

    ``evaluate`` (loaded objects) reads the scoring fields; the retriever fields (``retriever`` to
    ``run_settings``) say which retriever ``evaluate_files`` and ``load_inputs`` build from a name.
    """

    retriever: Annotated[
        str | None,
        "The retriever to build over the corpus: a registered name, module:function or "
        f"path/to/file.py:function (default {DEFAULT_RETRIEVER}).",
    ] = None
    retriever_options: Annotated[
        Mapping[str, object],
        "Retriever option KEY=VALUE (repeatable).",
        Flag("--retriever-option", metavar="KEY=VALUE"),
    ] = field(default_factory=dict)
    embed_model: Annotated[str | None, "Embedding model of the dense retriever."] = None
    hybrid_dense: Annotated[str, "Dense side of the hybrid retriever: dense or local-dense."] = "local-dense"
    run_settings: RunSettings = field(default_factory=RunSettings)
    """How the retriever is called (cache folder, workers, query timeout); set by its fields' names."""
    k: Annotated[
        tuple[int, ...],
        "Cutoffs, comma-separated: recall@k at each, MRR at the largest, nDCG at the one nearest 10.",
    ] = (1, 5, 10, 50)
    metrics: Annotated[
        tuple[str, ...],
        "Explicit metrics instead of what k gives, e.g. recall@10,mrr@10,recall@2000tok.",
    ] = ()
    by: Annotated[tuple[str, ...], "Slice by gold-set fields, e.g. type,language,origin."] = ()
    relevance_threshold: Annotated[int, "Lowest grade that counts as relevant (trec_eval's -l)."] = 1
    depth: Annotated[
        int | None,
        "Ids asked of the retriever per query (default: the deepest cut-off the metrics use, deeper "
        "for a token budget).",
    ] = None
    gold_from: Annotated[
        GoldFrom,
        "Where gold passages come from: ids, evidence, or auto (chunk ids the corpus holds, evidence "
        "for the rest).",
    ] = "auto"
    evidence_coverage: Annotated[
        float, "Share of an evidence span a chunk must hold to be gold, in (0, 1]."
    ] = DEFAULT_COVERAGE
    engine_settings: EngineSettings = field(default_factory=EngineSettings)
    """Where retrieval and per-query scoring run: here, or a Ray cluster; set by its fields' names."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_cutoffs(self.k)
        if self.metrics:
            object.__setattr__(self, "metrics", _checked_metrics(self.metrics))
        if not all(name.strip() for name in self.by):
            raise SettingError("by", f"must name gold-set fields, got {self.by!r}", hint="e.g. type,language")
        if self.retriever is not None and not self.retriever.strip():
            raise SettingError("retriever", "must name a retriever, got ''", hint="e.g. bm25")
        if self.depth is not None and self.depth < 1:
            raise SettingError("depth", f"must be a whole number >= 1, got {self.depth!r}", hint="e.g. 100")
        check_coverage(self.evidence_coverage)

    def metric_names(self) -> tuple[str, ...]:
        """The metrics scored: ``metrics`` if given, else what ``k`` gives (``default_metrics``)."""
        return self.metrics or tuple(default_metrics(self.k))

    def retriever_defaults(self) -> dict[str, Any]:
        """Values of the older specific options (``embed_model``, ``hybrid_dense``) for the retriever
        options of the same meaning, used only by a retriever that has them (``make_options``)."""
        return {"embed_model": self.embed_model, "dense_component": self.hybrid_dense}


def check_cutoffs(k: Sequence[int]) -> None:
    """The one rule of cut-offs: at least one, each a whole number >= 1."""
    if not k or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in k):
        raise SettingError("k", f"must hold whole numbers >= 1, got {list(k)}", hint="e.g. 1,5,10")


def default_metrics(k: Sequence[int]) -> list[str]:
    """recall@k for every cutoff, MRR cut at the largest, nDCG at the cutoff nearest 10.

    Few enough to read in one table; any other metric is one ``metrics=[...]`` away.
    """
    check_cutoffs(k)
    ks = sorted(set(k))
    ndcg_cutoff = min(ks, key=lambda n: (abs(n - 10), n))
    return [f"recall@{n}" for n in ks] + [f"mrr@{ks[-1]}", f"ndcg@{ndcg_cutoff}"]


def _checked_metrics(names: tuple[str, ...]) -> tuple[str, ...]:
    """Names the metric registry knows (budgeted ones included), each once."""
    from realrecall.evaluate.metrics import parse_metric  # numpy: only when metrics are named

    for name in names:
        try:
            parse_metric(name)
        except InputError as exc:
            raise SettingError("metrics", f": {exc.message}", hint=exc.hint) from None
    return tuple(dict.fromkeys(names))

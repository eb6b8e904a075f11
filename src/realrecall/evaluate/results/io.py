"""The only reader and writer of results.json and the per-query file.

Writing streams each gold set's columns (``columns``); reading checks every value, so a file that is
not what evaluate writes is one ``InputError`` naming it, its line (per-query file) and the fix.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice, repeat
from pathlib import Path
from typing import Any

from realrecall.bulk import bulk_step
from realrecall.errors import InputError
from realrecall.evaluate.results.columns import columns_of, results_chunks
from realrecall.evaluate.results.types import (
    PER_QUERY_COLUMNS,
    RESERVED_FIELDS,
    EvaluationResult,
    GoldPassages,
    GoldSetResult,
    JudgeLabelUse,
    QueryResult,
    ResultsSource,
    SliceResult,
    records_of,
)
from realrecall.files import TOO_DEEP, atomic_write_chunks, iter_jsonl, read_text_lines
from realrecall.gold import ORIGINS

__all__ = [
    "load_results",
    "read_per_query",
    "write_per_query",
    "write_results",
]

_RESULTS_HINT = "give evaluate's results.json (or rerun evaluate)"
_PASSAGE_COUNTS = ("by_id", "from_evidence", "split", "lost", "missing_ids", "replaced_ids")


@bulk_step
def write_results(result: EvaluationResult, path: str | Path) -> None:
    """Write ``results.json`` atomically, its per-query columns streamed (never all in memory at once)."""
    tables = [columns_of(g.queries) for g in result.gold_sets]
    atomic_write_chunks(path, results_chunks(result._outline(), tables))


# Records encoded per piece of the per-query file: few write calls, each cheap.
_RECORDS_PER_CHUNK = 2048


@bulk_step
def write_per_query(result: EvaluationResult, path: str | Path) -> int:
    """Write one JSON line per query of every gold set (with its top-k ids) for miss analysis."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for gold_set in result.gold_sets:
            records = records_of(gold_set.queries, with_top=True)
            while batch := list(islice(records, _RECORDS_PER_CHUNK)):
                count += len(batch)
                yield "".join(encode({"gold_set": gold_set.name, **record}) + "\n" for record in batch)

    atomic_write_chunks(path, lines())
    return count


@bulk_step
def load_results(source: ResultsSource, *, origins: Mapping[str, str] | None = None) -> EvaluationResult:
    """Read results.json (a path, or the already-parsed mapping) into an :class:`EvaluationResult`.

    Every value is checked: a file that is not what evaluate writes is an InputError naming it.
    ``origins`` (gold set name -> ``real`` | ``synthetic``) sets the origin of every query of the
    named gold sets, for sets evaluated without one (a BEIR or TREC real set, say). A record without
    an origin takes its gold set's, when the set has one origin. An :class:`EvaluationResult` is
    returned as it is, with ``origins`` applied.
    """
    forced = dict(origins or {})
    if isinstance(source, EvaluationResult):
        return _with_origins(source, forced) if forced else source
    if isinstance(source, Mapping):
        return _parse(source, None, forced)
    path = Path(source)
    if not path.is_file():
        raise InputError("results file not found", path=path, hint="run `realrecall evaluate` first")
    # Read line by line: a byte that is not UTF-8 (a binary or Latin-1 file) is named by its line.
    text = "\n".join(line for _, line in read_text_lines(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg})", path=path, line=exc.lineno, hint="give evaluate's results.json"
        ) from exc
    except RecursionError:
        hint = "give evaluate's results.json"
        raise InputError(f"malformed JSON ({TOO_DEEP})", path=path, hint=hint) from None
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object", path=path, hint="give evaluate's results.json")
    return _parse(data, str(path), forced)


@bulk_step
def read_per_query(path: str | Path) -> tuple[QueryResult, ...]:
    """Every record of a per-query file (``evaluate --per-query``), in file order.

    Only ``query_id`` and ``top`` are required; ``gold`` may list the relevant ids or grade every
    judged one (``{id: grade}``); ``gold_set`` tells apart the queries of several gold sets.
    """
    records = []
    for number, record in iter_jsonl(path, what="per-query record"):
        where = _Where(str(path), number)
        query_id = record.get("query_id")
        if not isinstance(query_id, str | int) or isinstance(query_id, bool) or query_id == "":
            raise InputError('record has no "query_id"', path=path, line=number)
        if not isinstance(record.get("top"), list):
            raise InputError(
                'record has no "top" list of retrieved ids',
                path=path,
                line=number,
                hint="write the per-query file with realrecall evaluate --per-query",
            )
        gold_set = _optional_text(record.get("gold_set"), "gold_set", where)
        records.append(_query(record, gold_set, None, None, where, metrics_required=False))
    return tuple(records)


@dataclass(frozen=True)
class _Where:
    """Where a record was read: the file and, for JSON Lines, the line (errors name both)."""

    path: str | None
    line: int | None = None

    def error(self, message: str, hint: str | None = _RESULTS_HINT) -> InputError:
        return InputError(message, path=self.path, line=self.line, hint=hint)


def _parse(data: Mapping[str, Any], path: str | None, forced: Mapping[str, str]) -> EvaluationResult:
    where = _Where(path)
    gold_sets = data.get("gold_sets")
    if not isinstance(gold_sets, list) or not gold_sets:
        raise where.error("not a realrecall results.json (no gold_sets)", "give the file evaluate wrote")
    retriever = data.get("retriever") or {}
    if not isinstance(retriever, Mapping):
        retriever = {"name": _text(retriever, '"retriever"', where)}
    corpus = data.get("corpus")
    if corpus is not None and not isinstance(corpus, Mapping):
        raise where.error('"corpus" must be an object')
    raw_metrics = data.get("metrics") or []
    if not isinstance(raw_metrics, list) or not all(isinstance(m, str) for m in raw_metrics):
        raise where.error('"metrics" must be a list of metric names')
    threshold = data.get("relevance_threshold", 1)
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise where.error(f"relevance_threshold must be an integer, got {threshold!r}")
    sets = tuple(_gold_set(raw, position, forced, where) for position, raw in enumerate(gold_sets))
    metrics = tuple(raw_metrics) or tuple(
        dict.fromkeys(m for g in sets for q in g.queries for m in q.metrics)
    )
    return EvaluationResult(
        retriever={
            "name": _text(retriever.get("name") or "retriever", "retriever name", where),
            "description": _text(retriever.get("description") or "", "retriever description", where),
            **(
                {"approximate": _text(retriever["approximate"], "retriever approximate", where)}
                if retriever.get("approximate")
                else {}
            ),
        },
        corpus=None if corpus is None else _corpus(corpus, where),
        metrics=metrics,
        relevance_threshold=threshold,
        gold_sets=sets,
        created=str(data.get("created") or ""),
        warnings=_warnings(data.get("warnings"), where),
        version=str(data.get("realrecall_version") or ""),
        source=path,
        retriever_fingerprint=_retriever_fingerprint(data.get("fingerprints"), where),
        token_method=_optional_text(data.get("token_method"), "token_method", where),
        engine=_optional_text(data.get("engine"), "engine", where),
    )


def _retriever_fingerprint(value: Any, where: _Where) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise where.error('"fingerprints" must be an object')
    retriever = value.get("retriever")
    if retriever is not None and not isinstance(retriever, Mapping):
        raise where.error('"fingerprints.retriever" must be an object')
    return retriever


def _corpus(corpus: Mapping[str, Any], where: _Where) -> dict[str, Any]:
    return {
        **corpus,
        "path": _optional_text(corpus.get("path"), "corpus path", where),
        "sha256": _optional_text(corpus.get("sha256"), "corpus sha256", where),
    }


def _gold_set(raw: Any, position: int, forced: Mapping[str, str], where: _Where) -> GoldSetResult:
    if not isinstance(raw, Mapping):
        raise where.error(f"gold set {position + 1} is not an object")
    name = _text(raw.get("name") or f"gold_set_{position}", f"name of gold set {position + 1}", where)
    # A results.json read only for its settings (review takes the queries from the per-query
    # file) may hold no per-query records; calibrate and compare refuse such a set.
    per_query = raw.get("per_query", [])
    records: Iterable[Mapping[str, Any]]
    if isinstance(per_query, Mapping):
        count, records = _column_records(per_query, name, where)
    elif isinstance(per_query, list) and all(isinstance(r, Mapping) for r in per_query):
        count, records = len(per_query), per_query  # one record per query: earlier files, to_dict()
    else:
        raise where.error(
            f'gold set {name!r} has no "per_query" records',
            "rerun evaluate; calibrate needs per-query values for its intervals",
        )
    origins = _counts(raw.get("origins") or {}, f"origins of gold set {name!r}", where)
    n_queries = raw.get("n_queries", count)
    if not _is_count(n_queries):
        raise where.error(f"n_queries of gold set {name!r} must be a count")
    only = next(iter(origins)) if len(origins) == 1 else None
    default_origin = only if only in ORIGINS else None
    queries: list[QueryResult] = []
    seen: set[str] = set()
    for record in records:
        query = _query(record, name, default_origin, forced.get(name), where, metrics_required=True)
        if query.query_id in seen:
            raise where.error(f"query {query.query_id!r} of gold set {name!r} appears twice")
        seen.add(query.query_id)
        queries.append(query)
    counts = {key: raw.get(key, 0) for key in ("missing_run", "no_relevant", "missing_passages")}
    for key, value in counts.items():
        if not _is_count(value):
            raise where.error(f"{key} of gold set {name!r} must be a count")
    return GoldSetResult(
        name=name,
        path=_optional_text(raw.get("path"), f"path of gold set {name!r}", where),
        sha256=_optional_text(raw.get("sha256"), f"sha256 of gold set {name!r}", where),
        modified=_optional_text(raw.get("modified"), f"modified of gold set {name!r}", where),
        origins=origins,
        overall=_overall(raw.get("overall"), n_queries, queries),
        slices=_slices(raw.get("slices")),
        queries=tuple(queries),
        missing_run=counts["missing_run"],
        no_relevant=counts["no_relevant"],
        missing_passages=counts["missing_passages"],
        gold_passages=_gold_passages(raw.get("gold_passages"), name, where),
        context_tokens=_context_tokens(raw.get("context_tokens"), name, where),
        judge_labels=_judge_labels(raw.get("judge_labels"), name, where),
    )


def _column_records(
    table: Mapping[str, Any], name: str, where: _Where
) -> tuple[int, Iterator[Mapping[str, Any]]]:
    """How many queries a results.json table (:class:`PerQueryColumns`) holds, and their records, each
    made as it is read (a million at once would take about 1 GB); the table's shape is checked first."""
    what = f'"per_query" of gold set {name!r}'
    unknown = sorted(set(table) - {*PER_QUERY_COLUMNS, "metrics"})
    if unknown:
        raise where.error(f"{what} has an unknown column {unknown[0]!r}")
    core = {column: table[column] for column in PER_QUERY_COLUMNS if column in table}
    metrics = table.get("metrics")
    if "query_id" not in core or not isinstance(metrics, Mapping):
        raise where.error(f'{what} needs a "query_id" column and a "metrics" object of columns')
    lengths = {}
    for column, values in [*core.items(), *((f"metrics.{m}", v) for m, v in metrics.items())]:
        if not isinstance(values, list):
            raise where.error(f"{what}: column {column!r} must be a list")
        lengths[column] = len(values)
    n = lengths["query_id"]
    uneven = next((column for column, length in lengths.items() if length != n), None)
    if uneven is not None:
        raise where.error(
            f"{what}: column {uneven!r} has {lengths[uneven]} values for {n} query ids",
            "every column holds one value per query",
        )
    if "fields" in core and not all(isinstance(f, Mapping) or f is None for f in core["fields"]):
        raise where.error(f'{what}: each "fields" value must be an object')
    return n, _records_of_columns(core, {str(m): v for m, v in metrics.items()}, n)


def _records_of_columns(
    core: Mapping[str, list[Any]], metrics: Mapping[str, list[Any]], n: int
) -> Iterator[Mapping[str, Any]]:
    fields = core.get("fields") or repeat(None, n)
    others = [(name, column) for name, column in core.items() if name != "fields"]
    for index, own in enumerate(fields):
        record: dict[str, Any] = dict(own or {})
        record.update((name, column[index]) for name, column in others)
        # null is a metric the query lacks: a table has a column for every metric of any query.
        record["metrics"] = {
            name: column[index] for name, column in metrics.items() if column[index] is not None
        }
        yield record


def _context_tokens(raw: Any, name: str, where: _Where) -> dict[int, float] | None:
    """The ``context_tokens`` object of a gold set: ``{"10": mean tokens}`` (absent without a corpus)."""
    if raw is None:
        return None
    what = f"context_tokens of gold set {name!r}"
    if not isinstance(raw, Mapping):
        raise where.error(f"{what} must be an object")
    tokens = {}
    for key, value in raw.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()) or not _is_number(value):
            raise where.error(
                f"{what} maps cut-offs to mean token counts, got {_shown(key)}: {_shown(value)}"
            )
        tokens[int(key)] = float(value)
    return tokens


def _judge_labels(raw: Any, name: str, where: _Where) -> JudgeLabelUse | None:
    """The ``judge_labels`` object of a gold set (absent when no judge graded a pair it scored)."""
    if raw is None:
        return None
    what = f"judge_labels of gold set {name!r}"
    if not isinstance(raw, Mapping):
        raise where.error(f"{what} must be an object")
    counts: dict[str, Any] = {key: raw.get(key) for key in ("pairs", "judged_pairs", "n_queries")}
    for key, value in counts.items():
        if not _is_count(value):
            raise where.error(f"{key} in {what} must be a count")
    query_ids, models = raw.get("query_ids"), raw.get("models")
    if not isinstance(query_ids, list) or not all(isinstance(q, str) for q in query_ids):
        raise where.error(f"query_ids in {what} must be a list of query ids")
    if not isinstance(models, Mapping) or not all(_is_count(n) for n in models.values()):
        raise where.error(f"models in {what} must map each model to its count of pairs")
    return JudgeLabelUse(
        pairs=counts["pairs"],
        judged_pairs=counts["judged_pairs"],
        n_queries=counts["n_queries"],
        query_ids=tuple(query_ids),
        models={str(model): n for model, n in models.items()},
    )


def _gold_passages(raw: Any, name: str, where: _Where) -> GoldPassages | None:
    """The ``gold_passages`` object of a gold set (absent in results of older versions)."""
    if raw is None:
        return None
    what = f"gold_passages of gold set {name!r}"
    if not isinstance(raw, Mapping):
        raise where.error(f"{what} must be an object")
    counts = {key: raw.get(key, 0) for key in _PASSAGE_COUNTS}
    for key, value in counts.items():
        if not _is_count(value):
            raise where.error(f"{key} in {what} must be a count")
    gold_from, coverage, lost = raw.get("gold_from", "ids"), raw.get("coverage"), raw.get("lost_queries", [])
    if not isinstance(gold_from, str):
        raise where.error(f"gold_from in {what} must be a string")
    if coverage is not None and (isinstance(coverage, bool) or not isinstance(coverage, int | float)):
        raise where.error(f"coverage in {what} must be a number")
    if not isinstance(lost, list) or not all(isinstance(query_id, str) for query_id in lost):
        raise where.error(f"lost_queries in {what} must be a list of query ids")
    return GoldPassages(gold_from=gold_from, coverage=coverage, lost_queries=tuple(lost), **counts)


def _overall(raw: Any, n_queries: int, queries: Sequence[QueryResult]) -> SliceResult:
    """The all-queries figures as written; recomputed from the per-query values when absent."""
    written = _slice(raw, None)
    if written is not None:
        return written
    names = dict.fromkeys(m for q in queries for m in q.metrics)
    means = {}
    for name in names:
        values = [q.metrics[name] for q in queries if name in q.metrics]
        means[name] = math.fsum(values) / len(values)
    return SliceResult(None, None, n_queries, means)


def _slices(raw: Any) -> tuple[SliceResult, ...]:
    if not isinstance(raw, list):
        return ()
    slices = (_slice(item, item.get("field") if isinstance(item, Mapping) else None) for item in raw)
    return tuple(s for s in slices if s is not None)


def _slice(raw: Any, field_name: Any) -> SliceResult | None:
    """A written slice, or None when it is not one (the figures are not read back by any stage)."""
    if not isinstance(raw, Mapping) or not _is_count(raw.get("n")):
        return None
    metrics = raw.get("metrics")
    if not isinstance(metrics, Mapping) or not all(_is_number(v) for v in metrics.values()):
        return None
    name = field_name if isinstance(field_name, str) else None
    return SliceResult(name, raw.get("value"), raw["n"], {str(k): float(v) for k, v in metrics.items()})


def _query(
    record: Mapping[str, Any],
    gold_set: str | None,
    default_origin: str | None,
    forced_origin: str | None,
    where: _Where,
    *,
    metrics_required: bool,
) -> QueryResult:
    raw_id = record.get("query_id")
    of_set = "" if gold_set is None else f" of gold set {gold_set!r}"
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
        raise where.error(f"a query{of_set} has no query_id (got {raw_id!r})")
    query_id = str(raw_id)
    name = f"query {query_id!r}{of_set}"
    origin = forced_origin or record.get("origin") or default_origin
    if origin is not None and origin not in ORIGINS:
        raise where.error(
            f"{name} has origin {origin!r}",
            f"name it: --origin {gold_set}=real (or synthetic), or evaluate with --origin",
        )
    gold, grades = _gold(record.get("gold", record.get("gold_ids")), name, where)
    top = record.get("top") or []
    if not isinstance(top, list):
        raise where.error(f'"top" of {name} must be a list of retrieved ids')
    return QueryResult(
        query_id=query_id,
        query=str(record.get("query") or ""),
        gold=gold,
        origin=origin,
        type=_optional_text(record.get("type"), f"type of {name}", where),
        language=_optional_text(record.get("language"), f"language of {name}", where),
        first_relevant_rank=_rank(record.get("first_relevant_rank"), name, where),
        top=tuple(str(pid) for pid in top),
        metrics=_metric_values(record.get("metrics"), name, where, required=metrics_required),
        fields={str(k): v for k, v in record.items() if k not in RESERVED_FIELDS},
        gold_set=gold_set,
        grades=grades,
    )


def _gold(value: Any, name: str, where: _Where) -> tuple[tuple[str, ...], dict[str, int]]:
    """The gold ids, and their grades when the record grades them (``{id: grade}``)."""
    if value is None:
        return (), {}
    if isinstance(value, list | tuple):
        return tuple(str(pid) for pid in value), {}
    if isinstance(value, Mapping):
        grades = {}
        for pid, grade in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise where.error(f"the grade of {pid!r} in {name} is {grade!r}, not a whole number")
            grades[str(pid)] = grade
        return tuple(grades), grades
    raise where.error(f'"gold" of {name} must be a list of ids or an object {{id: grade}}')


def _metric_values(raw: Any, name: str, where: _Where, *, required: bool) -> dict[str, float]:
    if raw is None and not required:
        return {}
    if not isinstance(raw, Mapping):
        raise where.error(f"{name} has no metrics object", None)
    values: dict[str, float] = {}
    for metric, value in raw.items():
        if value is None:
            continue  # not measured for this query: left out of that metric's figures
        if not _is_number(value) or not math.isfinite(value):
            # Dropping it would quietly shrink n and move the figure; say which value is wrong.
            raise where.error(
                f"{metric} of {name} is {_shown(value)}, not a number",
                "metric values are numbers (null when not measured); rerun evaluate",
            )
        if value not in (0, 1) and _is_binary(str(metric)):
            # Its interval is a proportion's (Wilson): any other value would be miscounted.
            raise where.error(f"{metric} of {name} is {_shown(value)}; {metric} is 0 or 1 per query")
        values[str(metric)] = float(value)
    return values


def _is_binary(metric: str) -> bool:
    # The metrics module loads numpy: imported only when a value is not 0 or 1, so reading results
    # (and the CLI's start-up, through curate) stays numpy-free.
    from realrecall.evaluate.metrics import is_binary

    return is_binary(metric)


def _rank(value: Any, name: str, where: _Where) -> int | None:
    """The first relevant rank: a whole number from 1, or null when nothing relevant was retrieved."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 1:
        raise where.error(f"first_relevant_rank of {name} must be a rank from 1 or null, got {value!r}")
    return int(value)


def _text(value: Any, what: str, where: _Where) -> str:
    if not isinstance(value, str):
        raise where.error(f"{what} must be a string, got {type(value).__name__}")
    return value


def _optional_text(value: Any, what: str, where: _Where) -> str | None:
    return None if value is None else _text(value, what, where)


def _counts(value: Any, what: str, where: _Where) -> dict[str, int]:
    if not isinstance(value, Mapping) or not all(_is_count(n) for n in value.values()):
        raise where.error(f"{what} must be an object of counts")
    return {str(k): int(v) for k, v in value.items()}


def _warnings(value: Any, where: _Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise where.error('"warnings" must be a list of strings', "give evaluate's results.json")
    return tuple(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value as JSON writes it (NaN, "high", true); repr for one that came from Python, not JSON."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _with_origins(result: EvaluationResult, forced: Mapping[str, str]) -> EvaluationResult:
    """``result`` with every query of the gold sets named in ``forced`` given that origin."""
    gold_sets = tuple(
        replace(g, queries=tuple(replace(q, origin=forced[g.name]) for q in g.queries))
        if g.name in forced
        else g
        for g in result.gold_sets
    )
    return replace(result, gold_sets=gold_sets)

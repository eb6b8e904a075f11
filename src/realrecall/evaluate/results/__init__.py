"""What an evaluation produced, and the only reader and writer of its two files.

``results.json`` (:func:`write_results`, :func:`load_results`) holds every figure with the number of
queries behind it, the retriever's description, the input files' hashes and, per gold set, the
per-query values as columns (each query's metric values and every field its gold set gave it; see
:class:`PerQueryColumns`). The per-query JSON Lines
(:func:`write_per_query`, :func:`read_per_query`) repeats those records with the ids retrieved, for
miss analysis. calibrate, compare, review and the scheduled pipeline all read these types: an
:class:`EvaluationResult` from ``evaluate`` or one read back from its file are the same thing.

Three modules: ``types`` (the model), ``columns`` (the column codec: how a per-query column is coded
and written as JSON text, quicker than one object per query) and ``io`` (the files' reader and writer,
which checks every value it reads).
"""

from __future__ import annotations

from realrecall.evaluate.results.columns import (
    MAX_CODED_VALUES,
    CodedColumn,
)
from realrecall.evaluate.results.io import (
    load_results,
    read_per_query,
    write_per_query,
    write_results,
)
from realrecall.evaluate.results.types import (
    MAX_SLICE_VALUES,
    PER_QUERY_COLUMNS,
    RESERVED_FIELDS,
    EvaluationResult,
    GoldPassages,
    GoldSetResult,
    JudgeLabelUse,
    PerQueryColumns,
    QueryRecords,
    QueryResult,
    ResultsSource,
    SliceResult,
    default_slice_fields,
    distinct_labels,
    generator_of,
    merge_by_retriever,
    records_for,
)

__all__ = [
    "MAX_CODED_VALUES",
    "MAX_SLICE_VALUES",
    "PER_QUERY_COLUMNS",
    "RESERVED_FIELDS",
    "CodedColumn",
    "EvaluationResult",
    "GoldPassages",
    "GoldSetResult",
    "JudgeLabelUse",
    "PerQueryColumns",
    "QueryRecords",
    "QueryResult",
    "ResultsSource",
    "SliceResult",
    "default_slice_fields",
    "distinct_labels",
    "generator_of",
    "load_results",
    "merge_by_retriever",
    "read_per_query",
    "records_for",
    "write_per_query",
    "write_results",
]

"""Where a run's results live, so that a rerun resends nothing and a killed run loses nothing.

Beside the output gold set ``synthetic.jsonl`` a run keeps:

- ``synthetic.cache.jsonl``: every model answer received, keyed by its request's cache key (chunk hash,
  prompt hash, model, parameters, question index, attempt). Appended and fsynced before the answer is
  used, so an answer paid for is never asked for again.
- ``synthetic.failures.jsonl``: the questions of the latest run that were not kept, with the reason.
- ``synthetic.summary.json``: the latest run's summary (requests, tokens, cost, filters, ...).

The output itself is appended one record at a time and fsynced; each record names its slot key in
``provenance.slot_key``. On start, records whose key is no longer planned (chunk deleted or changed,
parameters changed) are removed by an atomic rewrite, and slots that already have a record are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from realrecall.errors import InputError
from realrecall.files import AppendLog, iter_jsonl, write_jsonl_atomic

__all__ = ["GenerationStore", "sidecar_paths"]


def sidecar_paths(output_path: Path, cache_path: Path | None = None) -> dict[str, Path]:
    """The files kept beside ``output_path`` (see module doc)."""
    stem = output_path.name.removesuffix(".jsonl")
    return {
        "cache": cache_path or output_path.with_name(f"{stem}.cache.jsonl"),
        "failures": output_path.with_name(f"{stem}.failures.jsonl"),
        "summary": output_path.with_name(f"{stem}.summary.json"),
    }


def _read_records(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists() or path.stat().st_size == 0:
        return []
    # Opening the log repairs a last line torn by a killed process before anything reads it.
    AppendLog(path).open()
    if path.stat().st_size == 0:
        return []
    return list(iter_jsonl(path, what=what))


class GenerationStore:
    """The output gold set and its request cache, read at start and appended to during a run."""

    def __init__(self, output_path: str | Path, cache_path: str | Path | None = None) -> None:
        self.output_path = Path(output_path)
        paths = sidecar_paths(self.output_path, None if cache_path is None else Path(cache_path))
        self.cache_path = paths["cache"]
        self.failures_path = paths["failures"]
        self.summary_path = paths["summary"]
        self.records: dict[str, dict[str, Any]] = {}
        self.cache: dict[str, dict[str, Any]] = {}
        self._obsolete_cache = 0
        self._rewrite_output = False
        self._output: AppendLog | None = None
        self._cache_log: AppendLog | None = None
        self._failures: AppendLog | None = None

    def load(self) -> None:
        """Read the existing output and cache (nothing is written)."""
        for number, record in _read_records(self.output_path, "question"):
            provenance = record.get("provenance")
            key = provenance.get("slot_key") if isinstance(provenance, dict) else None
            if not isinstance(key, str):
                raise InputError(
                    "the output exists but was not written by `realrecall generate` (no provenance.slot_key)",
                    path=self.output_path,
                    line=number,
                    hint="choose another --output, or move the file away",
                )
            self.records.setdefault(key, record)
        for number, entry in _read_records(self.cache_path, "cache entry"):
            if not isinstance(entry.get("key"), str) or not isinstance(entry.get("slot"), str):
                raise InputError(
                    "not a realrecall generation cache entry",
                    path=self.cache_path,
                    line=number,
                    hint="delete the cache file (the next run asks the model again)",
                )
            self.cache[entry["key"]] = entry

    def plan(
        self, slot_keys: Iterable[str], keep: Callable[[dict[str, Any]], bool] = lambda record: True
    ) -> tuple[int, int]:
        """Forget records of slots no longer planned or failing ``keep``, and cache entries of slots
        no longer planned; returns the numbers of records (kept, removed)."""
        planned = set(slot_keys)
        removed = [key for key, record in self.records.items() if key not in planned or not keep(record)]
        for key in removed:
            del self.records[key]
        obsolete = [key for key, entry in self.cache.items() if entry["slot"] not in planned]
        for key in obsolete:
            del self.cache[key]
        self._obsolete_cache = len(obsolete)
        self._rewrite_output = bool(removed)
        return len(self.records), len(removed)

    def open(self) -> None:
        """Rewrite files that lost entries (atomically), then open the logs for appending."""
        if self._rewrite_output or self._has_duplicate_lines():
            write_jsonl_atomic(self.output_path, self.records.values())
        if self._obsolete_cache:
            write_jsonl_atomic(self.cache_path, self.cache.values())
        self._output = AppendLog(self.output_path)
        self._cache_log = AppendLog(self.cache_path)
        self._failures = AppendLog(self.failures_path)
        self.failures_path.unlink(missing_ok=True)
        for log in (self._output, self._cache_log, self._failures):
            log.open()

    def _has_duplicate_lines(self) -> bool:
        if not self.output_path.exists():
            return False
        lines = sum(1 for line in self.output_path.read_text("utf-8").splitlines() if line.strip())
        return lines != len(self.records)

    def close(self) -> None:
        for log in (self._output, self._cache_log, self._failures):
            if log is not None:
                log.close()

    def add_record(self, key: str, record: Mapping[str, Any]) -> None:
        assert self._output is not None, "open() first"
        self._output.append(record)
        self.records[key] = dict(record)

    def add_cache(self, entry: Mapping[str, Any]) -> None:
        assert self._cache_log is not None, "open() first"
        self._cache_log.append(entry)
        self.cache[entry["key"]] = dict(entry)

    def add_failure(self, entry: Mapping[str, Any]) -> None:
        assert self._failures is not None, "open() first"
        self._failures.append(entry)

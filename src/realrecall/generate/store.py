"""Where a run's results live, so that a rerun resends nothing and a killed run loses nothing.

Beside the output gold set ``synthetic.jsonl`` a run keeps:

- ``synthetic.cache.jsonl``: every model answer received, keyed by its request's cache key (chunk hash,
  prompt hash, model, parameters, question index, attempt). Appended and fsynced before the answer is
  used, so an answer paid for is never asked for again.
- ``synthetic.failures.jsonl``: the questions of the latest run that were not kept, with the reason.
- ``synthetic.summary.json``: the latest run's summary (requests, tokens, cost, filters, ...).
- ``synthetic.batch.json``: only while a ``--batch`` job is in flight (see ``generate.batch``).
- ``synthetic.jsonl.lock``: locked while a run writes, so that two runs never append to one output.

The output itself is appended one record at a time and fsynced; each record names its slot key in
``provenance.slot_key``. On start, records whose key is no longer planned (chunk deleted or changed,
parameters changed) are removed by an atomic rewrite, and slots that already have a record are skipped.
The cache keeps every answer, also those of slots this run does not plan (another shard, other
parameters, a chunk since deleted): a later run that plans them again replays them without paying
twice. Only ``prune`` (``--prune``) drops them.
At the end of a run the output is rewritten in corpus order (the order the slots were planned in),
when it is not in that order already: after answers came back in another order, or after a run
killed during that rewrite, whose next run finishes it. The rewrite needs room for a second copy
for a moment; without it the file is left complete in completion order, with a warning.

A write that fails (disk full, quota, read-only) is an ``OutputError`` naming the file; what was
appended before stays whole lines, so the next run resumes from it.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import json
import os
import queue
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from realrecall.errors import InputError, OutputError
from realrecall.files import (
    AppendLog,
    output_error,
    parse_jsonl_line,
    remove_stale_temps,
    write_jsonl_atomic,
)

__all__ = ["GenerationStore", "sidecar_paths"]


def sidecar_paths(output_path: Path, cache_path: Path | None = None) -> dict[str, Path]:
    """The files kept beside ``output_path`` (see module doc)."""
    stem = output_path.name.removesuffix(".jsonl")
    return {
        "cache": cache_path or output_path.with_name(f"{stem}.cache.jsonl"),
        "failures": output_path.with_name(f"{stem}.failures.jsonl"),
        "summary": output_path.with_name(f"{stem}.summary.json"),
        "batch": output_path.with_name(f"{stem}.batch.json"),
        "analysis": output_path.with_name(f"{stem}.analysis.json"),
        "lock": output_path.with_name(f"{stem}.jsonl.lock"),
    }


# How long the writer gathers lines after the first one before it commits them (one write and one
# fsync per file): a record is on disk within about this long plus an fsync of being kept.
COMMIT_WINDOW = 0.01

# Room kept free beyond a second copy of the output before the final reorder is attempted: file system
# blocks, and the summary written after it.
REORDER_MARGIN = 256 * 1024


def _read_records(path: Path, what: str, *, repair: bool) -> list[tuple[int, dict[str, Any]]]:
    """The records of a log, every whole line checked before anything is changed.

    A last line without its newline was cut off by a killed run (or, beside a running job, is still
    being written): it is left out, and with ``repair`` cut off the file, but only once the rest of
    the file has been read as records and the cut part looks like the start of one, so a file that
    is not such a log is refused as it is, never truncated.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path, hint="check the path") from exc
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = body[: exc.start].count(b"\n") + 1
        raise InputError("not valid UTF-8", path=path, line=bad, hint="delete or restore the file") from exc
    records = []
    lines = text.split("\n")
    for number, line in enumerate(lines[:-1], start=1):
        if line.strip():
            records.append((number, parse_jsonl_line(line, path, number, what=what)))
    if tail.strip():
        if not _torn_record(tail.removeprefix(b"\xef\xbb\xbf") if end == 0 else tail):
            raise InputError(
                f"the last line is not a {what}",
                path=path,
                line=len(lines),
                hint="delete or restore the file",
            )
        if repair:
            log = AppendLog(path)
            log.open()  # cuts the torn last line off
            log.close()
    return records


def _torn_record(tail: bytes) -> bool:
    """Whether ``tail`` can be the start of a JSON record cut off mid-write (a multi-byte character
    may be cut at its very end)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(tail, final=False)
    except UnicodeDecodeError:
        return False
    return tail.lstrip().startswith(b"{")


def _lock(path: Path) -> IO[str]:
    """An exclusive lock on ``path`` held while the handle is open: one writer per output at a time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a", encoding="utf-8")
    except OSError as exc:
        raise output_error(exc, path) from exc
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform: run without one
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise InputError(
            "another `realrecall generate` is writing this output",
            path=path.with_suffix(""),
            hint="wait until it ends, or give another --output",
        ) from None
    return handle


class GenerationStore:
    """The output gold set and its request cache, read at start and appended to during a run."""

    def __init__(self, output_path: str | Path, cache_path: str | Path | None = None) -> None:
        self.output_path = Path(output_path)
        paths = sidecar_paths(self.output_path, None if cache_path is None else Path(cache_path))
        self.cache_path = paths["cache"]
        self.failures_path = paths["failures"]
        self.summary_path = paths["summary"]
        self.batch_path = paths["batch"]
        self.analysis_path = paths["analysis"]
        self.records: dict[str, dict[str, Any]] = {}
        self.cache: dict[str, dict[str, Any]] = {}
        self._obsolete_cache = 0
        self._rewrite_output = False
        self.lock_path = paths["lock"]
        self._writer: _GroupCommitWriter | None = None
        self._lock: IO[str] | None = None

    def load(self, *, exclusive: bool = True) -> None:
        """Read the existing output and cache.

        ``exclusive`` (a run) takes the output's lock until ``close`` and repairs torn last lines;
        without it (a dry run) nothing is written and a line still being written is skipped.
        """
        if exclusive:
            self._lock = _lock(self.lock_path)
            # Temporary files of a run killed during an atomic write (e.g. the final reorder).
            for path in (
                self.output_path,
                self.cache_path,
                self.summary_path,
                self.batch_path,
                self.analysis_path,
            ):
                remove_stale_temps(path)
        for number, record in _read_records(self.output_path, "question", repair=exclusive):
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
        for number, entry in _read_records(self.cache_path, "cache entry", repair=exclusive):
            if not isinstance(entry.get("key"), str) or not isinstance(entry.get("slot"), str):
                raise InputError(
                    "not a realrecall generation cache entry",
                    path=self.cache_path,
                    line=number,
                    hint="delete the cache file (the next run asks the model again)",
                )
            self.cache[entry["key"]] = entry

    def plan(
        self,
        slot_keys: Iterable[str],
        keep: Callable[[dict[str, Any]], bool] = lambda record: True,
        *,
        prune: bool = False,
    ) -> tuple[int, int]:
        """Forget records of slots no longer planned or failing ``keep`` and, with ``prune`` only,
        cache entries of slots no longer planned; returns the numbers of records (kept, removed)."""
        planned = set(slot_keys)
        removed = [key for key, record in self.records.items() if key not in planned or not keep(record)]
        for key in removed:
            del self.records[key]
        obsolete = [key for key, entry in self.cache.items() if prune and entry["slot"] not in planned]
        for key in obsolete:
            del self.cache[key]
        self._obsolete_cache = len(obsolete)
        self._rewrite_output = bool(removed)
        return len(self.records), len(removed)

    @property
    def pruned(self) -> int:
        """Cache entries ``plan(prune=True)`` dropped."""
        return self._obsolete_cache

    def open(self) -> None:
        """Rewrite files that lost entries (atomically), then start appending to the logs."""
        if self._rewrite_output or self._has_duplicate_lines():
            write_jsonl_atomic(self.output_path, self.records.values())
        if self._obsolete_cache:
            write_jsonl_atomic(self.cache_path, self.cache.values())
        try:
            self.failures_path.unlink(missing_ok=True)
        except OSError as exc:
            raise output_error(exc, self.failures_path) from exc
        # Cache first: an answer is on disk before the record made from it (see _GroupCommitWriter).
        self._writer = _GroupCommitWriter(
            {"cache": self.cache_path, "output": self.output_path, "failures": self.failures_path}
        )

    def _has_duplicate_lines(self) -> bool:
        if not self.output_path.exists():
            return False
        lines = sum(1 for line in self.output_path.read_text("utf-8").splitlines() if line.strip())
        return lines != len(self.records)

    def close(self, *, order: Sequence[str] | None = None) -> str | None:
        """Wait until every appended line is on disk, then release the output.

        Raises OutputError when an append failed (disk full, ...). With ``order`` (the planned slot
        keys, after a run that ended normally) an output not in that order is rewritten in it, so
        that the same corpus and settings give the same file whatever order the answers came back
        in. Returns a warning when that rewrite had to be left for a later run (no room for it).
        """
        try:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                writer.close()
            if order is not None:
                return self._reorder(order)
            return None
        finally:
            self._release()

    def abort(self) -> None:
        """Close after a failed or interrupted run: keep what is on disk, raise nothing more."""
        try:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                with contextlib.suppress(OSError, InputError):
                    writer.close()
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _reorder(self, order: Sequence[str]) -> str | None:
        """Rewrite the output in ``order`` when it is not in it; a warning when there is no room."""
        position = {key: index for index, key in enumerate(order)}
        ordered = sorted(self.records.items(), key=lambda item: position.get(item[0], len(position)))
        # The records are held in file order (loaded, then appended), so this is the file's order.
        if [key for key, _ in ordered] == list(self.records):
            return None
        try:
            size = self.output_path.stat().st_size
            free = shutil.disk_usage(self.output_path.parent).free
        except OSError as exc:
            raise output_error(exc, self.output_path) from exc
        if free < size + REORDER_MARGIN:
            return self._reorder_left(size, free)
        try:
            write_jsonl_atomic(self.output_path, (record for _, record in ordered))
        except OutputError as exc:
            cause = exc.__cause__
            if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
                return self._reorder_left(size, shutil.disk_usage(self.output_path.parent).free)
            raise
        self.records = dict(ordered)
        return None

    def _reorder_left(self, size: int, free: int) -> str:
        return (
            f"{self.output_path}: not rewritten in corpus order: that needs {_size(size + REORDER_MARGIN)} "
            f"free beside it (a second copy for a moment), {_size(free)} free; every question is in the "
            "file, in the order the answers came; the next run finishes the reorder once there is room"
        )

    def flush(self) -> None:
        """Wait until every line appended so far is on disk; raises OutputError if one could not be
        written. For a caller about to forget where the data came from (a batch's state file)."""
        if self._writer is not None:
            self._writer.flush()

    def _submit(self, log: str, record: Mapping[str, Any]) -> None:
        if self._writer is None:
            raise RuntimeError("GenerationStore.open() was not called")
        self._writer.submit(log, record)

    def add_record(self, key: str, record: Mapping[str, Any]) -> None:
        """Append a kept question to the output (on disk within one fsync)."""
        self.records[key] = dict(record)
        self._submit("output", record)

    def add_cache(self, entry: Mapping[str, Any]) -> None:
        """Append a model answer to the cache (on disk within one fsync)."""
        self.cache[entry["key"]] = dict(entry)
        self._submit("cache", entry)

    def add_failure(self, entry: Mapping[str, Any]) -> None:
        self._submit("failures", entry)


class _GroupCommitWriter:
    """Appends JSON lines to several files from one thread, with one fsync per file per batch.

    An fsync takes milliseconds; done on the event loop for every record it would stall every request
    in flight, and awaited by each worker it would add to every question's latency. Here lines are
    queued to a writer thread that writes whatever has arrived within ``COMMIT_WINDOW``, in order,
    and fsyncs once for the batch (group commit): every record is on disk a few milliseconds after
    it was kept. A process
    killed in between loses only those last records, as it loses the requests in flight, and the
    next run asks for them again; a torn last line is repaired by ``AppendLog`` on the next open.

    Each batch is written file by file in the order of ``paths``. A write that fails (disk full)
    keeps the whole lines that reached the disk, cuts off the rest,
    stops the writer and is raised as an OutputError naming the file by the next ``submit`` and by
    ``close``.
    """

    def __init__(self, paths: Mapping[str, Path], *, wait: Callable[[float], None] = time.sleep) -> None:
        self._paths = dict(paths)
        self._wait = wait  # the gathering window's sleep; tests pass one that returns on their cue
        self._fds: dict[str, int] = {}
        try:
            for name, path in paths.items():
                log = AppendLog(path)
                log.open()  # creates the folder and repairs a torn last line
                log.close()
                try:
                    self._fds[name] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
                except OSError as exc:
                    raise output_error(exc, path) from exc
        except BaseException:
            self._close_fds()
            raise
        # Lines, a flush barrier (an Event set once everything before it is committed), or None: stop.
        self._queue: queue.SimpleQueue[tuple[str, str] | threading.Event | None] = queue.SimpleQueue()
        self._error: OutputError | None = None
        self.appended: Counter[str] = Counter()
        self._thread = threading.Thread(target=self._run, name="realrecall-writer", daemon=True)
        self._thread.start()

    def submit(self, log: str, record: Mapping[str, Any]) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put((log, json.dumps(record, ensure_ascii=False) + "\n"))
        self.appended[log] += 1

    def flush(self) -> None:
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._close_fds()
        if self._error is not None:
            raise self._error

    def _close_fds(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                return
            if not isinstance(first, threading.Event):
                # Let the lines of the next few milliseconds join this batch: answers come back one
                # by one, and a commit (and a wake-up of this thread, which takes the interpreter
                # lock from the event loop) for each would cost more CPU than the requests do.
                self._wait(COMMIT_WINDOW)
            batch: list[tuple[str, str]] = []
            barriers: list[threading.Event] = []
            item: tuple[str, str] | threading.Event | None = first
            while True:
                if item is None:
                    stopping = True
                    break
                if isinstance(item, threading.Event):
                    barriers.append(item)
                else:
                    batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._commit(batch)
            for barrier in barriers:
                barrier.set()

    def _commit(self, batch: list[tuple[str, str]]) -> None:
        if self._error is not None:
            return
        data: dict[str, list[str]] = {log: [] for log in self._paths}
        for log, line in batch:
            data[log].append(line)
        # Files in the order given, not the order lines arrived: a record's answer is submitted
        # before the record, so with the cache written (and fsynced) first, a disk that fills up
        # part-way never leaves a record whose answer is not in the cache.
        for log, lines in data.items():
            if not lines:
                continue
            try:
                _append_lines(self._fds[log], "".join(lines).encode("utf-8"))
            except OSError as exc:
                self._error = output_error(exc, self._paths[log])
                self._error.__cause__ = exc
                return


def _append_lines(fd: int, data: bytes) -> None:
    """Append whole lines and fsync. When the disk fills up part-way, the lines that reached it are
    kept and the part of a line after them is cut off: the file always ends with a whole line."""
    start = os.lseek(fd, 0, os.SEEK_END)
    done = 0
    try:
        view = memoryview(data)
        while done < len(data):
            done += _write(fd, view[done:])
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start + data.rfind(b"\n", 0, done) + 1)
            os.fsync(fd)
        raise
    try:
        os.fsync(fd)
    except OSError:
        # Not known to be on disk (a file system that reports a full disk only now): none of it counts.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _write(fd: int, data: memoryview) -> int:
    return os.write(fd, data)


def _size(count: int) -> str:
    """A byte count for a person: 812 KB, 3.4 MB."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"

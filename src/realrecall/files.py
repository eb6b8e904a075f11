"""Reading and writing files safely: JSON Lines with line numbers, atomic writes, append-and-fsync.

Readers accept what real files contain: a UTF-8 byte-order mark, CRLF line ends, blank lines.
Writers never leave a half-written file: whole outputs go to a temporary file in the same folder
that is renamed over the target; logs that grow (generation records, history) are appended one
record at a time and fsynced, so a process killed at any moment loses at most the record in flight.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from realrecall.errors import InputError

__all__ = [
    "AppendLog",
    "atomic_write_text",
    "file_sha256",
    "iter_jsonl",
    "parse_jsonl_line",
    "read_text_lines",
    "write_jsonl_atomic",
]


def read_text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` of a UTF-8 text file, 1-based, without BOM or line end."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p, hint="check the path")
    if p.is_dir():
        raise InputError("is a folder, not a file", path=p, hint="give the path of a file")
    try:
        handle = p.open("rb")
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror}", path=p) from exc
    with handle:
        # Decoded line by line (not by the text layer's blocks) so a bad byte is reported by line.
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                    path=p,
                    line=number,
                    hint="save the file as UTF-8",
                ) from exc
            yield number, line.rstrip("\r\n")


def iter_jsonl(path: str | Path, *, what: str = "record") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file.

    Raises InputError naming the line for malformed JSON, a value that is not an object, or a file
    with no record at all (an empty gold set or corpus is always a mistake).
    """
    seen_any = False
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        value = parse_jsonl_line(line, path, number, what=what)
        seen_any = True
        yield number, value
    if not seen_any:
        raise InputError(f"empty file: no {what} found", path=path, hint=f"add at least one {what}")


def parse_jsonl_line(line: str, path: str | Path, number: int, *, what: str = "record") -> dict[str, Any]:
    """One JSON Lines record, or an InputError naming the file and line."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg} at column {exc.colno})",
            path=path,
            line=number,
            hint="each line must hold one complete JSON object",
        ) from exc
    if not isinstance(value, dict):
        raise InputError(
            f"expected a JSON object, got {type(value).__name__}",
            path=path,
            line=number,
            hint=f"write one {what} object per line",
        )
    return value


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (recorded in results so a figure can be traced to its inputs)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _atomic_handle(path: str | Path) -> Iterator[IO[str]]:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    with _atomic_handle(path) as handle:
        handle.write(text)


def write_jsonl_atomic(path: str | Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write records as JSON Lines atomically; returns the number written."""
    count = 0
    with _atomic_handle(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=False))
            handle.write("\n")
            count += 1
    return count


class AppendLog:
    """An append-only JSON Lines file, fsynced after every record.

    A process killed mid-write can leave one truncated last line; ``open`` repairs it by cutting the
    file back to its last complete line, so resuming never reads (or duplicates) a half record.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle: IO[str] | None = None

    def __enter__(self) -> AppendLog:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _truncate_partial_last_line(self.path)
        self._handle = self.path.open("a", encoding="utf-8", newline="\n")

    def append(self, record: Mapping[str, Any]) -> None:
        if self._handle is None:
            raise RuntimeError("AppendLog.append called before open()")
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _truncate_partial_last_line(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        data_end = handle.seek(0, os.SEEK_END)
        # Walk back to the last newline; everything after it is a record cut off mid-write.
        position = data_end
        chunk = 4096
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            block = handle.read(position - start)
            index = block.rfind(b"\n")
            if index >= 0:
                handle.truncate(start + index + 1)
                return
            position = start
        handle.truncate(0)

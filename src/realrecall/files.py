"""Reading and writing files safely: JSON Lines with line numbers, atomic writes, append-and-fsync.

Readers accept what real files contain: a UTF-8 byte-order mark, CRLF line ends, blank lines.
Writers never leave a half-written file: whole outputs go to a temporary file in the same folder
that is renamed over the target; logs that grow (generation records, history) are appended one
record at a time and fsynced, so a process killed at any moment loses at most the record in flight.

An output that is not a regular file is written in place, never renamed over: ``-`` (and
``/dev/stdout``, ``/dev/stderr``) is the standard stream, ``/dev/fd/N`` the open descriptor N, and a
character device (``/dev/null``) or a FIFO that exists is opened and written. A block device or a
socket is refused: no output of realrecall belongs there.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from realrecall.errors import InputError, OutputError, RepeatedKey

__all__ = [
    "STDOUT",
    "AppendLog",
    "atomic_write_chunks",
    "atomic_write_text",
    "check_distinct",
    "check_file_name",
    "check_file_output",
    "check_output_path",
    "file_sha256",
    "is_standard_output",
    "iter_jsonl",
    "output_error",
    "parse_jsonl_line",
    "read_text_lines",
    "remove_stale_temps",
    "write_jsonl_atomic",
    "written_in_place",
]


STDOUT = "-"
"""The output name of the standard output (``-o -``)."""


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


def _object_of(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)  # in C: the search below runs only when a key was given twice
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKey(key)
            seen.add(key)
    return value


TOO_DEEP = "nested too deeply to read"
"""Why a JSON or TOML text was refused when its nesting exceeds what Python's decoders recurse into."""

# JSON keeps the last of two equal keys, so ``"gold": {"p1": 1, "p1": 0}`` would silently judge p1 not
# relevant, and a run's repeated passage would lose a score: every record read refuses them. One
# decoder, built once (json.loads with a hook builds one per call, twice the cost of a small line).
_DECODER = json.JSONDecoder(object_pairs_hook=_object_of)


def parse_jsonl_line(line: str, path: str | Path, number: int, *, what: str = "record") -> dict[str, Any]:
    """One JSON Lines record, or an InputError naming the file and line (a key given twice in one
    object included)."""
    try:
        value = _DECODER.decode(line)
    except RepeatedKey as repeated:
        raise InputError(
            f"key {repeated.key!r} appears twice in one object",
            path=path,
            line=number,
            hint="JSON keeps only the last one: give each passage (and field) once",
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg} at column {exc.colno})",
            path=path,
            line=number,
            hint="each line must hold one complete JSON object",
        ) from exc
    except RecursionError:  # Python's decoder recurses once per nested [ or {
        raise InputError(
            f"malformed JSON ({TOO_DEEP})", path=path, line=number, hint="flatten the record"
        ) from None
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


# errno values that mean "this output cannot be written here", each with the fix a user can make.
_WRITE_FAILURES = {
    errno.ENOSPC: ("the disk is full", "free some space or write the output elsewhere"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space or write the output elsewhere"),
    errno.EROFS: ("the file system is read-only", "write the output elsewhere"),
    errno.EACCES: ("permission denied", "write the output where you may write"),
    errno.EPERM: ("permission denied", "write the output where you may write"),
    errno.EISDIR: ("is a folder, not a file", "name a file, e.g. FOLDER/results.json"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "fix the path"),
    errno.ENAMETOOLONG: ("the file name is too long", "use a shorter name"),
}
_umask_lock = threading.Lock()


def output_error(exc: OSError, path: str | Path) -> OutputError:
    """The one-line error for an OSError met while writing ``path`` (disk full, read-only, ...)."""
    what, hint = _WRITE_FAILURES.get(exc.errno or 0, (f"cannot write: {exc.strerror or exc}", None))
    return OutputError(f"cannot write the output: {what}", path=path, hint=hint)


def check_file_name(name: str, *, label: str = "the output", example: str = "output.json") -> None:
    """Refuse an output name that can only be a folder: one ending in ``/`` (or ``/.``, ``/..``).

    Called with the name as the user typed it: ``Path("newdir/")`` is ``newdir``, so once parsed the
    slash is gone and the output would be written as a file named ``newdir``.
    """
    if name != STDOUT and os.path.basename(name) in ("", ".", ".."):
        folder = os.path.normpath(name)
        raise OutputError(
            f"{label} {name} names a folder, not a file",
            hint=f"give a file name, e.g. {os.path.join(folder, example)}",
        )


def check_output_path(path: str | Path) -> None:
    """Refuse, before any work, an output path that names a folder (an existing one, or a name ending
    in ``/`` given as text), a block device or a socket, or sits under a file."""
    if isinstance(path, str):
        check_file_name(path)
    target = Path(path)
    if _stream_descriptor(target) is not None:
        return
    try:
        # os.stat, not Path.is_dir: is_dir swallows most errors but not ENAMETOOLONG.
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            raise OutputError("is a folder, not a file", path=target, hint="name a file inside it")
        if stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            kind = "a block device" if stat.S_ISBLK(mode) else "a socket"
            raise OutputError(f"is {kind}, not a file", path=target, hint="write the output to a file")
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno != errno.ENOTDIR:
            raise output_error(exc, target) from exc
    for parent in target.parents:
        try:
            mode = os.stat(parent).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise output_error(exc, target) from exc
        if not stat.S_ISDIR(mode):
            raise OutputError(f"{parent} is a file, not a folder", path=target, hint="fix the path")
        break


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file: the same path, a symlink to it or a hard link (a missing file
    by its resolved path)."""
    try:
        first, second = os.stat(a), os.stat(b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def refuse_same_file(first: tuple[str, str | Path], second: tuple[str, str | Path], *, hint: str) -> None:
    """One line when two inputs that must differ (a baseline and its rival, people's labels and the
    judge's) are one file: read twice, it would agree with itself and be reported as a finding."""
    (label_a, a), (label_b, b) = first, second
    if same_file(a, b):
        raise InputError(f"{label_a} {a} and {label_b} {b} are the same file", hint=hint)


def check_distinct(inputs: Mapping[str, str | Path | None], outputs: Mapping[str, str | Path | None]) -> None:
    """Refuse an output that is one of the inputs (same path, a symlink to it, or a hard link), or that
    lies inside a folder an input names (a vector store's folder, a BEIR folder): by path, through a
    symlink, or as a hard link to a file in it.

    ``inputs`` and ``outputs`` map the option that named a path (``--gold``) to the path. Called by
    every command before any work, so an input is never overwritten by the command's own output.
    """
    seen: list[tuple[str, Path, tuple[int, int] | None, str]] = []
    folders: list[tuple[str, Path, str]] = []
    for label, path in inputs.items():
        if path is not None:
            seen.append((label, Path(path), _identity(Path(path)), os.path.realpath(path)))
            if os.path.isdir(path):
                folders.append((label, Path(path), os.path.realpath(path)))
    written: list[tuple[str, Path, tuple[int, int] | None, str]] = []
    for out_label, out_path in outputs.items():
        if out_path is None:
            continue
        target = Path(out_path)
        check_output_path(target)
        if _is_sink(target):
            continue  # /dev/null and its kind keep nothing: several outputs (and inputs) may name it
        descriptor = _stream_descriptor(target)
        identity = _identity(target) if descriptor is None else None
        real = os.path.realpath(target) if descriptor is None else f"<descriptor {descriptor}>"
        for in_label, in_path, in_identity, in_real in seen:
            if real == in_real or (identity is not None and identity == in_identity):
                raise OutputError(
                    f"{out_label} {out_path} is the same file as {in_label} {in_path}",
                    hint="write the output to another file; the input is left as it is",
                )
        if descriptor is None:
            _check_outside_folders(out_label, target, real, folders)
        for other_label, other_path, other_identity, other_real in written:
            if real == other_real or (identity is not None and identity == other_identity):
                raise OutputError(
                    f"{out_label} {out_path} is the same file as {other_label} {other_path}",
                    hint="give each output its own file",
                )
        written.append((out_label, target, identity, real))


def _check_outside_folders(label: str, target: Path, real: str, folders: list[tuple[str, Path, str]]) -> None:
    """Refuse an output inside one of the input ``folders`` (their path, label and real path)."""
    for in_label, in_path, in_real in folders:
        if real != in_real and os.path.commonpath([real, in_real]) == in_real:
            raise OutputError(
                f"{label} {target} is inside {in_label} {in_path}",
                hint="write the output outside that folder; what it holds is left as it is",
            )
    try:
        info = os.stat(target)
    except OSError:
        return
    if info.st_nlink < 2:  # no other name: it cannot be a file of an input folder
        return
    for in_label, in_path, _ in folders:
        linked = _file_with_identity(in_path, (info.st_dev, info.st_ino))
        if linked is not None:
            raise OutputError(
                f"{label} {target} is a hard link to {linked}, inside {in_label} {in_path}",
                hint="write the output to another file; what the folder holds is left as it is",
            )


def _file_with_identity(folder: Path, identity: tuple[int, int]) -> Path | None:
    """A file under ``folder`` with this (device, inode), if any (symlinks are not followed)."""
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) == identity:
                return Path(root, name)
    return None


def _is_sink(path: Path) -> bool:
    """A character device: what is written there is not kept, so no input can be lost to it."""
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


_DESCRIPTOR_PATH = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")


def _stream_descriptor(path: Path) -> int | None:
    """The descriptor an output name stands for (``-`` and ``/dev/stdout`` 1, ``/dev/fd/3`` 3), else None.

    These are written through the descriptor the process already holds, as a shell's ``>`` or ``>>``
    opened it: reopening ``/dev/stdout`` would truncate a log the job's output is appended to.
    """
    text = str(path)
    if text in (STDOUT, "/dev/stdout"):
        return 1
    if text == "/dev/stderr":
        return 2
    match = _DESCRIPTOR_PATH.fullmatch(text)
    return int(match.group(1)) if match else None


def check_file_output(path: str | Path, *, label: str, why: str) -> None:
    """Refuse an output written in place (``-``, a device, a FIFO) where a regular file is needed:
    an output the command reads back (``why`` says so), e.g. generate's, which a rerun resumes."""
    target = Path(path)
    if written_in_place(target):
        raise OutputError(
            f"{label} {path} is not a regular file (a stream, device or FIFO); {why}",
            hint="write it to a file",
        )


def is_standard_output(path: str | Path | None) -> bool:
    """Whether an output name is the standard output (``-``, ``/dev/stdout``, ``/dev/fd/1``)."""
    return path is not None and _stream_descriptor(Path(path)) == 1


def written_in_place(path: str | Path) -> bool:
    """Whether an output is written in place (see the module docstring): a stream name, or an existing
    character device or FIFO. Such an output keeps nothing to be read back, replaced or named by format."""
    path = Path(path)
    if _stream_descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _open_in_place(target: Path) -> tuple[IO[str], bool]:
    """A text handle writing ``target`` in place (see the module docstring), and whether it is the
    caller's to close (sys.stdout and sys.stderr are not)."""
    descriptor = _stream_descriptor(target)
    if descriptor == 1:  # sys.stdout, not the raw descriptor: what the CLI printed first stays first
        return sys.stdout, False
    if descriptor == 2:
        return sys.stderr, False
    if descriptor is not None:
        fd = os.dup(descriptor)
    elif stat.S_ISFIFO(os.stat(target).st_mode):
        fd = _open_fifo(target)
    else:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    return os.fdopen(fd, "w", encoding="utf-8", newline="\n"), True


FIFO_READER_WAIT = 3.0
"""Seconds an output FIFO is given for its reader to open it (``cat FIFO &`` started beside us)."""


def _open_fifo(target: Path) -> int:
    """A blocking write descriptor of the FIFO ``target``, or the one-line error when no program reads it.

    A plain open waits for a reader for ever: a FIFO that nobody reads hung the command after all its
    work. Opened without blocking (ENXIO while there is no reader), polled for ``FIFO_READER_WAIT``.
    """
    deadline = time.monotonic() + FIFO_READER_WAIT
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise OutputError(
                    "cannot write the output: it is a FIFO that no program is reading",
                    path=target,
                    hint="start its reader first (e.g. cat FIFO &), or write the output to a file",
                ) from None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


@contextlib.contextmanager
def _in_place_handle(target: Path) -> Iterator[IO[str]]:
    try:
        handle, owned = _open_in_place(target)
    except OSError as exc:
        raise output_error(exc, target) from exc
    try:
        yield handle
        handle.flush()
    except OSError as exc:
        raise output_error(exc, target) from exc
    finally:
        if owned:
            with contextlib.suppress(OSError):
                handle.close()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _new_file_mode(target: Path) -> int:
    """The mode the output gets: an existing file keeps its own; a new one follows the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        pass
    with _umask_lock:  # os.umask can only be read by setting it; restored at once
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def temp_prefix(target: Path) -> str:
    """Prefix of the temporary files an atomic write of ``target`` makes beside it."""
    return f".{target.name}."


def remove_stale_temps(target: str | Path) -> int:
    """Delete temporary files left beside ``target`` by an atomic write that was killed.

    A live writer holds an exclusive lock on its temporary file, so a file whose lock can be taken
    belongs to a dead process and is removed; a concurrent writer's file is left alone.
    """
    target = Path(target)
    removed = 0
    try:
        candidates = list(target.parent.glob(f"{glob.escape(temp_prefix(target))}*.tmp"))
    except OSError:
        return 0
    for candidate in candidates:
        try:
            fd = os.open(candidate, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            candidate.unlink()
            removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def _atomic_handle(path: str | Path) -> Iterator[IO[str]]:
    check_output_path(path)  # before Path(): a name ending in "/" loses its slash there
    target = Path(path)
    if written_in_place(target):
        # Renaming a file over /dev/null (as root) or a FIFO would replace it for every program.
        with _in_place_handle(target) as handle:
            yield handle
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(target)
        mode = _new_file_mode(target)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise output_error(exc, target) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # marks the temp file as live (see remove_stale_temps)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise output_error(exc, target) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    with _atomic_handle(path) as handle:
        handle.write(text)


def atomic_write_chunks(path: str | Path, chunks: Iterable[str]) -> None:
    """``atomic_write_text`` of text made in pieces: a big file is never held whole in memory."""
    with _atomic_handle(path) as handle:
        for chunk in chunks:
            handle.write(chunk)


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
        if isinstance(path, str):
            check_file_name(path, example="output.jsonl")
        self.path = Path(path)
        self._handle: IO[str] | None = None
        self._in_place = False  # a stream, device or FIFO: nothing to repair or fsync, not ours to close
        self._owned = True

    def __enter__(self) -> AppendLog:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> None:
        check_output_path(self.path)
        self._in_place = written_in_place(self.path)
        if self._in_place:
            try:
                self._handle, self._owned = _open_in_place(self.path)
            except OSError as exc:
                raise output_error(exc, self.path) from exc
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _truncate_partial_last_line(self.path)
            self._handle = self.path.open("a", encoding="utf-8", newline="\n")
        except OSError as exc:
            raise output_error(exc, self.path) from exc

    def append(self, record: Mapping[str, Any]) -> None:
        if self._handle is None:
            raise RuntimeError("AppendLog.append called before open()")
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            self._handle.write(line)
            self._handle.flush()
            if not self._in_place:
                os.fsync(self._handle.fileno())
        except OSError as exc:
            # A record that did not fit is cut back off, so the log stays whole lines only.
            self._discard_partial()
            raise output_error(exc, self.path) from exc

    def _discard_partial(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and self._owned:
            with contextlib.suppress(OSError):
                handle.close()
        if not self._in_place:
            with contextlib.suppress(OSError):
                _truncate_partial_last_line(self.path)

    def close(self) -> None:
        if self._handle is not None:
            if self._owned:
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

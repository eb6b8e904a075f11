"""Outputs are never half-written: atomic replaces and an append log that survives a torn last line."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid

import pytest

from realrecall import files
from realrecall.errors import OutputError
from realrecall.files import (
    AppendLog,
    atomic_write_text,
    check_distinct,
    check_file_output,
    check_output_path,
    iter_jsonl,
    output_error,
    remove_stale_temps,
    write_jsonl_atomic,
)
from support.devices import FifoReader, is_null_device, null_device


def test_atomic_write_leaves_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "results.json"
    atomic_write_text(target, "old")

    def records():
        yield {"a": 1}
        raise RuntimeError("crash mid-write")

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(target, records())
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_append_log_repairs_a_torn_last_record(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"n": 1}\n{"n": 2}\n{"n": 3, "tru')
    with AppendLog(path) as log:
        log.append({"n": 4})
    assert [record["n"] for _, record in iter_jsonl(path)] == [1, 2, 4]


def test_append_log_keeps_complete_files_untouched(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"n": 1}) + "\n")
    with AppendLog(path) as log:
        log.append({"n": 2, "text": "Größe"})
    assert path.read_text(encoding="utf-8").splitlines() == ['{"n": 1}', '{"n": 2, "text": "Größe"}']


def test_append_log_on_a_single_torn_line_starts_empty(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"n": 1')
    with AppendLog(path) as log:
        log.append({"n": 2})
    assert path.read_text() == '{"n": 2}\n'


# --- outputs never clobber inputs; modes; stale temps; disk full -------------------------------------


def test_check_distinct_refuses_the_same_path(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n")
    with pytest.raises(OutputError) as raised:
        check_distinct({"--gold": gold}, {"--output": tmp_path / "." / "gold.jsonl"})
    assert str(raised.value) == (
        f"--output {tmp_path / '.' / 'gold.jsonl'} is the same file as --gold {gold}; "
        "write the output to another file; the input is left as it is"
    )


def test_check_distinct_sees_through_symlinks_and_hard_links(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(gold)
    os.link(gold, tmp_path / "hard.jsonl")
    for alias in ("link.jsonl", "hard.jsonl"):
        with pytest.raises(OutputError, match="is the same file as --gold"):
            check_distinct({"--gold": gold}, {"--output": tmp_path / alias})


def test_check_distinct_refuses_two_outputs_on_one_file(tmp_path):
    with pytest.raises(OutputError, match=r"--per-query .* is the same file as --output"):
        check_distinct({}, {"--output": tmp_path / "a.json", "--per-query": tmp_path / "a.json"})


def test_check_distinct_accepts_distinct_files_and_missing_options(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n")
    check_distinct({"--gold": gold, "--run": None}, {"--output": tmp_path / "out.json", "--per-query": None})


def test_an_output_naming_a_folder_or_sitting_under_a_file_is_refused(tmp_path):
    with pytest.raises(OutputError, match="is a folder, not a file; name a file inside it"):
        check_output_path(tmp_path)
    (tmp_path / "plain").write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output_path(tmp_path / "plain" / "out.json")
    with pytest.raises(OutputError, match="is a folder"):
        atomic_write_text(tmp_path, "x")


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_outputs_follow_the_umask(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "report.html", "<p>")
        with AppendLog(tmp_path / "log.jsonl") as log:
            log.append({"n": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "report.html").stat().st_mode & 0o777 == expected
    assert (tmp_path / "log.jsonl").stat().st_mode & 0o777 == expected


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_rewritten_outputs_keep_their_mode(tmp_path, mode):
    target = tmp_path / "gold.jsonl"
    target.write_text("{}\n")
    target.chmod(mode)
    write_jsonl_atomic(target, [{"query_id": "q"}])
    assert target.stat().st_mode & 0o777 == mode


def test_stale_temps_of_a_killed_write_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "results.json"
    stale = tmp_path / ".results.json.abc123.tmp"
    stale.write_text("half")
    other = tmp_path / ".other.json.abc123.tmp"  # another output's temp: not ours to remove
    other.write_text("half")
    atomic_write_text(target, "whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.json.abc123.tmp", "results.json"]


def test_a_live_writers_temp_is_left_alone(tmp_path):
    target = tmp_path / "results.json"
    live = tmp_path / ".results.json.live.tmp"
    live.write_text("in progress")
    fd = os.open(live, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert remove_stale_temps(target) == 0
        assert live.exists()
    finally:
        os.close(fd)
    assert remove_stale_temps(target) == 1


def test_a_temp_left_by_a_killed_process_is_removed(tmp_path):
    # A writer killed (-9) mid-write leaves its temp file behind; the next write of that output removes it.
    code = (
        "import os\n"
        "from realrecall.files import write_jsonl_atomic\n"
        "def records():\n"
        "    yield {'n': 1}\n"
        "    os.kill(os.getpid(), 9)\n"
        f"write_jsonl_atomic({str(tmp_path / 'out.json')!r}, records())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False)
    assert done.returncode == -9
    assert len(list(tmp_path.glob(".out.json.*.tmp"))) == 1
    atomic_write_text(tmp_path / "out.json", "ok")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_output_error_names_the_file_and_the_fix(tmp_path):
    error = output_error(OSError(errno.ENOSPC, "No space left on device"), tmp_path / "out.json")
    assert str(error) == f"{tmp_path / 'out.json'}: cannot write the output: the disk is full; " + (
        "free some space or write the output elsewhere"
    )
    assert error.exit_code == 2


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (needs root and mount; skipped with the reason otherwise)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a disk-full test mounts a small tmpfs, which needs root")
    point = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], check=False)
    if mounted.returncode != 0:
        pytest.skip("mount -t tmpfs is not allowed here")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_disk_full_atomic_write_is_one_error_and_keeps_the_old_file(small_disk):
    target = small_disk / "results.json"
    atomic_write_text(target, "old")
    with pytest.raises(OutputError, match="the disk is full; free some space"):
        atomic_write_text(target, "x" * 1_000_000)
    assert target.read_text() == "old"
    assert [p.name for p in small_disk.iterdir()] == ["results.json"]


def test_disk_full_append_log_keeps_whole_records(small_disk):
    path = small_disk / "log.jsonl"
    with AppendLog(path) as log:
        log.append({"n": 1})
        with pytest.raises(OutputError, match="the disk is full"):
            log.append({"n": 2, "text": "y" * 1_000_000})
    assert path.read_text() == '{"n": 1}\n'


def test_an_output_name_too_long_is_one_error(tmp_path):
    with pytest.raises(OutputError, match="the file name is too long"):
        check_output_path(tmp_path / ("x" * 300))


# --- outputs that are not regular files are written in place, never replaced ------------------------


def test_a_character_device_output_is_written_in_place_not_replaced(tmp_path):
    node = null_device(tmp_path / "NODE")
    atomic_write_text(node, "report")
    write_jsonl_atomic(node, [{"n": 1}])
    with AppendLog(node) as log:
        log.append({"n": 2})
    assert is_null_device(node)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NODE"]  # no temp file left beside it


def test_a_symlink_to_a_character_device_is_written_through(tmp_path):
    node = null_device(tmp_path / "NODE")
    (tmp_path / "link").symlink_to(node)
    atomic_write_text(tmp_path / "link", "report")
    assert (tmp_path / "link").is_symlink()
    assert is_null_device(node)


def test_a_fifo_output_is_written_in_place(tmp_path):
    reader = FifoReader(tmp_path / "fifo")
    write_jsonl_atomic(reader.path, [{"n": 1}, {"n": 2}])
    assert reader.text() == '{"n": 1}\n{"n": 2}\n'
    assert stat.S_ISFIFO(reader.path.lstat().st_mode)


def test_an_append_log_on_a_fifo_streams_its_records(tmp_path):
    reader = FifoReader(tmp_path / "fifo")
    with AppendLog(reader.path) as log:
        log.append({"n": 1})
        log.append({"n": 2})
    assert reader.text() == '{"n": 1}\n{"n": 2}\n'


@pytest.mark.parametrize("name", ["-", "/dev/stdout"])
def test_the_standard_output_is_written_and_no_file_made(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        atomic_write_text(name, "report\n")
        with AppendLog(name) as log:
            log.append({"n": 1})
    assert stdout.getvalue() == 'report\n{"n": 1}\n'
    assert list(tmp_path.iterdir()) == []


def test_a_descriptor_path_writes_to_that_descriptor(tmp_path):
    read_end, write_end = os.pipe()
    try:
        atomic_write_text(f"/dev/fd/{write_end}", "through the pipe")
        os.close(write_end)  # the write went through a copy of the descriptor, closed after it
        write_end = -1
        assert os.read(read_end, 100) == b"through the pipe"
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_block_device_output_is_refused_before_anything_is_written(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mknod of a block device needs root")
    node = tmp_path / "disk"
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # a loop device no one attached
    with pytest.raises(OutputError, match="is a block device, not a file; write the output to a file"):
        atomic_write_text(node, "report")
    assert stat.S_ISBLK(node.lstat().st_mode)


def test_outputs_may_share_a_null_device_but_not_one_stream(tmp_path):
    node = null_device(tmp_path / "NODE")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("{}\n")
    check_distinct({"--gold": gold}, {"--output": node, "--per-query": node})
    check_distinct({}, {"--output": "/dev/null", "--per-query": "/dev/null"})
    with pytest.raises(OutputError, match="--per-query /dev/stdout is the same file as --output -"):
        check_distinct({}, {"--output": "-", "--per-query": "/dev/stdout"})


def test_an_output_read_back_must_be_a_regular_file(tmp_path):
    node = null_device(tmp_path / "NODE")
    refused = r"is not a regular file .*; it is read back; write it to a file"
    for path in (node, "-"):
        with pytest.raises(OutputError, match=refused):
            check_file_output(path, label="the output", why="it is read back")
    check_file_output(tmp_path / "new.jsonl", label="the output", why="it is read back")


# --- an output inside a folder an input names (a vector store's) is refused -----------------------------


@pytest.fixture
def store_folder(tmp_path):
    """A folder input holding a database file and a subfolder, as a local vector store does."""
    folder = tmp_path / "store"
    (folder / "segment").mkdir(parents=True)
    (folder / "store.sqlite3").write_bytes(b"SQLite format 3\x00")
    (folder / "segment" / "data.bin").write_bytes(b"\x01\x02")
    return folder


@pytest.mark.parametrize("inside", ["store.sqlite3", "segment/data.bin", "new.jsonl", "segment/../x.json"])
def test_an_output_inside_an_input_folder_is_refused(tmp_path, store_folder, inside):
    with pytest.raises(OutputError) as raised:
        check_distinct({"--option path": store_folder}, {"--output": store_folder / inside})
    assert str(raised.value) == (
        f"--output {store_folder / inside} is inside --option path {store_folder}; "
        "write the output outside that folder; what it holds is left as it is"
    )


def test_an_output_reaching_into_an_input_folder_through_a_symlink_is_refused(tmp_path, store_folder):
    (tmp_path / "to-db").symlink_to(store_folder / "store.sqlite3")
    (tmp_path / "to-store").symlink_to(store_folder)
    (tmp_path / "store-link").symlink_to(store_folder)
    for output in (tmp_path / "to-db", tmp_path / "to-store" / "segment" / "data.bin"):
        with pytest.raises(OutputError, match="is inside --option path"):
            check_distinct({"--option path": store_folder}, {"--output": output})
    with pytest.raises(OutputError, match="is inside --option path"):  # the input named through a link
        check_distinct({"--option path": tmp_path / "store-link"}, {"--output": store_folder / "x.jsonl"})


def test_an_output_hard_linked_to_a_file_of_an_input_folder_is_refused(tmp_path, store_folder):
    os.link(store_folder / "segment" / "data.bin", tmp_path / "export.jsonl")
    with pytest.raises(OutputError) as raised:
        check_distinct({"--option path": store_folder}, {"--output": tmp_path / "export.jsonl"})
    assert str(raised.value).startswith(
        f"--output {tmp_path / 'export.jsonl'} is a hard link to {store_folder / 'segment' / 'data.bin'}, "
        f"inside --option path {store_folder}"
    )


def test_an_output_beside_an_input_folder_is_accepted(tmp_path, store_folder):
    (tmp_path / "storey.jsonl").write_text("{}\n")  # a name that starts like the folder's
    check_distinct({"--option path": store_folder}, {"--output": tmp_path / "storey.jsonl"})
    check_distinct({"--option path": store_folder}, {"--output": tmp_path / "store.jsonl"})


@pytest.mark.parametrize(
    "write", [lambda path: atomic_write_text(path, "report"), lambda path: AppendLog(path).open()]
)
def test_a_fifo_output_nobody_reads_is_one_line_not_a_hang(tmp_path, monkeypatch, write):
    # A plain open of a FIFO for writing waits for a reader for ever: the command hung after its work.
    monkeypatch.setattr(files, "FIFO_READER_WAIT", 0.2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    with pytest.raises(OutputError, match="a FIFO that no program is reading; start its reader first"):
        write(fifo)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [path.name for path in tmp_path.iterdir()] == ["fifo"]

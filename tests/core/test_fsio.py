"""shell.fsio: atomic replacement (old or new content, never half, no temp file left behind) and
the cross-process exclusive lock, on real files in tmp_path."""

from __future__ import annotations

import errno
import fcntl
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from shell import fsio
from shell.fsio import LockBusy, exclusive_lock, shared_lock, write_atomically


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- write_atomically ----------------------------------------------------------------------


def test_creates_and_replaces_bytes_and_text(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    write_atomically(target, b"\x00old\n")
    assert target.read_bytes() == b"\x00old\n"
    write_atomically(target, "café\r\nno newline translation")
    assert target.read_bytes() == "café\r\nno newline translation".encode()
    assert leftovers(tmp_path) == []


def test_failed_rename_keeps_old_content_and_removes_the_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"old\n")

    def refuse(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "injected rename failure")

    monkeypatch.setattr(fsio.os, "replace", refuse)
    with pytest.raises(OSError, match="injected rename failure"):
        write_atomically(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert leftovers(tmp_path) == []


def test_failed_flush_keeps_old_content_and_removes_the_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"old\n")

    def refuse(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "injected fsync failure")

    monkeypatch.setattr(fsio.os, "fsync", refuse)
    with pytest.raises(OSError, match="injected fsync failure"):
        write_atomically(target, b"new\n" * 10_000)
    assert target.read_bytes() == b"old\n"
    assert leftovers(tmp_path) == []


def test_failed_first_write_leaves_no_file_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: object, dst: object) -> None:
        raise KeyboardInterrupt  # not only OSError: any interruption cleans up

    monkeypatch.setattr(fsio.os, "replace", refuse)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(tmp_path / "new.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_temp_file_is_hidden_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spy(src: Path, dst: Path) -> None:
        renames.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(fsio.os, "replace", spy)
    target = tmp_path / "identity.json"
    write_atomically(target, "{}")
    ((temp, destination),) = renames
    assert destination == target
    assert temp.parent == tmp_path
    assert temp.name.startswith(".identity.json.") and temp.name.endswith(".tmp")


def test_folder_fsync_failure_does_not_undo_a_done_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def files_only(descriptor: int) -> None:
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "this filesystem cannot fsync a folder")
        real_fsync(descriptor)

    monkeypatch.setattr(fsio.os, "fsync", files_only)
    target = tmp_path / "recall.json"
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"


def test_default_mode_keeps_the_old_bits_and_gives_new_files_0644(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.md"
    write_atomically(fresh, b"x")
    assert fresh.stat().st_mode & 0o777 == 0o644

    guarded = tmp_path / "guarded.md"
    guarded.write_bytes(b"x")
    guarded.chmod(0o640)
    write_atomically(guarded, b"y")
    assert guarded.stat().st_mode & 0o777 == 0o640


def test_explicit_mode_applies_whatever_the_old_file_had(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        target = tmp_path / "session.json"
        target.write_bytes(b"x")
        target.chmod(0o644)
        write_atomically(target, b"y", mode=0o600)
        assert target.stat().st_mode & 0o777 == 0o600
        write_atomically(target, b"z", mode=0o666)  # less the umask, as open(2) does
        assert target.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)


# --- exclusive_lock --------------------------------------------------------------------------


def _held_elsewhere(lock: Path) -> bool:
    """Whether another open of `lock` is refused the lock right now (never waits)."""
    descriptor = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


def test_lock_creates_its_folder_and_file_and_excludes_other_opens(tmp_path: Path) -> None:
    lock = tmp_path / ".cairn" / "locks" / "memory.lock"
    with exclusive_lock(lock):
        assert lock.is_file()
        assert _held_elsewhere(lock)
    assert not _held_elsewhere(lock)
    assert lock.is_file()  # kept for the next holder


def test_lock_is_released_when_the_body_raises(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with pytest.raises(RuntimeError), exclusive_lock(lock):
        raise RuntimeError("boom")
    assert not _held_elsewhere(lock)


def test_shared_holders_coexist_and_exclude_an_exclusive_one(tmp_path: Path) -> None:
    lock = tmp_path / "recall.lock"
    with shared_lock(lock), shared_lock(lock):
        with pytest.raises(LockBusy), exclusive_lock(lock, wait=False):
            pass
        assert _held_elsewhere(lock)
    with exclusive_lock(lock, wait=False):
        with pytest.raises(LockBusy), exclusive_lock(lock, wait=False):
            pass
    assert not _held_elsewhere(lock)


def _log_critical_sections(lock: str, log: str, counter: str, worker: int, rounds: int) -> None:
    for _ in range(rounds):
        with exclusive_lock(Path(lock)):
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"enter {worker}\n")
            count = int(Path(counter).read_text(encoding="utf-8"))
            write_atomically(Path(counter), str(count + 1))
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"leave {worker}\n")


def test_lock_serialises_processes(tmp_path: Path) -> None:
    lock, log, counter = tmp_path / "x.lock", tmp_path / "log", tmp_path / "counter"
    counter.write_text("0", encoding="utf-8")
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(
            target=_log_critical_sections, args=(str(lock), str(log), str(counter), n, 25)
        )
        for n in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    assert counter.read_text(encoding="utf-8") == "75"  # no read-modify-write was lost
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 150
    for enter, leave in zip(lines[::2], lines[1::2], strict=True):  # sections never overlap
        assert enter.startswith("enter ") and leave == enter.replace("enter", "leave")
    assert leftovers(tmp_path) == []

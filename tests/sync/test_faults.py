"""Faults: an unreachable remote, a rewritten one, a secret on its way out, a kill mid-merge."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from shell.events.sync import SyncFailed, SyncFinished, SyncRecovered, SyncRemoteAdded
from shell.sync import Backoff
from shell.sync.pull import JOURNAL
from tests.sync.conftest import DAY, Machine, git, has_markers
from tests.sync.daemon import free_port


def test_unreachable_remote_is_offline_and_changes_nothing(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    a = machine("a").seed()
    a.append(DAY, "- written while offline")
    head = a.head()

    events = a.engine.add_remote(f"git://127.0.0.1:{free_port()}/x")

    failed = events[-1]
    assert isinstance(failed, SyncFailed) and failed.kind == "offline", events
    assert a.head() == head
    assert git(a.root, "status", "--porcelain") == ""
    status = a.engine.status()
    assert status.offline and status.last_sync is None and status.ahead == 2
    again = a.engine.sync()[-1]
    assert isinstance(again, SyncFailed) and again.kind == "offline"


def test_credentials_in_a_url_never_reach_an_event(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    a = machine("a").seed()
    url = f"http://alice:s3cr3t-T0ken@127.0.0.1:{free_port()}/ws.git"

    events = a.engine.add_remote(url) + a.engine.sync()

    assert isinstance(events[0], SyncRemoteAdded) and "***@127.0.0.1" in events[0].url
    assert all("s3cr3t-T0ken" not in repr(event) for event in events)
    status = a.engine.status()
    assert status.remote and "s3cr3t" not in status.remote
    assert status.last_error and "s3cr3t" not in status.last_error


def test_a_force_pushed_remote_is_refused(tmp_path: Path, pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.append(DAY, "- a: before the rewrite")
    a.engine.sync()
    b.engine.sync()
    rewriter = tmp_path / "rewriter"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(rewriter))
    git(
        rewriter,
        "-c",
        "user.name=x",
        "-c",
        "user.email=x@x",
        "commit",
        "--amend",
        "-qm",
        "rewritten",
    )
    git(rewriter, "push", "-q", "--force", "origin", "main")
    head, tracking, note = b.head(), git(b.root, "rev-parse", "origin/main"), b.text(DAY)

    failed = b.engine.sync()[-1]

    assert isinstance(failed, SyncFailed) and failed.kind == "rewritten", failed
    assert "force-pushed" in failed.message
    assert (b.head(), git(b.root, "rev-parse", "origin/main"), b.text(DAY)) == (
        head,
        tracking,
        note,
    )
    assert git(b.root, "status", "--porcelain") == ""


def test_a_secret_stops_the_push_and_names_file_and_line_not_value(
    bare: Path, pair: tuple[Machine, Machine]
) -> None:
    a, _ = pair
    a.append(DAY, "- a harmless line")
    with (a.root / DAY).open("a", encoding="utf-8") as file:  # an edit made outside Cairn
        file.write("- the deploy key is AKIAIOSFODNN7EXAMPLE\n")
    published = git(bare, "rev-parse", "main")

    events = a.engine.sync()

    failed = events[-1]
    assert isinstance(failed, SyncFailed) and failed.kind == "secret", events
    assert f"{DAY}:2" in failed.message and "AWS" in failed.message
    assert "AKIAIOSFODNN7EXAMPLE" not in repr(events)
    assert git(bare, "rev-parse", "main") == published
    assert git(a.root, "status", "--porcelain") == ""  # the outside edit was committed locally


def test_recover_after_a_kill_during_a_merge(
    machine: Callable[[str], Machine], tmp_path: Path
) -> None:
    a = machine("a").seed()
    a.write("MEMORY.md", "# MEMORY.md\n- base\n")
    git(a.root, "branch", "other")
    a.write("MEMORY.md", "# MEMORY.md\n- ours\n")
    git(a.root, "checkout", "-q", "other")
    a.write("MEMORY.md", "# MEMORY.md\n- theirs\n")
    git(a.root, "checkout", "-q", "main")
    committed = a.text("MEMORY.md")
    merge = os.popen(f"cd {a.root} && git -c user.name=x -c user.email=x@x merge other 2>&1")
    merge.read()
    merge.close()
    assert (a.root / ".git" / "MERGE_HEAD").exists() and has_markers(a.text("MEMORY.md"))
    lock = a.root / ".git" / "index.lock"
    lock.touch()
    old = time.time() - 3600
    os.utime(lock, (old, old))

    events = a.engine.recover()

    assert len(events) == 1 and isinstance(events[0], SyncRecovered)
    assert "index.lock" in events[0].detail and "aborted a merge" in events[0].detail
    assert not lock.exists() and not (a.root / ".git" / "MERGE_HEAD").exists()
    assert a.text("MEMORY.md") == committed
    assert git(a.root, "status", "--porcelain") == ""
    assert a.engine.recover() == []


def test_recover_rolls_back_a_half_applied_sync_merge(
    machine: Callable[[str], Machine], tmp_path: Path
) -> None:
    a = machine("a").seed()
    old = a.head()
    a.append(DAY, "- merged, but HEAD never moved")
    new = a.head()
    git(a.root, "update-ref", "HEAD", old)  # the kill fell between read-tree and update-ref
    (a.root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    (a.root / JOURNAL).write_text(json.dumps({"old": old, "new": new}), encoding="utf-8")

    events = a.engine.recover()

    assert isinstance(events[-1], SyncRecovered) and "rolled back" in events[-1].detail
    assert not (a.root / DAY).exists() or "never moved" not in a.text(DAY)
    assert git(a.root, "status", "--porcelain") == ""
    assert not (a.root / JOURNAL).exists()


def test_backoff_doubles_from_five_seconds_to_five_minutes() -> None:
    backoff = Backoff()
    assert [backoff.next_delay() for _ in range(8)] == [5, 10, 20, 40, 80, 160, 300, 300]
    backoff.reset()
    assert backoff.next_delay() == 5


def test_status_counts_commits_to_push_and_to_pull(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.append(DAY, "- one")
    a.append(DAY, "- two")
    assert a.engine.status().ahead == 2
    a.engine.sync()
    b.append(DAY, "- three")
    assert isinstance(b.engine.push_only()[-1], SyncFailed)  # b has not merged a's commits
    finished = b.engine.sync()[-1]
    assert isinstance(finished, SyncFinished)
    status = b.engine.status()
    assert (status.ahead, status.behind, status.offline) == (0, 0, False)
    assert status.last_sync is not None and status.remote and status.remote.endswith("remote.git")

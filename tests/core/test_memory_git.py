"""GitStore and the git side of the one door, against real repositories in tmp_path."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell.events import GitLockCleared
from shell.git.store import GitStore
from shell.memory.files.door import MemoryFiles
from tests.git_read import blob, commits, git

FIXED = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


@pytest.fixture
def git_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def git_store(git_workspace: Path) -> GitStore:
    store = GitStore(
        git_workspace, author_name="Test Cairn", author_email="t@cairn.test", clock=lambda: FIXED
    )
    store.ensure_repo()
    return store


def test_ensure_repo_creates_main_branch_once(git_workspace: Path) -> None:
    store = GitStore(git_workspace)
    assert store.ensure_repo() is True
    assert store.ensure_repo() is False
    assert git(git_workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_commit_uses_configured_identity_and_clock(git_store: GitStore, git_workspace: Path):
    (git_workspace / "MEMORY.md").write_text("- likes tea\n")
    outcome = git_store.commit(["MEMORY.md"], "memory(tool): create MEMORY.md\n\nsession s1\n")
    assert outcome.error is None and outcome.sha is not None
    (head,) = commits(git_workspace)
    assert head.sha == outcome.sha
    assert head.author == head.committer == ("Test Cairn", "t@cairn.test")
    assert head.authored == FIXED and head.committed == FIXED
    assert head.message == "memory(tool): create MEMORY.md\n\nsession s1\n"
    assert blob(git_workspace, head.sha, "MEMORY.md") == b"- likes tea\n"


def test_identical_content_makes_no_empty_commit(git_store: GitStore, git_workspace: Path):
    (git_workspace / "MEMORY.md").write_text("same\n")
    first = git_store.commit(["MEMORY.md"], "one")
    again = git_store.commit(["MEMORY.md"], "two")
    assert first.sha is not None
    assert again.sha is None and again.error is None
    assert len(commits(git_workspace)) == 1


def test_commit_without_any_global_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in ("AUTHOR_NAME", "AUTHOR_EMAIL", "COMMITTER_NAME", "COMMITTER_EMAIL"):
        monkeypatch.delenv(f"GIT_{name}", raising=False)
    monkeypatch.delenv("EMAIL", raising=False)
    root = tmp_path / "bare-ws"
    files = MemoryFiles(root, GitStore(root))
    outcome = files.append("memory/2026-11-30.md", "- no identity needed", reason="user")
    assert outcome.event.commit is not None, outcome.event.commit_error
    (head,) = commits(root)
    assert head.author == head.committer == ("Cairn", "cairn@localhost")


def test_stale_index_lock_is_cleared_and_the_commit_has_the_change(
    git_store: GitStore, git_workspace: Path
) -> None:
    (git_workspace / "MEMORY.md").write_text("v1\n")
    git_store.commit(["MEMORY.md"], "first")
    lock = git_workspace / ".git" / "index.lock"
    lock.write_text("")
    an_hour_ago = time.time() - 3600
    os.utime(lock, (an_hour_ago, an_hour_ago))
    (git_workspace / "MEMORY.md").write_text("v2\n")

    outcome = git_store.commit(["MEMORY.md"], "second")

    assert outcome.error is None and outcome.sha is not None
    assert isinstance(outcome.lock_cleared, GitLockCleared)
    assert outcome.lock_cleared.path == ".git/index.lock"
    assert outcome.lock_cleared.age_s >= 3500
    assert not lock.exists()
    assert blob(git_workspace, "HEAD", "MEMORY.md") == b"v2\n"


def test_fresh_index_lock_fails_clearly_and_head_does_not_move(
    git_workspace: Path, git_store: GitStore
) -> None:
    files = MemoryFiles(git_workspace, git_store)
    first = files.append("memory/a.md", "- one", reason="tool")
    assert first.event.commit is not None
    lock = git_workspace / ".git" / "index.lock"
    lock.write_text("")

    second = files.append("memory/a.md", "- two", reason="tool")

    assert second.event.commit is None
    assert second.event.commit_error is not None
    assert "index.lock" in second.event.commit_error and "busy" in second.event.commit_error
    assert second.lock_cleared is None
    assert lock.exists(), "a fresh lock belongs to someone else and must stay"
    assert (git_workspace / "memory/a.md").read_text() == "- one\n- two\n"
    assert commits(git_workspace)[0].sha == first.event.commit

    lock.unlink()
    third = files.append("memory/a.md", "- three", reason="tool")
    assert third.event.commit is not None
    assert blob(git_workspace, "HEAD", "memory/a.md") == b"- one\n- two\n- three\n"


def test_failed_add_never_commits(git_store: GitStore, git_workspace: Path) -> None:
    outcome = git_store.commit(["memory/missing.md"], "nothing there")
    assert outcome.sha is None
    assert outcome.error is not None and "missing.md" in outcome.error
    assert commits(git_workspace) == []


def test_log_lists_newest_first_with_files_and_filters_by_path(
    git_store: GitStore, git_workspace: Path
) -> None:
    assert git_store.log() == []
    (git_workspace / "MEMORY.md").write_text("a\n")
    git_store.commit(["MEMORY.md"], "memory(tool): create MEMORY.md\n\nsession 1")
    (git_workspace / "memory").mkdir()
    (git_workspace / "memory" / "día.md").write_text("b\n")
    second = git_store.commit(["memory/día.md"], "memory(flush): append 1 line")

    log = git_store.log()
    assert [entry.message for entry in log] == [
        "memory(flush): append 1 line",
        "memory(tool): create MEMORY.md\n\nsession 1",
    ]
    assert log[0].sha == second.sha and second.sha.startswith(log[0].short)
    assert log[0].files == ["memory/día.md"]
    assert log[0].when == FIXED.isoformat()
    assert [entry.files for entry in git_store.log(path="MEMORY.md")] == [["MEMORY.md"]]
    assert len(git_store.log(limit=1)) == 1


def test_log_without_repository_is_empty(tmp_path: Path) -> None:
    assert GitStore(tmp_path / "nowhere").log() == []


def test_stale_ref_and_reflog_locks_of_a_killed_commit_are_cleared(
    git_store: GitStore, git_workspace: Path
) -> None:
    (git_workspace / "memory").mkdir()
    memory_files = MemoryFiles(git_workspace, git_store)
    memory_files.append("memory/2026-11-30.md", "- before the kill", reason="tool")
    git_dir = git_workspace / ".git"
    left_behind = [git_dir / "logs" / "refs" / "heads" / "main.lock", git_dir / "HEAD.lock"]
    five_seconds_ago = time.time() - 5
    for lock in left_behind:
        lock.write_text("")
        os.utime(lock, (five_seconds_ago, five_seconds_ago))

    outcome = memory_files.append("memory/2026-11-30.md", "- after the kill", reason="tool")

    assert outcome.event.commit is not None
    assert outcome.lock_cleared is not None
    assert outcome.lock_cleared.path == ".git/HEAD.lock, .git/logs/refs/heads/main.lock"
    assert not any(lock.exists() for lock in left_behind)


def test_line_times_say_when_each_line_was_last_changed(tmp_path: Path) -> None:
    moments = iter(
        [datetime(2026, 11, 1, 9, 0, tzinfo=UTC), datetime(2026, 11, 20, 17, 30, tzinfo=UTC)]
    )
    store = GitStore(tmp_path, clock=lambda: next(moments))
    store.ensure_repo()
    (tmp_path / "MEMORY.md").write_text("a\nb\n")
    store.commit(["MEMORY.md"], "one")
    (tmp_path / "MEMORY.md").write_text("a\nB\nc\n")
    store.commit(["MEMORY.md"], "two")
    (tmp_path / "MEMORY.md").write_text("a\nB\nc\nnot committed yet\n")
    times = store.line_times("MEMORY.md")
    assert times[:3] == [
        datetime(2026, 11, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 11, 20, 17, 30, tzinfo=UTC),
        datetime(2026, 11, 20, 17, 30, tzinfo=UTC),
    ]
    assert times[3] > datetime(2026, 11, 20, 17, 30, tzinfo=UTC)  # read as now
    assert GitStore(tmp_path / "none").line_times("MEMORY.md") == []


def test_a_commit_runs_no_hook_of_the_repository(git_store: GitStore, git_workspace: Path) -> None:
    hooks = git_workspace / ".git" / "hooks"
    for name in ("pre-commit", "commit-msg", "post-commit", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {git_workspace / name}.ran\nexit 1\n")
        (hooks / name).chmod(0o755)
    (git_workspace / "MEMORY.md").write_text("- hooks never run\n")
    fsmonitor = f"touch {git_workspace / 'fsmonitor'}.ran; echo"  # `git add` would start it
    git(git_workspace, "config", "core.fsmonitor", fsmonitor)
    outcome = git_store.commit(["MEMORY.md"], "memory(tool): write MEMORY.md")
    assert not list(git_workspace.glob("*.ran"))  # before the plain git of `commits` below
    assert outcome.error is None and outcome.sha == commits(git_workspace)[0].sha

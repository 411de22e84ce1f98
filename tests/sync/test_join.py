"""Joining a remote whatever its branches: `git init --bare` (HEAD master), another default
branch, a hand-made history, an unborn HEAD beside a branch with commits, and a refusal that
changes nothing when the remote's branch cannot be told."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from shell.events.sync import SyncCloned, SyncFailed, SyncFinished, SyncRemoteAdded
from shell.sync import clone_workspace
from shell.sync.state import SYNC_DIR
from tests.sync.conftest import DAY, Machine, git
from tests.sync.daemon import free_port

HAND = ("-c", "user.name=Hand", "-c", "user.email=hand@example.org")


def plain_bare(path: Path, *branch: str) -> Path:
    """A bare repository as `git init --bare` makes it (HEAD master), or with `-b NAME`."""
    subprocess.run(["git", "init", "-q", "--bare", *branch, str(path)], check=True)
    return path


def hand_push(tmp_path: Path, remote: Path, branch: str, files: dict[str, str]) -> str:
    """Commit `files` by plain git in a scratch clone and push them to `branch`; its sha."""
    work = tmp_path / f"hand-{branch}"
    git(tmp_path, "init", "-q", "-b", branch, str(work))
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    git(work, "add", ".")
    git(work, *HAND, "commit", "-qm", f"by hand on {branch}")
    git(work, "push", "-q", str(remote), f"{branch}:refs/heads/{branch}")
    return git(work, "rev-parse", "HEAD")


def branches(remote: Path) -> dict[str, str]:
    listed = git(remote, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split() for line in listed.splitlines())


def back_and_forth(a: Machine, b: Machine) -> None:
    """Both machines write, sync, and end with each other's lines on one history."""
    a.append(DAY, "- a: after the join")
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    b.append("memory/2026-11-29.md", "- b: after the join")
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    assert isinstance(a.engine.sync()[-1], SyncFinished)
    assert "- a: after the join" in b.text(DAY)
    assert a.text("memory/2026-11-29.md") == "- b: after the join\n"
    assert a.head() == b.head()


def test_a_plain_bare_repository_is_joined_on_the_branch_its_head_names(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")
    a = machine("a").seed()
    a.append(DAY, "- a: first machine")

    assert isinstance(a.engine.add_remote(str(remote))[-1], SyncFinished)

    assert branches(remote) == {"master": a.head()}  # HEAD's unborn branch, now born
    cloned = clone_workspace(str(remote), tmp_path / "b")
    assert isinstance(cloned[0], SyncCloned) and cloned[0].commits == 2, cloned
    b = machine("b")
    assert b.head() == a.head() and "- a: first machine" in b.text(DAY)
    back_and_forth(a, b)
    assert branches(remote) == {"master": a.head()}
    by_hand = tmp_path / "by-hand"
    git(tmp_path, "clone", "-q", str(remote), str(by_hand))
    assert (by_hand / DAY).read_text(encoding="utf-8").startswith("- a: first machine")


def test_another_default_branch_is_joined_by_name(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git", "-b", "trunk")
    a = machine("a").seed()

    assert isinstance(a.engine.add_remote(str(remote))[-1], SyncFinished)
    assert isinstance(clone_workspace(str(remote), tmp_path / "b")[0], SyncCloned)

    b = machine("b")
    assert git(b.root, "symbolic-ref", "--short", "HEAD") == "trunk"
    assert git(a.root, "symbolic-ref", "--short", "HEAD") == "main"  # maps to trunk
    back_and_forth(a, b)
    assert branches(remote) == {"trunk": a.head()}


def test_an_unborn_head_beside_a_branch_with_commits_joins_that_branch(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")  # HEAD master, never pushed to
    a = machine("a").seed()
    a.append(DAY, "- a: pushed as main")
    a.engine.add_remote(str(remote), branch="main")
    assert branches(remote) == {"main": a.head()}

    cloned = clone_workspace(str(remote), tmp_path / "b")

    assert isinstance(cloned[0], SyncCloned) and cloned[0].commits == 2, cloned
    b = machine("b")
    assert b.head() == a.head()
    c = machine("c").seed()
    assert isinstance(c.engine.add_remote(str(remote))[-1], SyncFinished)
    assert "- a: pushed as main" in c.text(DAY)
    back_and_forth(a, b)
    assert branches(remote) == {"main": a.head()}


def test_a_hand_made_history_on_master_is_merged_in(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")
    theirs = hand_push(tmp_path, remote, "master", {"notes.md": "- kept by hand\n"})
    a = machine("a").seed()
    own = a.head()

    events = a.engine.add_remote(str(remote))

    assert isinstance(events[-1], SyncFinished), events
    assert git(a.root, "merge-base", "--is-ancestor", theirs, "HEAD") == ""
    assert git(a.root, "merge-base", "--is-ancestor", own, "HEAD") == ""
    assert a.text("notes.md") == "- kept by hand\n"
    assert branches(remote) == {"master": a.head()}
    assert isinstance(clone_workspace(str(remote), tmp_path / "b")[0], SyncCloned)
    back_and_forth(a, machine("b"))


def test_a_clone_of_a_hand_made_memory_keeps_its_memory(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")
    theirs = hand_push(tmp_path, remote, "master", {"MEMORY.md": "# Memory\n\n- by hand\n"})

    cloned = clone_workspace(str(remote), tmp_path / "b")

    assert isinstance(cloned[0], SyncCloned) and cloned[0].commits == 1, cloned
    b = machine("b")
    assert b.head() == theirs and b.text("MEMORY.md") == "# Memory\n\n- by hand\n"
    b.append(DAY, "- b: joined")
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    assert git(remote, "merge-base", "--is-ancestor", theirs, "master") == ""


def test_an_empty_remote_with_an_unborn_main_is_pushed_to_main(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git", "-b", "main")

    cloned = clone_workspace(str(remote), tmp_path / "b")

    assert isinstance(cloned[0], SyncCloned) and cloned[0].commits == 0, cloned
    b = machine("b").seed()
    assert git(b.root, "symbolic-ref", "--short", "HEAD") == "main"
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    a = machine("a").seed()
    a.append(DAY, "- a: seeded apart, joined later")
    assert isinstance(a.engine.add_remote(str(remote))[-1], SyncFinished)
    back_and_forth(a, b)
    assert branches(remote) == {"main": a.head()}


def test_two_candidate_branches_are_refused_before_anything_changes(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")
    hand_push(tmp_path, remote, "one", {"one.md": "- one\n"})
    hand_push(tmp_path, remote, "two", {"two.md": "- two\n"})
    before = branches(remote)
    a = machine("a").seed()
    head, files = a.head(), sorted(p.name for p in a.root.iterdir())
    config = (a.root / ".git" / "config").read_text(encoding="utf-8")

    events = a.engine.add_remote(str(remote))
    cloned = clone_workspace(str(remote), tmp_path / "b")

    for failed in (events[-1], cloned[-1]):
        assert isinstance(failed, SyncFailed) and failed.kind == "error", failed
        assert "one, two" in failed.message and "--branch NAME" in failed.message
    assert len(events) == 1 and not (tmp_path / "b").exists()
    assert (a.head(), sorted(p.name for p in a.root.iterdir())) == (head, files)
    assert (a.root / ".git" / "config").read_text(encoding="utf-8") == config
    assert a.engine.status().remote is None and branches(remote) == before

    chosen = clone_workspace(str(remote), tmp_path / "b", branch="two")
    assert isinstance(chosen[0], SyncCloned), chosen
    assert machine("b").text("two.md") == "- two\n"
    assert isinstance(a.engine.add_remote(str(remote), branch="two")[-1], SyncFinished)
    assert a.text("two.md") == "- two\n" and branches(remote)["one"] == before["one"]


def test_a_path_that_is_no_repository_is_refused_and_not_set(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    a = machine("a").seed()

    events = a.engine.add_remote(str(tmp_path / "nowhere.git"))

    assert len(events) == 1 and isinstance(events[0], SyncFailed), events
    assert events[0].kind == "error" and a.engine.status().remote is None


def test_a_state_saved_before_branches_were_recorded_syncs_its_own_branch(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    saved = b.root / SYNC_DIR / "state.json"
    state = json.loads(saved.read_text(encoding="utf-8"))
    assert state.pop("branch") == "main"
    saved.write_text(json.dumps(state), encoding="utf-8")

    back_and_forth(a, b)


def test_a_remote_not_yet_reached_is_joined_by_the_first_sync_that_reaches_it(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    """What an offline `add_remote` leaves (a remote, no branch chosen yet), as `git remote
    add` by hand leaves it too: the first sync chooses the branch and merges the histories."""
    remote = plain_bare(tmp_path / "remote.git", "-b", "trunk")
    theirs = hand_push(tmp_path, remote, "trunk", {"notes.md": "- kept by hand\n"})
    a = machine("a").seed()
    git(a.root, "remote", "add", "origin", str(remote))

    assert isinstance(a.engine.sync()[-1], SyncFinished)

    assert git(a.root, "merge-base", "--is-ancestor", theirs, "HEAD") == ""
    assert branches(remote) == {"trunk": a.head()}
    saved = json.loads((a.root / SYNC_DIR / "state.json").read_text(encoding="utf-8"))
    assert saved["branch"] == "trunk"


def test_a_branch_asked_for_that_the_remote_lacks_starts_there(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git", "-b", "main")
    code = hand_push(tmp_path, remote, "main", {"README.md": "a project, not a memory\n"})

    cloned = clone_workspace(str(remote), tmp_path / "b", branch="memory")

    assert isinstance(cloned[0], SyncCloned) and cloned[0].commits == 0, cloned
    b = machine("b")
    assert git(b.root, "symbolic-ref", "--short", "HEAD") == "memory"
    assert not (b.root / "README.md").exists()
    b.seed()
    assert isinstance(b.engine.sync()[-1], SyncFinished)
    assert branches(remote) == {"main": code, "memory": b.head()}


def test_a_branch_name_git_refuses_is_refused(
    tmp_path: Path, machine: Callable[[str], Machine]
) -> None:
    remote = plain_bare(tmp_path / "remote.git")
    a = machine("a").seed()

    for events in (
        a.engine.add_remote(str(remote), branch="two..dots"),
        clone_workspace(str(remote), tmp_path / "b", branch="-x"),
    ):
        assert isinstance(events[-1], SyncFailed) and "not a branch name" in events[-1].message
    assert a.engine.status().remote is None and not (tmp_path / "b").exists()


def test_an_unreachable_remote_is_set_and_keeps_the_branch_asked_for(
    machine: Callable[[str], Machine],
) -> None:
    a = machine("a").seed()

    events = a.engine.add_remote(f"git://127.0.0.1:{free_port()}/x", branch="memory")

    assert [type(event) for event in events] == [SyncRemoteAdded, SyncFailed], events
    assert isinstance(events[-1], SyncFailed) and events[-1].kind == "offline"
    saved = json.loads((a.root / SYNC_DIR / "state.json").read_text(encoding="utf-8"))
    assert saved["branch"] == "memory" and saved["offline"] is True

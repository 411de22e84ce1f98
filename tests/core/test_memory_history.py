"""The memory's history on real git repositories: commits with kind, session and turn; a
commit's diff; a revert as a new commit, its preview, and a refusal that changes nothing; and
`cairn history` / `cairn revert` headless."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from shell.config import Settings
from shell.git.history import MemoryHistory, commit_kind
from shell.git.store import GitStore
from shell.headless.history import revert_command
from shell.memory.files.door import MemoryFiles
from widgets.cli import build_parser, dispatch


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    store = GitStore(root)
    store.ensure_repo()
    (root / ".gitignore").write_text(".cairn/\n")
    (root / "MEMORY.md").write_text("# Memory\n\n")
    store.commit([".gitignore", "MEMORY.md"], "workspace: seed MEMORY.md, .gitignore")
    files = MemoryFiles(root, store)
    files.append("memory/2026-11-30.md", "likes tea", reason="tool", origin="session s1 turn 2")
    files.append("MEMORY.md", "deploys on Friday", reason="flush", origin="session s1 turn 5")
    return root


def _status(root: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def test_commits_carry_kind_session_turn_and_files(root: Path) -> None:
    newest, middle, seed = MemoryHistory(root).commits()
    assert (newest.kind, newest.session, newest.turn, newest.files) == (
        "flush",
        "s1",
        5,
        ["MEMORY.md"],
    )
    assert (middle.kind, middle.turn, middle.files) == ("tool", 2, ["memory/2026-11-30.md"])
    assert (seed.kind, seed.session, seed.turn) == ("seed", None, None)
    assert commit_kind("memory(user): write MEMORY.md") == "user edit"
    assert commit_kind("edit made outside Cairn: MEMORY.md") == "outside edit"
    assert commit_kind("edit by the user in $EDITOR: MEMORY.md") == "user edit"
    assert MemoryHistory(root.parent / "nowhere").commits() == []


def test_diff_and_revert_as_a_new_commit(root: Path) -> None:
    history = MemoryHistory(root)
    newest = history.commits()[0]
    assert "+deploys on Friday" in history.diff(newest.sha)
    preview = history.preview_revert(newest.short)
    assert preview.applies and "-deploys on Friday" in preview.diff

    outcome = history.revert(newest.short)

    assert outcome.sha is not None and outcome.error is None and outcome.files == ["MEMORY.md"]
    assert "deploys on Friday" not in (root / "MEMORY.md").read_text()
    top = history.commits()[0]
    assert top.sha == outcome.sha and top.kind == "revert" and len(history.commits()) == 4
    assert _status(root) == ""


def test_a_revert_that_no_longer_applies_changes_nothing(root: Path) -> None:
    history = MemoryHistory(root)
    target = history.commits()[0]
    store = GitStore(root)
    (root / "MEMORY.md").write_text("# Memory\n\ndeploys on Friday at 14:00\n")
    store.commit(["MEMORY.md"], "memory(user): write MEMORY.md")
    before = (root / "MEMORY.md").read_bytes()
    head = history.commits()[0].sha

    assert not history.preview_revert(target.sha).applies
    outcome = history.revert(target.sha)

    assert outcome.sha is None and outcome.error and "no longer applies" in outcome.error
    assert (root / "MEMORY.md").read_bytes() == before
    assert history.commits()[0].sha == head and _status(root) == ""
    assert not (root / ".git" / "REVERT_HEAD").exists()


def test_a_revert_refuses_uncommitted_changes_and_unknown_commits(root: Path) -> None:
    history = MemoryHistory(root)
    (root / "MEMORY.md").write_text("# Memory\n\nhalf-typed\n")
    outcome = history.revert(history.commits()[0].sha)
    assert outcome.sha is None and outcome.error and "uncommitted" in outcome.error
    assert (root / "MEMORY.md").read_text() == "# Memory\n\nhalf-typed\n"
    assert history.revert("0" * 40).error


def _cli(root: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = dispatch(build_parser().parse_args([*argv, "--workspace", str(root)]))
    return code, capsys.readouterr().out


def test_cairn_history_json_and_table(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(root, "history", "--json", "-n", "2", capsys=capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [row["kind"] for row in rows] == ["flush", "tool"]
    assert rows[0]["session"] == "s1" and rows[0]["turn"] == 5
    code, out = _cli(root, "history", capsys=capsys)
    assert code == 0 and len(out.splitlines()) == 3 and "flush" in out


def test_cairn_revert_yes_and_without_a_terminal(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = MemoryHistory(root).commits()[0].sha
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal
    code, out = _cli(root, "revert", sha[:7], capsys=capsys)
    assert code == 1 and "nothing changed (pass --yes)" in out and "-deploys on Friday" in out
    assert "deploys on Friday" in (root / "MEMORY.md").read_text()

    code, out = _cli(root, "revert", sha[:7], "--yes", capsys=capsys)
    assert code == 0 and out.splitlines()[-1].startswith(f"reverted {sha[:7]} as ")
    assert "deploys on Friday" not in (root / "MEMORY.md").read_text()


def test_cairn_revert_asks_on_a_terminal(root: Path) -> None:
    settings = Settings(workspace=root)
    sha = MemoryHistory(root).commits()[0].sha
    out = io.StringIO()
    code = revert_command(settings, sha, yes=False, out=out, ask=lambda _: "n", interactive=True)
    assert code == 1 and "nothing changed" in out.getvalue()
    code = revert_command(settings, sha, yes=False, out=out, ask=lambda _: "y", interactive=True)
    assert code == 0 and "deploys on Friday" not in (root / "MEMORY.md").read_text()


def test_a_revert_waits_for_a_memory_write_under_way(root: Path) -> None:
    """The revert takes the memory write lock: it cannot interleave with a tool's write."""
    import threading

    from shell.fsio import exclusive_lock

    history = MemoryHistory(root)
    sha = history.commits()[0].sha
    done = threading.Event()
    with exclusive_lock(root / ".cairn" / "locks" / "memory.lock"):  # a write under way
        worker = threading.Thread(target=lambda: (history.revert(sha), done.set()))
        worker.start()
        assert not done.wait(0.3)
    worker.join(5)
    assert done.is_set() and "deploys on Friday" not in (root / "MEMORY.md").read_text()


def test_cairn_revert_prints_its_events_and_pushes_to_the_remote(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cairn revert` goes through the agent: its `MemoryWritten` is printed (a JSON line with
    `--json`), and the new commit reaches the workspace's remote before the command exits."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(remote)], cwd=root, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=root, check=True)
    sha = MemoryHistory(root).commits()[0].sha

    code, out = _cli(root, "revert", sha, "--yes", "--json", capsys=capsys)

    events = [json.loads(line) for line in out.splitlines()]
    [written] = [event for event in events if event["type"] == "memory_written"]
    head = MemoryHistory(root).commits()[0]
    assert code == 0 and head.kind == "revert"
    assert (written["path"], written["reason"], written["commit"]) == (
        "MEMORY.md",
        "revert",
        head.sha,
    )
    assert any(event["type"] == "sync_finished" for event in events)
    pushed = subprocess.run(
        ["git", "rev-parse", "main"], cwd=remote, capture_output=True, text=True, check=True
    )
    assert pushed.stdout.strip() == head.sha


def test_cairn_revert_says_each_file_it_wrote(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sha = MemoryHistory(root).commits()[0].sha
    code, out = _cli(root, "revert", sha, "--yes", capsys=capsys)
    head = MemoryHistory(root).commits()[0].sha
    assert code == 0 and f"  MEMORY.md written → {head[:7]} (revert, +0 lines)" in out.splitlines()
    code, out = _cli(root, "revert", "f" * 40, "--yes", capsys=capsys)
    assert code == 1 and "no such commit" in out


def test_cairn_revert_is_kept_in_the_latest_session_not_a_new_one(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A revert from the shell joins the session `--resume` would open, so it neither hides
    that session behind an empty one nor goes unseen."""
    first = MemoryHistory(root).commits()[0].sha
    assert _cli(root, "revert", first, "--yes", capsys=capsys)[0] == 0
    second = MemoryHistory(root).commits()[0].sha
    assert _cli(root, "revert", second, "--yes", capsys=capsys)[0] == 0
    [session] = (root / ".cairn" / "sessions").glob("*.events.jsonl")
    kept = [json.loads(line) for line in session.read_text().splitlines()]
    assert [(e["type"], e["commit"]) for e in kept] == [
        ("memory_written", second),
        ("memory_written", MemoryHistory(root).commits()[0].sha),
    ]


def test_a_merge_a_sync_made_is_reverted_against_its_first_parent(root: Path) -> None:
    """What the preview shows of a merge (the change against the local side) is what the
    revert undoes; git itself refuses a merge without a mainline."""

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=T", "-c", "user.email=t@h", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )

    git("checkout", "-q", "-b", "laptop")
    (root / "memory" / "2026-12-01.md").write_text("- from the laptop\n")
    git("add", "memory/2026-12-01.md")
    git("commit", "-q", "-m", "memory(tool): append 1 line to memory/2026-12-01.md")
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "-m", "sync: merge origin/main", "laptop")
    history = MemoryHistory(root)
    merge = history.commits()[0]
    preview = history.preview_revert(merge.sha)
    assert preview.applies and "-- from the laptop" in preview.diff

    outcome = history.revert(merge.sha)

    assert outcome.error is None and outcome.files == ["memory/2026-12-01.md"]
    assert not (root / "memory" / "2026-12-01.md").exists() and _status(root) == ""

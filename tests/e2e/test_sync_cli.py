"""One memory on two machines, as a user runs it: `cairn init --remote`, `cairn remote add`,
`cairn run` (which pushes what it wrote), `cairn sync` and `cairn sync --resolve`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.test_cli import cairn, events_of


def test_two_machines_share_one_memory_and_a_conflict_waits_for_review(tmp_path: Path) -> None:
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    laptop, server = tmp_path / "laptop", tmp_path / "server"

    assert cairn("init", str(laptop), home=tmp_path).returncode == 0
    added = cairn("remote", "add", str(remote), "--workspace", str(laptop), home=tmp_path)
    assert added.returncode == 0, added.stderr
    assert f"remote set: {remote}" in added.stdout and "synced:" in added.stdout

    said = "remember that the deploy key lives in the blue vault"
    ran = cairn("run", "--demo", "--workspace", str(laptop), said, home=tmp_path)
    pushed = [e for e in events_of(ran) if e["type"] == "sync_finished"]
    assert pushed and pushed[-1]["pushed_commits"] >= 1  # pushed before `cairn run` exits

    joined = cairn("init", "--remote", str(remote), str(server), home=tmp_path)
    assert joined.returncode == 0, joined.stderr
    assert f"cloned {remote} into {server}" in joined.stdout
    found = cairn("search", "where is the deploy key?", "--workspace", str(server), home=tmp_path)
    assert "blue vault" in found.stdout and "memory/" in found.stdout

    (laptop / "MEMORY.md").write_text("# Memory\n\n- editor: helix\n", encoding="utf-8")
    (server / "MEMORY.md").write_text("# Memory\n\n- editor: vim\n", encoding="utf-8")
    assert cairn("sync", "--workspace", str(laptop), home=tmp_path).returncode == 0
    synced = cairn("sync", "--workspace", str(server), home=tmp_path)
    assert synced.returncode == 0, synced.stdout
    assert "sync conflict in MEMORY.md: kept yours" in synced.stdout
    assert "-- editor: vim" in synced.stdout and "+- editor: helix" in synced.stdout
    assert "cairn sync --resolve MEMORY.md --take local|remote|both" in synced.stdout
    # While it waits, the file holds both sides (the pushed merge too): no machine loses a line.
    assert (
        (server / "MEMORY.md")
        .read_text(encoding="utf-8")
        .endswith("- editor: vim\n- editor: helix\n")
    )

    resolved = cairn(
        "sync",
        "--resolve",
        "MEMORY.md",
        "--take",
        "both",
        "--workspace",
        str(server),
        home=tmp_path,
    )
    assert resolved.returncode == 0 and "resolved MEMORY.md: took both" in resolved.stdout
    memory = (server / "MEMORY.md").read_text(encoding="utf-8")
    assert "- editor: vim" in memory and "- editor: helix" in memory and "<<<<" not in memory


def test_a_secret_in_an_outside_edit_stops_the_push(tmp_path: Path) -> None:
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    ws = tmp_path / "ws"
    assert cairn("init", "--remote", str(remote), str(ws), home=tmp_path).returncode == 0
    key = "AKIAIOSFODNN7REALKEY"
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / "2026-12-01.md").write_text(f"- aws key {key}\n", encoding="utf-8")
    synced = cairn("sync", "--workspace", str(ws), home=tmp_path)
    assert synced.returncode == 1
    assert "sync failed (secret)" in synced.stdout and "memory/2026-12-01.md:1" in synced.stdout
    assert key not in synced.stdout + synced.stderr
    remote_log = subprocess.run(
        ["git", "-C", str(remote), "log", "--all", "-p"], capture_output=True, text=True
    ).stdout
    assert key not in remote_log


def test_sync_redact_unpushed_previews_then_rewrites_and_pushes(tmp_path: Path) -> None:
    """The remote has no commit yet: the whole history is unpushed, and may be rewritten."""
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    ws = tmp_path / "ws"
    assert cairn("init", "--remote", str(remote), str(ws), home=tmp_path).returncode == 0
    key = "AKIAIOSFODNN7REALKEY"
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / "2026-12-01.md").write_text(f"- aws key {key}\n", encoding="utf-8")
    assert cairn("sync", "--workspace", str(ws), home=tmp_path).returncode == 1
    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True)

    shown = cairn("sync", "--redact-unpushed", "--workspace", str(ws), home=tmp_path)

    assert shown.returncode == 0, shown.stderr
    assert "redacting would rewrite the " in shown.stdout
    assert "memory/2026-12-01.md:1 · AWS Access Key: - aws key [REDACTED AWS" in shown.stdout
    assert "cairn sync --redact-unpushed --yes" in shown.stdout
    assert key not in shown.stdout + shown.stderr
    again = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True)
    assert again.stdout == head.stdout

    done = cairn("sync", "--redact-unpushed", "--yes", "--workspace", str(ws), home=tmp_path)

    assert done.returncode == 0, done.stdout
    assert "rewrote " in done.stdout and "synced:" in done.stdout
    remote_log = subprocess.run(
        ["git", "-C", str(remote), "log", "--all", "-p"], capture_output=True, text=True
    ).stdout
    assert key not in remote_log and "[REDACTED AWS Access Key]" in remote_log


def test_a_plain_bare_repository_is_joined_by_both_commands(tmp_path: Path) -> None:
    """`git init --bare` names master: the laptop publishes there, the server clones it."""
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop, server = tmp_path / "laptop", tmp_path / "server"
    assert cairn("init", str(laptop), home=tmp_path).returncode == 0
    added = cairn("remote", "add", str(remote), "--workspace", str(laptop), home=tmp_path)
    assert added.returncode == 0 and "synced:" in added.stdout, added.stdout

    joined = cairn("init", "--remote", str(remote), str(server), home=tmp_path)

    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert "(0 commits)" not in joined.stdout and "sync failed" not in joined.stdout
    (server / "MEMORY.md").write_text("# Memory\n\n- editor: helix\n", encoding="utf-8")
    assert cairn("sync", "--workspace", str(server), home=tmp_path).returncode == 0
    synced = cairn("sync", "--workspace", str(laptop), home=tmp_path)
    assert synced.returncode == 0 and "synced: 1 commit in" in synced.stdout, synced.stdout
    assert "editor: helix" in (laptop / "MEMORY.md").read_text(encoding="utf-8")
    heads = subprocess.run(
        ["git", "-C", str(remote), "for-each-ref", "--format=%(refname)", "refs/heads"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert heads == ["refs/heads/master"]


def test_an_ambiguous_remote_is_refused_until_a_branch_is_named(tmp_path: Path) -> None:
    remote = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    hand = tmp_path / "hand"
    subprocess.run(["git", "init", "-q", "-b", "one", str(hand)], check=True)
    (hand / "MEMORY.md").write_text("# Memory\n\n- by hand\n", encoding="utf-8")
    for step in (
        ["add", "."],
        ["-c", "user.name=H", "-c", "user.email=h@h", "commit", "-qm", "by hand"],
        ["push", "-q", str(remote), "one:refs/heads/one", "one:refs/heads/two"],
    ):
        subprocess.run(["git", "-C", str(hand), *step], check=True)
    server, laptop = tmp_path / "server", tmp_path / "laptop"

    refused = cairn("init", "--remote", str(remote), str(server), home=tmp_path)
    assert cairn("init", str(laptop), home=tmp_path).returncode == 0
    not_added = cairn("remote", "add", str(remote), "--workspace", str(laptop), home=tmp_path)

    for result in (refused, not_added):
        assert result.returncode == 1, result.stdout
        assert "sync failed (error): " in result.stdout and "(one, two)" in result.stdout
        assert "--branch NAME" in result.stdout and "remote set" not in result.stdout
    assert not server.exists()
    chosen = cairn("init", "--remote", str(remote), "--branch", "two", str(server), home=tmp_path)
    assert chosen.returncode == 0 and "(1 commit)" in chosen.stdout, chosen.stdout
    added = cairn(
        "remote", "add", str(remote), "--branch", "two", "--workspace", str(laptop), home=tmp_path
    )
    assert added.returncode == 0 and "synced:" in added.stdout, added.stdout
    assert "sync conflict in MEMORY.md: kept yours" in added.stdout  # both seeded it apart
    assert "synced: 1 commit in" in added.stdout

"""What a repository needs before it syncs, applied to every repository the engine opens.

A clone copies no config, so nothing the sync relies on lives in `.git/config`: the merge rule
for daily notes is in the committed `.gitattributes` (`merge=union` is built into git, no driver
to declare), `.cairn/` is kept out of git by `.git/info/exclude` when the workspace's
`.gitignore` lacks it, and edits made outside Cairn are committed before a merge so the merge
never meets a dirty memory file.
"""

from __future__ import annotations

from pathlib import Path

from shell.fsio import write_atomically
from shell.git.runner import Git
from shell.workspace import ATTRIBUTES, ATTRIBUTES_FILE, UNION_RULE

TRACKED = ("MEMORY.md", "AGENTS.md", "SOUL.md", "DREAMS.md", "memory")
"""The paths whose uncommitted edits a sync commits first."""
OUTSIDE_EDIT = "edit made outside Cairn, committed before a sync"


def ensure_ignored(root: Path, git_dir: Path) -> None:
    """Keep `.cairn/` (the sync's state and conflicts) out of git, without touching
    `.gitignore`: through `.git/info/exclude`, when `.gitignore` does not already."""
    try:
        ignore = (root / ".gitignore").read_text(encoding="utf-8")
    except OSError:
        ignore = ""
    if any(line.strip().strip("/") == ".cairn" for line in ignore.splitlines()):
        return
    exclude = git_dir / "info" / "exclude"
    try:
        current = exclude.read_text(encoding="utf-8")
    except OSError:
        current = ""
    if ".cairn/" in current.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(
        exclude, current + ("" if current.endswith("\n") or not current else "\n") + ".cairn/\n"
    )


def ensure_attributes(root: Path, git: Git) -> bool:
    """Write and commit the union rule into `.gitattributes` if it lacks it (the caller holds
    the commit lock). Returns whether it did."""
    path = root / ATTRIBUTES_FILE
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    if UNION_RULE in current.splitlines():
        return False
    separator = "" if not current or current.endswith("\n") else "\n"
    write_atomically(path, current + separator + ATTRIBUTES)
    commit_files(git, [ATTRIBUTES_FILE], "workspace: daily notes merge as a union of lines")
    return True


def commit_outside_edits(git: Git) -> list[str]:
    """Commit the memory and curated files edited outside Cairn (and not committed yet) as one
    commit. Returns the files committed. The caller holds the repository's commit lock."""
    status = git.run(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *TRACKED]
    ).stdout
    files = sorted(
        {entry[3:] for entry in status.split("\0") if len(entry) > 3 and entry[2] == " "}
    )
    if files:
        commit_files(git, files, f"{OUTSIDE_EDIT}: {', '.join(files)}")
    return files


def commit_files(git: Git, files: list[str], message: str) -> None:
    """Commit exactly `files` as they are in the working tree (added, changed or deleted)."""
    git.run(["add", "--force", "-A", "--", *files])
    git.run(
        ["commit", "--no-verify", "--no-gpg-sign", "-q", "-m", message, "--", *files],
        env=git.identity_env(),
    )

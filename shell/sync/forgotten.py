"""Forgetting across machines: the tombstones travel in history, and every sync honours them.

The remote carries `.cairn-forgotten` (`shell.memory.forget.tombstones`: hashes, never
text). At each sync, with the remote's head fetched, this workspace's tombstones and the
remote's are joined; when either side lacks some (a forget made here, or on another machine),
both histories are purged with all of them (`shell.memory.forget.purge`, the same on every
machine), HEAD moves to the purged one (`shell.sync.redact.move_head`, journalled), `.cairn/`
is scrubbed, and the merge goes on against the purged remote. When the remote's own history
had to change, the push is forced *with a lease* on the head just fetched: a machine that
pushed meanwhile makes it fail, and the next attempt fetches, purges and merges that
machine's lines too.

A remote whose history was rewritten is accepted only when this check holds: the old remote
head, purged with the new head's tombstones, is in the new history. So the rewrite took out
forgotten lines and nothing else; any other force-push is still refused (`shell.sync.pull`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from shell.events.sync import SyncForgotten
from shell.events.turns import Notice
from shell.git.runner import Git, GitFailure
from shell.memory.forget.purge import Purged, purge
from shell.memory.forget.state import scrub_state
from shell.memory.forget.tombstones import FILE, TombstoneError, Tombstones, parse
from shell.memory.paths import is_memory_file
from shell.sync.pull import INCOMING
from shell.sync.redact import move_head
from shell.sync.state import SYNC_DIR
from shell.text import counted

REASON = "cairn: history purged of forgotten lines"
PRUNE_PENDING = f"{SYNC_DIR}/prune-pending"
"""Written when a purge left old objects behind; the next sync that completes prunes them."""
MAX_QUIET = 5
"""A purge may take this many lines of the working files whatever their share of the memory."""


@dataclass
class Settled:
    """The two heads to merge once both are purged, and what that did here."""

    head: str
    incoming: str
    lease: str | None = None
    """The remote's head the push must still find there (it was rewritten), else None."""
    events: list[SyncForgotten | Notice] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    purged: bool = False


def tombstones_at(git: Git, commit: str) -> Tombstones:
    """The tombstones `commit` holds. Raises GitFailure when they cannot be trusted."""
    done = git.run(["cat-file", "blob", f"{commit}:{FILE}"], check=False)
    if done.code != 0:
        return Tombstones()
    try:
        return parse(done.stdout, source=f"{FILE} at {commit[:10]}")
    except TombstoneError as error:
        raise GitFailure("error", f"{error}; nothing was merged or pushed") from None


class Purges:
    """The purges of one sync: each reuses what an earlier one with the same tombstones did
    (the old remote head's history is most of HEAD's), so no commit is rewritten twice."""

    def __init__(self, git: Git, earlier: tuple[Tombstones, Purged] | None = None) -> None:
        self._git = git
        self._done: list[tuple[Tombstones, Purged]] = [earlier] if earlier else []

    def purge(self, head: str, tombstones: Tombstones) -> Purged:
        after = next((made for used, made in reversed(self._done) if used == tombstones), None)
        made = purge(self._git, head, tombstones, after)
        self._done.append((tombstones, made))
        return made


def accepts_rewrite(git: Git, purges: Purges, previous: str, head: str) -> bool:
    """Whether `head` is `previous`'s history purged by `head`'s tombstones (and more after)."""
    tombstones = tombstones_at(git, head)
    if not tombstones:
        return False
    return git.is_ancestor(purges.purge(previous, tombstones).head, head)


def settle(
    git: Git, root: Path, purges: Purges, head: str, incoming: str, previous: str | None
) -> Settled:
    """Purge HEAD's and the remote's history with both sides' tombstones when either lacks
    some (the caller holds the commit lock). HEAD and the working tree move; the remote's purged
    head is returned to merge, with the lease its push needs."""
    mine, theirs = tombstones_at(git, head), tombstones_at(git, incoming)
    every = mine | theirs
    rewritten = (
        previous is not None and previous != incoming and not git.is_ancestor(previous, incoming)
    )
    if not every or (every <= mine and every <= theirs and not rewritten):
        return Settled(head, incoming)
    settled = Settled(head, incoming)
    if not every <= theirs:
        remote = purges.purge(incoming, every).head
        settled.incoming = remote
        settled.lease = incoming if remote != incoming else None
        settled.purged = True
    local = purges.purge(head, every)
    if local.head == head:
        return settled
    settled.purged = True
    names = git.run(["diff", "--name-only", "-z", "--no-renames", head, local.head]).stdout
    spots = {
        name: lines_holding(root / name, every)
        for name in names.split("\0")
        if name and is_memory_file(name)
    }
    _refuse_sweeping(git, root, head, sum(len(lines) for lines in spots.values()))
    owe_prune(root)
    settled.files = move_head(git, root, head, local.head, REASON)
    settled.head = local.head
    spans = {span for line in local.lines for span in every.spans(line)}
    scrubbed = scrub_state(root, spans, spots)
    pushed = set(git.run(["rev-list", incoming], check=False).stdout.split())
    unpushed = sum(1 for old, new in local.renamed.items() if old != new and old not in pushed)
    settled.events.append(
        SyncForgotten(
            commits=local.commits,
            unpushed_commits=unpushed,
            tombstones=len(every.words),
            files=settled.files,
            transcripts=scrubbed.transcripts,
            dream_entries=scrubbed.dream_entries,
            hit_log_entries=scrubbed.hit_log_entries,
            index_removed=scrubbed.index_removed,
        )
    )
    if unpushed:
        settled.events.append(
            Notice(
                f"your commits not pushed yet held a line forgotten on another machine (or "
                f"here): it was dropped, {counted(unpushed, 'commit')} rewritten without it; "
                "your other lines are kept",
                level="warning",
            )
        )
    return settled


def _refuse_sweeping(git: Git, root: Path, head: str, dropped: int) -> None:
    """Raise GitFailure when the tombstones would take more than a quarter of the memory's
    lines (and more than MAX_QUIET): one forgotten line is never most of a memory, and a
    history purge cannot be undone, so a tombstone file that sweeps it is not obeyed."""
    if dropped <= MAX_QUIET:
        return
    names = git.run(["ls-tree", "-r", "-z", "--name-only", head]).stdout.split("\0")
    total = 0
    for name in names:
        if name and is_memory_file(name):
            try:
                text = (root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            total += sum(1 for line in text.splitlines() if line.strip())
    if dropped * 4 > total:
        raise GitFailure(
            "error",
            f"the tombstones in {FILE} would take {dropped} of this memory's {total} lines; "
            "a forget takes out lines, not a memory, so nothing was merged, purged or pushed: "
            f"check who wrote {FILE} on the remote",
        )


def lines_holding(path: Path, tombstones: Tombstones) -> set[int]:
    """The 1-based numbers of the lines of `path` that hold a forgotten line."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return {n for n, line in enumerate(text.splitlines(), start=1) if tombstones.holds(line)}


def owe_prune(root: Path) -> None:
    """Remember that old objects are to be pruned (a kill or a failed push before `tidy`)."""
    flag = root / PRUNE_PENDING
    flag.parent.mkdir(parents=True, exist_ok=True)
    flag.touch()


def tidy(git: Git, git_dir: Path, root: Path) -> None:
    """Let the objects a purge left behind go: the fetched head, ORIG_HEAD and every reflog
    (they name the old commits), then `gc --prune=now`; the debt is paid."""
    git.run(["update-ref", "-d", INCOMING], check=False)
    (git_dir / "ORIG_HEAD").unlink(missing_ok=True)
    git.run(["reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"])
    git.run(["gc", "--prune=now", "--quiet"])
    (root / PRUNE_PENDING).unlink(missing_ok=True)

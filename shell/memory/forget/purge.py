"""Rewriting a whole history without the forgotten lines, the same way on every machine.

Every commit reachable from a head goes through `shell.git.rewrite.rewrite_commits`: each text
blob loses the lines its tombstones hold (`Tombstones.holds`), each commit message the same,
authors, dates and every other byte kept. Nothing else decides what changes, so two machines
that purge the same commits with the same tombstones make the same new commits, sha for sha:
that is how a machine checks that a remote rewritten by another one only lost forgotten lines
(`purged_head` of its old remote head must be in the new history), and how its own pushed
commits line up with the remote's after it purges them. Nothing moves here: the caller points
HEAD at the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shell.git.objects import STORED, outgoing, read_commits, read_objects
from shell.git.rewrite import rewrite_commits
from shell.git.runner import Git
from shell.memory.forget.tombstones import Tombstones

MAX_BLOB_BYTES = 8_000_000
"""A bigger blob is not memory text: it is left as it is (and said, `Purged.skipped`)."""


@dataclass
class Purged:
    """What a purge made: the new head, and what it took out (the lines themselves are kept
    in memory only, for the caller to scrub `.cairn/` with; never written anywhere)."""

    head: str
    renamed: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, bytes] = field(default_factory=dict)
    """Each blob that held a forgotten line, with its new bytes."""
    old: str = ""
    """The head purged."""
    lines: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)

    @property
    def commits(self) -> int:
        """How many commits changed."""
        return sum(1 for old, new in self.renamed.items() if old != new)


def without_forgotten(data: bytes, tombstones: Tombstones) -> tuple[bytes, list[str]]:
    """`data` without its lines that hold a forgotten one, and those lines (decoded)."""
    kept: list[bytes] = []
    dropped: list[str] = []
    for line in data.splitlines(keepends=True):
        text = line.decode("utf-8", "surrogateescape")
        if tombstones.holds(text):
            dropped.append(text.rstrip("\r\n"))
        else:
            kept.append(line)
    return (b"".join(kept), dropped) if dropped else (data, [])


def purge(git: Git, head: str, tombstones: Tombstones, after: Purged | None = None) -> Purged:
    """The history of `head` rewritten without the forgotten lines (objects written, no ref
    moved). Its head is `head` itself when nothing held them. `after`: a purge with the same
    tombstones of some of that history, whose commits and blobs are not read again."""
    since = [after.old, after.head] if after is not None else []
    shas = outgoing(git, head, None) if not since else _outgoing_since(git, head, since)
    commits = read_commits(git, shas)
    blobs, lines, skipped = _blobs(git, head, tombstones, since)
    if after is not None:
        blobs = {**after.replaced, **blobs}
        lines |= after.lines

    def text(said: bytes) -> bytes:
        headers, gap, message = said.partition(b"\n\n")
        if not gap:
            return said
        cleaned, dropped = without_forgotten(message, tombstones)
        lines.update(dropped)
        return headers + gap + cleaned

    known = after.renamed if after is not None else None
    renamed = rewrite_commits(git, commits, blobs=blobs, paths={}, text=text, rewritten=known)
    renamed.update({new: new for new in list(renamed.values())})  # a purged commit stays
    return Purged(renamed.get(head, head), renamed, blobs, head, lines, skipped)


def holds_anywhere(git: Git, head: str, tombstones: Tombstones) -> bool:
    """Whether any file or commit message of `head`'s history holds a forgotten line (no
    object written)."""
    if _blobs(git, head, tombstones, [])[0]:
        return True
    _, out = git.run_bytes(["log", "--format=%B%x00", head], env=STORED)
    return any(tombstones.holds(line) for line in out.decode("utf-8", "replace").splitlines())


def _outgoing_since(git: Git, head: str, since: list[str]) -> list[str]:
    command = ["rev-list", "--reverse", "--topo-order", head, *(f"^{sha}" for sha in since)]
    return git.run(command, env=STORED).stdout.split()


def _blobs(
    git: Git, head: str, tombstones: Tombstones, since: list[str]
) -> tuple[dict[str, bytes], set[str], list[str]]:
    """Each text blob of `head`'s history (not `since`'s) that holds a forgotten line, with its
    new bytes."""
    command = [
        "rev-list",
        "--objects",
        "--no-object-names",
        head,
        *(f"^{sha}" for sha in since),
    ]
    _, out = git.run_bytes(command, env=STORED)
    listed = out.decode().split()
    _, checked = git.run_bytes(
        ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        stdin="\n".join(listed).encode() + b"\n",
        env=STORED,
    )
    small: list[str] = []
    skipped: list[str] = []
    for record in checked.decode().splitlines():
        sha, kind, size = [*record.split(" "), "", ""][:3]
        if kind != "blob":
            continue
        (small if size.isdigit() and int(size) <= MAX_BLOB_BYTES else skipped).append(sha)
    changed: dict[str, bytes] = {}
    lines: set[str] = set()
    for sha, data in read_objects(git, small).items():
        if b"\0" in data:
            continue  # not text
        cleaned, dropped = without_forgotten(data, tombstones)
        if dropped:
            changed[sha] = cleaned
            lines.update(dropped)
    return changed, lines, skipped

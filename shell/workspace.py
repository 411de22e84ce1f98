"""The workspace: seeding a new one, and assembling the bootstrap part of the system prompt.

Seeding never overwrites an existing file. The bootstrap loads AGENTS.md → SOUL.md → MEMORY.md
within a per-file and a total character budget; anything cut is reported as an event.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from shell.config import ConfigError, Settings
from shell.events import BootstrapMissing, BootstrapTruncated, Event, Notice
from shell.fsio import remove_stale_temp_files
from shell.git.store import GitStore
from shell.readonly import read_only
from shell.secrets.door import private_folder
from shell.text import shorten, trim_middle

ATTRIBUTES_FILE = ".gitattributes"
UNION_RULE = "memory/**/*.md merge=union"
ATTRIBUTES = (
    f"# Cairn: daily notes are append-only; a merge keeps the lines of both sides.\n{UNION_RULE}\n"
)
BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "MEMORY.md")
BOOTSTRAP_SHARE = 4
"""The bootstrap files take at most 1/BOOTSTRAP_SHARE of the window."""
CHARS_PER_TOKEN = 4
"""For turning a token budget into the character budgets of the bootstrap (English: ~4.3)."""


def bootstrap_budgets(settings: Settings, window: int) -> tuple[int, int]:
    """(per file, total) characters of the bootstrap for `window`: the configured budgets,
    shrunk so the whole bootstrap stays within a quarter of the window. OpenClaw's 20k/60k
    characters are sized for 200k windows; at 2k they alone would overflow it."""
    total = min(settings.bootstrap_total_max_chars, window * CHARS_PER_TOKEN // BOOTSTRAP_SHARE)
    scaled = settings.bootstrap_max_chars * total // max(1, settings.bootstrap_total_max_chars)
    return min(settings.bootstrap_max_chars, max(scaled, total // 2)), total


MIN_REMAINING_CHARS = 64

SEEDS: dict[str, str] = {
    "AGENTS.md": """\
# AGENTS.md — how this agent works

## Session Startup
- Your memory is the files in this workspace: MEMORY.md (curated, loaded every session) and
  memory/YYYY-MM-DD.md (daily notes, found with memory_search).
- Before answering about past work, decisions, dates, people or preferences, search memory first.

## Red Lines
- Never invent a memory. If memory_search finds nothing relevant, say so.
- Daily notes are append-only: add lines with memory_append, never rewrite them.
- Never store secrets (keys, passwords, tokens) in memory files.

## Memory
- When the user asks you to remember something, or states a preference or a decision, append it
  to today's note, one short line per fact.
- Curate MEMORY.md (memory_write, after reading it) only with durable facts worth loading every
  session.
""",
    "SOUL.md": """\
# SOUL.md — who you are

You are Cairn: calm, precise and brief. You say what you know, cite where it came from, and admit
what you do not know.
""",
    "MEMORY.md": """\
# MEMORY.md — curated long-term memory

""",
    "DREAMS.md": """\
# DREAMS.md — the dreaming diary

Consolidation passes write here: what they noticed, and what they propose to promote into
MEMORY.md.
""",
    ".gitignore": ".cairn/\n",
    ".gitattributes": ATTRIBUTES,  # daily notes merge as a union of lines (`shell.sync`)
}


PROJECT_SEEDS = {name: text for name, text in SEEDS.items() if name not in ("AGENTS.md", "SOUL.md")}
"""A project's memory (`shell.scopes`): the rules and the persona are the global memory's."""


def seed_workspace(root: Path, seeds: dict[str, str] = SEEDS) -> list[str]:
    """Create any missing seed files and the memory/ folder. Returns the files created."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "memory").mkdir(exist_ok=True)
    created = []
    for name, text in seeds.items():
        path = root / name
        if not path.exists() and not path.is_symlink():
            path.write_text(text, encoding="utf-8")
            created.append(name)
    keep = root / "memory" / ".gitkeep"
    if not any((root / "memory").iterdir()):
        keep.touch()
        created.append("memory/.gitkeep")
    return created


def truncate_middle(text: str, limit: int, name: str) -> str:
    """`trim_middle`, with OpenClaw's marker naming the file to read for the whole of it."""

    def marker(head: int, tail: int, total: int) -> str:
        return (
            f"\n\n[...truncated, read {name} for full content...]\n"
            f"…(truncated {name}: kept {head}+{tail} chars of {total})…\n\n"
        )

    return trim_middle(text, limit, marker)


@dataclass(frozen=True)
class Bootstrap:
    text: str
    events: tuple[Event, ...]
    chars: dict[str, int]
    """Injected characters per file."""


def load_bootstrap(
    root: Path,
    *,
    max_chars: int = 20_000,
    total_max_chars: int = 60_000,
    more: Sequence[tuple[str, Path]] = (),
    clean: Callable[[str], str] | None = None,
) -> Bootstrap:
    """AGENTS.md → SOUL.md → MEMORY.md of `root`, then each of `more` (a heading and a file:
    a project's MEMORY.md, `shell.scopes`), within the one per-file and total budget.
    `clean`: applied to the files of `root` as they are read (a project's session reads the
    global memory without its secret lines)."""
    remaining = max(total_max_chars, max_chars)
    sections: list[str] = []
    events: list[Event] = []
    chars: dict[str, int] = {}
    for name, path in [*((name, root / name) for name in BOOTSTRAP_FILES), *more]:
        if not path.is_file():
            body = f"[MISSING] Expected at: {name}"[:remaining]
            events.append(BootstrapMissing(file=name))
        else:
            if remaining < MIN_REMAINING_CHARS:
                original = len(path.read_text(encoding="utf-8", errors="replace"))
                events.append(BootstrapTruncated(name, original, 0, "total"))
                continue
            body = path.read_text(encoding="utf-8", errors="replace").rstrip()
            if clean is not None and path.parent == root:
                body = clean(body)
            limit = min(max_chars, remaining)
            if len(body) > limit:
                reason: Literal["per_file", "total"] = "per_file" if limit == max_chars else "total"
                original = len(body)
                body = truncate_middle(body, limit, name)
                body = shorten(body, remaining)
                events.append(BootstrapTruncated(name, original, len(body), reason))
        remaining -= len(body)
        chars[name] = len(body)
        sections.append(f"## {name}\n\n{body}")
    return Bootstrap("\n\n".join(sections), tuple(events), chars)


def memory_room(root: Path, window_budgets: tuple[int, int]) -> int:
    """The characters MEMORY.md may take in the bootstrap: its per-file budget, or what AGENTS.md
    and SOUL.md leave of the total, whichever is less (`load_bootstrap`'s own accounting)."""
    per_file, total = window_budgets
    used = load_bootstrap(root, max_chars=per_file, total_max_chars=total).chars
    left = max(total, per_file) - used.get("AGENTS.md", 0) - used.get("SOUL.md", 0)
    return max(0, min(per_file, left))


def existing_workspace(settings: Settings) -> GitStore:
    """`init_workspace` for a command that only reads or maintains a workspace (`cairn search`,
    `cairn index`): a folder that does not exist is a typo, refused, never made and seeded.

    Raises:
        ConfigError: there is no folder at the workspace's path.
    """
    if not settings.workspace.is_dir():
        raise ConfigError(
            f"no workspace at {settings.workspace}: check the path, or make one with "
            f"`cairn init {settings.workspace}`"
        )
    return init_workspace(settings)


def init_workspace(settings: Settings, seeds: dict[str, str] = SEEDS) -> GitStore:
    """Seed missing files, make sure the workspace is a git repo, and commit what was seeded.
    The state folder (`.cairn`) is made the user's alone (0700). A read-only workspace is left
    as it is."""
    git = GitStore(
        settings.workspace,
        author_name=settings.git_author_name,
        author_email=settings.git_author_email,
        clock=settings.clock,
    )
    if read_only(settings.workspace):
        return git
    created = seed_workspace(settings.workspace, seeds)
    private_folder(settings.state_dir)
    new_repo = git.ensure_repo()
    if created or new_repo:
        outcome = git.commit(
            created, "workspace: seed " + ", ".join(created) if created else "workspace: init"
        )
        if outcome.error:
            raise WorkspaceError(f"could not commit the seeded workspace: {outcome.error}")
    return git


READ_ONLY = (
    "The workspace is read-only: memory is read and searched (its index kept in a temporary "
    "folder), but nothing can be written to it"
)


class WorkspaceError(Exception):
    """The workspace cannot be used (not writable, not a git repo we can commit to)."""


def sweep_interrupted_writes(root: Path) -> list[str]:
    """Remove what a killed memory write left behind (`.<name>.<random>.tmp` beside the file)
    and return the workspace-relative names removed."""
    candidates = [*root.glob(".*.tmp"), *_temp_files(root / "memory")]
    return [path.relative_to(root).as_posix() for path in remove_stale_temp_files(candidates)]


def _temp_files(folder: Path) -> list[Path]:
    """The temp files under `folder`. `os.walk`, not `rglob`: a folder renamed or removed
    while it is walked (by a person, at start-up) is skipped, where `rglob` raised."""
    return [
        Path(here, name)
        for here, _, names in os.walk(folder)
        for name in names
        if fnmatch.fnmatch(name, ".*.tmp")
    ]


def recovery_notices(root: Path, torn_lines: int) -> list[Notice]:
    """What an earlier run killed mid-write left behind, cleaned up and said: temp files of
    an interrupted memory write, and `torn_lines` of a resumed session's transcript."""
    notices = []
    if read_only(root):
        return [Notice(READ_ONLY, level="warning")]
    if swept := sweep_interrupted_writes(root):
        notices.append(
            Notice(
                f"Removed {len(swept)} temp file(s) of an interrupted write: " + ", ".join(swept),
                level="warning",
            )
        )
    if torn_lines:
        notices.append(
            Notice(
                f"Skipped {torn_lines} torn line(s) of this session's transcript (a crash "
                "mid-write); everything before them was restored.",
                level="warning",
            )
        )
    return notices

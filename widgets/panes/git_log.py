"""The workspace's recent commits: one per memory write, newest first. A commit made on another
machine says where it came from ("↓ laptop"); a sync's merge or resolve commit reads as such."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from widgets.format import one_line


class CommitLike(Protocol):
    @property
    def short(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def when(self) -> Any: ...

    @property
    def machine(self) -> str:
        """Where it was made: the host part of its author's email ("" when unknown)."""
        ...


class GitLogSource(Protocol):
    def log(self, limit: int = 20) -> Sequence[CommitLike]: ...


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%m-%d %H:%M")
    return str(value)[:16] if value else ""


def machine_of(email: str) -> str:
    """The machine an author's email names: the host part of `cairn@<host>`."""
    return email.rpartition("@")[2]


def commit_lines(commits: Sequence[CommitLike], here: str = "") -> Text:
    """One line per commit; `here` is this machine (a commit from another one is marked)."""
    text = Text()
    for commit in commits:
        subject = commit.message.splitlines()[0] if commit.message else ""
        synced = subject.startswith("sync:")
        text.append(commit.short[:7], style="bold")
        if synced:
            subject = "⇅ " + subject.removeprefix("sync:").strip()
        text.append(f" {one_line(subject, 72)}", style="italic" if synced else "")
        if commit.machine and here and commit.machine != here:
            text.append(f"  ↓ {commit.machine}", style="bold")
        if when := _when(commit.when):
            text.append(f"  {when}", style="dim")
        text.append("\n")
    text.rstrip()
    return text


class GitLog(VerticalScroll):
    """The last commits of the workspace repository (sha + message)."""

    DEFAULT_CSS = """
    GitLog { height: 1fr; padding: 0 1; }
    GitLog > Static { height: auto; }
    """

    LIMIT = 20

    def __init__(
        self, source: GitLogSource | None, *, here: str = "", id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.source = source
        self.here = here
        """This machine's name (`machine_of` the session's git email)."""
        self.commits: list[CommitLike] = []

    def compose(self) -> ComposeResult:
        yield Static("no commits yet", classes="git-log--body")

    async def on_mount(self) -> None:
        await self.reload()

    async def reload(self) -> None:
        """Read the log off the UI thread (git is a subprocess/disk read) and show it."""
        if self.source is None:
            return
        try:
            commits = list(await asyncio.to_thread(self.source.log, self.LIMIT))
        except Exception as error:  # a broken repository must not break the UI
            self.query_one(".git-log--body", Static).update(Text(f"git log failed: {error}"))
            return
        self.commits = commits
        body = commit_lines(commits, self.here) if commits else Text("no commits yet")
        self.query_one(".git-log--body", Static).update(body)

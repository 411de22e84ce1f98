"""The side column: the memory files on top, the gate log and the git log below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane

from widgets.gate_log import GateLog
from widgets.git_log import GitLog, GitLogSource
from widgets.memory_panes import MemoryFilePane

POLL_SECONDS = 2.0
"""How often the panes look for edits made outside Cairn (an mtime check, cheap)."""


class SidePanes(Vertical):
    """MEMORY.md / today's note / DREAMS.md tabs, and Gates / Git tabs."""

    DEFAULT_CSS = """
    SidePanes {
        height: 1fr;
        & > #memory-tabs { height: 3fr; }
        & > #activity-tabs { height: 2fr; }
        & TabbedContent > ContentSwitcher { height: 1fr; }
        & TabPane { padding: 0; height: 1fr; }
    }
    """

    def __init__(
        self,
        workspace: Path,
        today: Callable[[], str],
        git: GitLogSource | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.workspace = workspace
        self.today = today
        self.git = git

    def daily_note(self) -> Path:
        return self.workspace / "memory" / f"{self.today()}.md"

    def compose(self) -> ComposeResult:
        with TabbedContent(id="memory-tabs", initial="tab-memory"):
            with TabPane("MEMORY.md", id="tab-memory"):
                yield MemoryFilePane(lambda: self.workspace / "MEMORY.md", id="pane-memory")
            with TabPane("Today", id="tab-today"):
                yield MemoryFilePane(self.daily_note, id="pane-today")
            with TabPane("DREAMS.md", id="tab-dreams"):
                yield MemoryFilePane(lambda: self.workspace / "DREAMS.md", id="pane-dreams")
        with TabbedContent(id="activity-tabs", initial="tab-gates"):
            with TabPane("Gates", id="tab-gates"):
                yield GateLog(id="gate-log")
            with TabPane("Git", id="tab-git"):
                yield GitLog(self.git, id="git-log")

    def on_mount(self) -> None:
        self.call_after_refresh(self._load)  # the files and the git log after the first frame

    async def _load(self) -> None:
        for pane in self.panes:
            await pane.reload(force=True)
        await self.git_log.reload()
        self.set_interval(POLL_SECONDS, self.poll)

    @property
    def panes(self) -> list[MemoryFilePane]:
        return list(self.query(MemoryFilePane))

    @property
    def gate_log(self) -> GateLog:
        return self.query_one(GateLog)

    @property
    def git_log(self) -> GitLog:
        return self.query_one(GitLog)

    async def poll(self) -> None:
        for pane in self.panes:
            await pane.reload()

    async def memory_written(self, path: str) -> None:
        """A memory file was written: show it (re-read, and bring its tab forward) and the log."""
        written = Path(path)
        if not written.is_absolute():
            written = self.workspace / written
        for pane in self.panes:
            if pane.shows(written):
                await pane.reload(force=True)
                tab = pane.parent
                if isinstance(tab, TabPane) and tab.id:
                    self.query_one("#memory-tabs", TabbedContent).active = tab.id
        await self.git_log.reload()

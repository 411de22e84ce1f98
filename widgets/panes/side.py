"""The side column: the memory files on top, the gate log and the git log below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.lazy import Lazy
from textual.timer import Timer
from textual.widgets import TabbedContent, TabPane

from shell.events import FlushGateEvaluated
from shell.memory.paths import daily_note
from widgets.panes.gate_log import GateLog
from widgets.panes.git_log import GitLog, GitLogSource
from widgets.panes.memory import MemoryFilePane
from widgets.panes.shown import OwnMemory

POLL_SECONDS = 2.0
"""How often the panes look for edits made outside Cairn (an mtime check, cheap) while the core
does not watch the files: with `Settings.watch` off, or until its watcher starts (after the
first index sync, which follows the first turn); from then on its events say so."""


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
        here: str = "",
        watched: bool = False,
        scope: str = "global",
        global_memory: Path | None = None,
        id: str | None = None,
    ) -> None:
        """`watched`: the core will watch the memory files and report edits made outside Cairn
        (a memory_written, an index_synced) once its first index sync is done; the panes poll
        until then, and for good when not."""
        super().__init__(id=id)
        self.workspace = workspace
        self.scope = scope
        """The label of the memory shown (`shell.scopes`): a write of another is not this one's."""
        self.global_memory = global_memory
        """The global memory's folder when the panes show a project's: its MEMORY.md, about the
        user and in every prompt, gets a tab of its own."""
        self.today = today
        self.git = git
        self.here = here
        """This machine, for the git log (commits from another one say where they came from)."""
        self.watched = watched
        self.poll_timer: Timer | None = None
        """The poll for outside edits; None once the core watches the files."""
        self.decisions: list[FlushGateEvaluated] = []
        """Every gate decision so far (the gate log shows them from this list)."""

    def daily_note(self) -> Path:
        return self.workspace / daily_note(self.today())

    def compose(self) -> ComposeResult:
        # Both tab groups mount just after the first frame (`Lazy`): at 80 columns they are
        # hidden anyway, and styling their ~40 widgets was a fifth of the time to that frame.
        # Each pane then loads itself; gate decisions that come before the log wait in
        # `decisions`.
        with Lazy(TabbedContent(id="memory-tabs", initial="tab-memory")):
            with TabPane("MEMORY.md", id="tab-memory"):
                yield MemoryFilePane(lambda: self.workspace / "MEMORY.md", id="pane-memory")
            with TabPane("Today", id="tab-today"):
                yield MemoryFilePane(self.daily_note, id="pane-today")
            with TabPane("DREAMS.md", id="tab-dreams"):
                yield MemoryFilePane(lambda: self.workspace / "DREAMS.md", id="pane-dreams")
            if (user := self.global_memory) is not None:
                with TabPane("Global", id="tab-global"):
                    yield MemoryFilePane(lambda: user / "MEMORY.md", id="pane-global")
        with Lazy(TabbedContent(id="activity-tabs", initial="tab-gates")):
            with TabPane("Gates", id="tab-gates"):
                yield GateLog(self.decisions, id="gate-log")
            with TabPane("Git", id="tab-git"):
                yield GitLog(self.git, here=self.here, id="git-log")

    def on_mount(self) -> None:
        self.poll_timer = self.set_interval(POLL_SECONDS, self.reread)

    @property
    def panes(self) -> list[MemoryFilePane]:
        return list(self.query(MemoryFilePane))

    def active_file(self) -> Path:
        """The memory file in view: the pane with the focus, else the memory tabs' active one
        (MEMORY.md before the tabs mount)."""
        focused = self.screen.focused
        for pane in self.panes:
            if focused is not None and pane in focused.ancestors_with_self:
                return pane.path
        tabs = next(iter(self.query("#memory-tabs").results(TabbedContent)), None)
        if tabs is not None and tabs.active_pane is not None:
            if shown := next(iter(tabs.active_pane.query(MemoryFilePane)), None):
                return shown.path
        return self.workspace / "MEMORY.md"

    @property
    def gate_log(self) -> GateLog:
        return self.query_one(GateLog)

    @property
    def git_log(self) -> GitLog:
        return self.query_one(GitLog)

    async def reread(self) -> None:
        """Re-read the files that changed on disk (an mtime check: the unchanged are not)."""
        for pane in self.panes:
            await pane.reload()

    async def index_ready(self) -> None:
        """The core's first index sync is done: if it watches the files, it does from now on,
        and the poll stops. What changed before is re-read."""
        if self.watched and self.poll_timer is not None:
            self.poll_timer.stop()
            self.poll_timer = None
        await self.reread()

    async def attach_history(self, memory: OwnMemory) -> None:
        """The agent is built (after the first frame): the memory it writes is shown, its
        history feeds the git log, and the panes re-read their files, which the build may have
        just created."""
        self.workspace, self.scope, self.git = memory.root, memory.scope, memory.git
        git = memory.git
        if log := next(iter(self.query(GitLog)), None):  # else it reads the log when it mounts
            log.source = git
            await log.reload()
        await self.reread()

    async def add_gate_decision(self, event: FlushGateEvaluated) -> None:
        self.decisions.append(event)
        if log := next(iter(self.query(GateLog)), None):
            await log.add_decision(event)

    async def show_decisions(self) -> None:
        """Show `decisions` again, whole (a resumed session's were added to it at once)."""
        if log := next(iter(self.query(GateLog)), None):
            await log.catch_up()

    async def memory_written(self, path: str, lines_added: int = 0, scope: str = "") -> None:
        """A file of the memory `scope` names (the shown one's by default) was written: show it
        (re-read, highlight the lines the write added, and bring its tab forward) and the log."""
        written = Path(path)
        if not written.is_absolute():
            user = self.global_memory if scope == "global" else None
            written = (user or self.workspace) / written
        for pane in self.panes:
            if pane.shows(written):
                await pane.show_write(lines_added)
                tab = pane.parent
                if isinstance(tab, TabPane) and tab.id:
                    self.query_one("#memory-tabs", TabbedContent).active = tab.id
        if log := next(iter(self.query(GitLog)), None):  # else it reads the log when it mounts
            await log.reload()

    async def synced(self, changed: list[str]) -> None:
        """A sync brought files in: the panes showing them re-read them (what came in
        highlighted, their tabs left as they are), and the log shows the new commits."""
        for path in changed:
            for pane in self.panes:
                if pane.shows(self.workspace / path):
                    await pane.show_write(0)
        if log := next(iter(self.query(GitLog)), None):
            await log.reload()

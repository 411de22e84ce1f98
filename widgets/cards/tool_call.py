"""An inline tool call card: name and one-line arguments, then the result; collapsible.

memory_search cards also show the search itself (query, mode, degraded reason, and a table of
hits with their scores), always visible: recall decisions are never hidden behind a click.
Project tools show their key argument in the header (a path, a pattern, a command line), MCP
tools "server: tool"; a call that asked first shows how it was decided; a command shows its
output's tail and how it ended; an edit shows its diff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Static

from shell.events import (
    ApprovalDecided,
    ApprovalRequested,
    CitationMark,
    CommandFinished,
    FileEdited,
    SearchHit,
    SearchPerformed,
    ToolCallFinished,
)
from widgets.cards.blocks import scope_mark
from widgets.cards.diff_view import DiffView
from widgets.cards.tool_parts import (
    CommandTail,
    approval_text,
    command_ending,
    key_argument,
    mcp_parts,
)
from widgets.format import duration, one_line

RESULT_PREVIEW_CHARS = 2000


def _score(value: float) -> str:
    return f"{value:.2f}" if value else "—"


def _mode(search: SearchPerformed) -> str:
    return f"{search.mode} + rerank" if search.reranker else search.mode


def _hit_scores(hit: SearchHit, reranked: bool) -> list[str]:
    scores = [_score(hit.score), _score(hit.vector_score), _score(hit.text_score)]
    if reranked:
        scores.append(_score(hit.rerank_score or 0.0))
    return scores


_MARK_ORDER: tuple[CitationMark, ...] = ("gone", "stale", "unchecked", "fresh")
_MARK_SIGNS: dict[CitationMark, str] = {
    "gone": "✗ gone",
    "stale": "⚠ stale",
    "unchecked": "? unchecked",
    "fresh": "✓ fresh",
}
_MARK_COLOURS: dict[CitationMark, str] = {
    "gone": "error",
    "stale": "warning",
    "unchecked": "muted-text",
    "fresh": "success",
}


def source_mark(hit: SearchHit, colours: Mapping[str, str]) -> Text:
    """The worst mark among the hit's citations of project files ("" without any), in the
    theme's colour for it, with how many citations it stands for when more than one."""
    if not hit.citations:
        return Text("")
    marks = [check.mark for check in hit.citations]
    worst = min(marks, key=_MARK_ORDER.index)
    shown = _MARK_SIGNS[worst] + (f" {marks.count(worst)}/{len(marks)}" if len(marks) > 1 else "")
    return Text(shown, style=colours.get(_MARK_COLOURS[worst], ""))


def hits_table(search: SearchPerformed, colours: Mapping[str, str] | None = None) -> RenderableType:
    """The hits of one search as a small table: citation, score, vector and text scores, and
    the cross-encoder's when it reranked them; with a "source" column when a hit cites project
    files, its worst mark in the theme's `colours` (error, warning, success, muted-text)."""
    if search.nothing_relevant or not search.hits:
        return Text("memory holds nothing relevant", style="italic")
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("citation", overflow="ellipsis", no_wrap=True, ratio=1)
    table.add_column("score", justify="right")
    table.add_column("vec", justify="right")
    table.add_column("text", justify="right")
    reranked = search.reranker is not None
    if reranked:
        table.add_column("rerank", justify="right")
    cites = any(hit.citations for hit in search.hits)
    if cites:
        table.add_column("source", no_wrap=True)
    for hit in search.hits:
        marks = [source_mark(hit, colours or {})] if cites else []
        table.add_row(
            Text(scope_mark(hit.scope) + hit.citation), *_hit_scores(hit, reranked), *marks
        )
    return table


class ToolCallCard(Vertical):
    """One tool call, from started to finished. Click the header to show arguments and result."""

    DEFAULT_CSS = """
    ToolCallCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: outer $tool-card-border;
        background: $surface;
        & > .tool-call--header { height: auto; }
        & > .tool-call--search { height: auto; display: none; }
        & > .tool-call--approval { height: auto; display: none; color: $muted-text; }
        &.-approval > .tool-call--approval { display: block; }
        &.-waiting > .tool-call--approval { color: $warning; text-style: bold; }
        &.-denied > .tool-call--approval { color: $error; }
        & > .tool-call--diff { margin: 0 0 0 1; }
        & > .tool-call--details { height: auto; display: none; color: $muted-text; }
        &.-search { border-left: outer $search-card-border; }
        &.-search > .tool-call--search { display: block; }
        &.-error { border-left: outer $tool-card-error-border; }
        &.-expanded > .tool-call--details { display: block; }
    }
    """

    expanded: var[bool] = var(False, toggle_class="-expanded")
    """Whether the full arguments and result are shown."""

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        from_text: bool = False,
        by_cairn: bool = False,
    ) -> None:
        super().__init__(classes="-search" if name == "memory_search" else "")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.from_text = from_text
        """The model wrote this call in its text; Cairn read it as a call."""
        self.by_cairn = by_cairn
        """Cairn made this call for the model (`shell.loop.assist`)."""
        self.finished: ToolCallFinished | None = None
        self.stopped = False
        """The turn was cancelled before this call began: it never ran."""
        self.interrupted = False
        """Cairn was closed while the call ran: it never reported an end (a resumed past)."""
        self.search: SearchPerformed | None = None
        self.approval: ApprovalRequested | None = None
        self.decision: ApprovalDecided | None = None
        self.edit: FileEdited | None = None
        self.command = CommandTail()

    def compose(self) -> ComposeResult:
        yield Static(self._header_view(), classes="tool-call--header")
        # All of it as it stands: a resumed past's card is whole before it mounts (`is_mounted`
        # is still False in on_mount, so its refresh would not reach these).
        yield Static(self._approval_line(), classes="tool-call--approval")
        yield Static(self._search_view() if self.search else "", classes="tool-call--search")
        if self.edit is not None:  # edited before it mounted (a resumed past)
            yield DiffView(self.edit.diff, classes="tool-call--diff")
        yield self.command
        yield Static(self._details(), classes="tool-call--details")

    def _title(self) -> Text:
        """The name and what the call is about: "run_command $ pytest -q", "time: now …"."""
        if (mcp := mcp_parts(self.tool_name)) is not None:
            text = Text.assemble((f"{mcp[0]}: {mcp[1]}", "bold"), " ")
            text.append(one_line(self.arguments, 60), style="dim")
            return text
        text = Text.assemble((self.tool_name, "bold"), " ")
        if (key := key_argument(self.tool_name, self.arguments)) is not None:
            text.append(key)
        else:
            text.append(one_line(self.arguments, 60), style="dim")
        return text

    def _header(self) -> Text:
        arrow = "▾" if self.expanded else "▸"
        text = Text.assemble((f"{arrow} ", "dim"), self._title())
        if self.from_text:
            text.append(" · from text", style="dim italic")
        if self.by_cairn:
            text.append(" · by Cairn", style="dim italic")
        if self.stopped:
            text.append("  ■ stopped (not run)", style="italic")
        elif self.finished is None and self.interrupted:
            text.append("  ⚠ interrupted (Cairn closed before it ended)", style="italic")
        elif self.finished is None and self.approval is not None and self.decision is None:
            text.append("  ⏸ waiting for approval…", style="bold")
        elif self.finished is None:
            text.append("  … running")
        elif self.command.ending is not None and not self.finished.error:
            text.append(f"  {'✓' if self.command.ending.exit_code == 0 else '✗'} ")
            text.append(command_ending(self.command.ending).split(" · whole output")[0])
        elif self.finished.error:
            text.append(f"  ✗ {one_line(self.finished.error, 60)}", style="bold")
        elif self.finished.error:
            text.append(f"  ✗ {one_line(self.finished.error, 60)}", style="bold")
        else:
            text.append(f"  ✓ {duration(self.finished.duration_ms)}")
        return text

    def _header_view(self) -> Table:
        """The header on one line at any width: the status and timing in a fixed right-hand
        part, the name and arguments ellipsized to the width that remains."""
        header = self._header()
        # Arguments are one_line()d (no double spaces): the first "  " starts the status.
        cut = header.plain.find("  ")
        left, right = (header, Text()) if cut < 0 else header.divide([cut])
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(no_wrap=True, overflow="ellipsis", justify="right", max_width=40)
        grid.add_row(left, right)
        return grid

    def _details(self) -> Text:
        text = Text()
        for key, value in self.arguments.items():
            text.append(f"{key}: ", style="bold")
            text.append(f"{value}\n")
        if self.finished is not None:
            result = self.finished.error or self.finished.result
            if len(result) > RESULT_PREVIEW_CHARS:  # not shorten(): this one also gives the length
                result = result[:RESULT_PREVIEW_CHARS] + f"… ({len(result)} chars)"
            text.append("result: ", style="bold")
            text.append(result)
        return text

    def _search_view(self) -> RenderableType:
        assert self.search is not None
        search = self.search
        heading = Text.assemble(
            ("query ", "bold"), search.query, ("  mode ", "bold"), _mode(search)
        )
        if search.time_frame:
            heading.append(f"\ntime named: {search.time_frame} (its notes rank first)")
        if search.degraded_reason:
            heading.append(f"\ndegraded: {search.degraded_reason}", style="italic")
        table = Table.grid(expand=True)
        table.add_row(heading)
        table.add_row(hits_table(search, self.app.get_css_variables()))
        return table

    def _approval_line(self) -> Text:
        if self.decision is not None:
            return Text(f"approval: {approval_text(self.decision)}")
        if self.approval is not None:
            return Text("approval: waiting for approval…")
        return Text()

    def _refresh_parts(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(".tool-call--header", Static).update(self._header_view())
        self.query_one(".tool-call--approval", Static).update(self._approval_line())
        self.query_one(".tool-call--details", Static).update(self._details())
        if self.search is not None:
            self.query_one(".tool-call--search", Static).update(self._search_view())

    def on_mount(self) -> None:
        self._refresh_parts()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.search is not None and any(hit.citations for hit in self.search.hits):
            self._refresh_parts()  # the marks' colours are the theme's, baked into the table

    def watch_expanded(self) -> None:
        self._refresh_parts()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.expanded = not self.expanded

    def finish(self, event: ToolCallFinished) -> None:
        self.finished = event
        self.set_class(bool(event.error), "-error")
        self._refresh_parts()

    def interrupt(self) -> None:
        """The call never ended: Cairn was closed while it ran (or waited for approval)."""
        self.interrupted = True
        self.remove_class("-waiting")
        self.add_class("-interrupted")
        self._refresh_parts()

    def stop(self) -> None:
        self.stopped = True
        self.add_class("-stopped")
        self._refresh_parts()

    def ask(self, event: ApprovalRequested) -> None:
        """The call waits for the user's approval."""
        self.approval = event
        self.add_class("-approval", "-waiting")
        self._refresh_parts()

    def decide(self, event: ApprovalDecided) -> None:
        self.decision = event
        self.remove_class("-waiting")
        self.add_class("-approval")
        self.set_class(not event.allowed, "-denied")
        self._refresh_parts()

    def command_output(self, text: str) -> None:
        self.command.append(text)

    def command_finished(self, event: CommandFinished) -> None:
        self.command.finish(event)
        self._refresh_parts()

    async def show_edit(self, event: FileEdited) -> None:
        """The diff an edit made, collapsed to its first lines (a click shows it all)."""
        self.edit = event
        if not self.is_mounted:
            return  # compose shows it
        diffs = self.query(DiffView)
        if diffs:
            diffs.first().set_diff(event.diff)
        else:
            await self.mount(DiffView(event.diff, classes="tool-call--diff"), before=self.command)

    def attach_search(self, event: SearchPerformed) -> None:
        self.search = event
        self.add_class("-search")
        self._refresh_parts()

    def describe(self) -> str:
        """A plain-text account of the card (for tests and replay comparisons)."""
        parts = [f"tool {self.tool_name}({one_line(self.arguments, 200)})"]
        if self.search is not None:
            parts.append(f"search {self.search.query!r} mode={_mode(self.search)}")
            if self.search.time_frame:
                parts.append(f"time named: {self.search.time_frame}")
            if self.search.degraded_reason:
                parts.append(f"degraded: {self.search.degraded_reason}")
            if self.search.nothing_relevant or not self.search.hits:
                parts.append("memory holds nothing relevant")
            for hit in self.search.hits:
                scores = _hit_scores(hit, self.search.reranker is not None)
                parts.append(f"hit {scope_mark(hit.scope)}{hit.citation} {' '.join(scores)}")
                parts += [f"  {c.mark}: {c.reason}" for c in hit.citations]
        if self.decision is not None:
            parts.append(f"approval: {approval_text(self.decision)}")
        elif self.approval is not None:
            parts.append("approval: waiting for approval…")
        if (output := self.command.describe()) and self.tool_name == "run_command":
            parts.append(output)
        if self.edit is not None:
            edit = self.edit
            created = " (created)" if edit.created else ""
            parts.append(f"edited {edit.path}{created} +{edit.added} -{edit.removed}")
            parts.append(self.edit.diff)
        if self.stopped:
            parts.append("stopped: not run")
        elif self.interrupted and self.finished is None:
            parts.append("interrupted: it never ended")
        elif self.finished is not None:
            parts.append(f"error: {self.finished.error}" if self.finished.error else "ok")
        return "\n".join(parts)

"""The review queue of dreaming: each open proposal with its sources, evidence and the change it
makes to MEMORY.md, accepted, edited, rejected or accepted all by keyboard.

The screen only shows and asks: the list and what each acceptance would change come from the
core (`AgentSource.open_proposals`), and each decision runs through the app as a core stream
(`AgentSource.decide`), so its commits and events reach the transcript, the panes and the git log
like any other write.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import WorkerError

from shell.dreaming import Decision, Preview
from shell.text import counted, shorten
from widgets.host import AgentHost


def detail(preview: Preview) -> Text:
    """Everything about one proposal: its text, why, from where, and what it changes."""
    proposal = preview.proposal
    text = Text()
    text.append(f"{proposal.id} · {proposal.kind}\n", style="bold")
    text.append(f"{proposal.text}\n\n", style="bold")
    text.append("why  ", style="dim")
    text.append(f"{proposal.reason}\n")
    if signals := proposal.signals:
        text.append("     ", style="dim")
        text.append(
            f"relevance {signals.relevance:.2f} · frequency {signals.frequency:.2f} · "
            f"diversity {signals.diversity:.2f} · recency {signals.recency:.2f} · "
            f"consolidation {signals.consolidation:.2f} · richness {signals.richness:.2f}"
            + (
                f" · +{signals.light + signals.rem:.2f} light/REM"
                if signals.light + signals.rem
                else ""
            )
            + "\n",
            style="dim",
        )
    text.append("from ", style="dim")
    text.append(
        ", ".join(s.citation + (f" ({s.date})" if s.date else "") for s in proposal.sources) + "\n"
    )
    for origin in proposal.origins:
        text.append("how  ", style="dim")
        text.append(f"{origin.summary}\n", style="" if origin.commit else "bold red")
    by = "the model" if proposal.distilled_by == "model" else "rule"
    text.append("by   ", style="dim")
    text.append(f"{by}" + (f": {proposal.fallback}" if proposal.fallback else "") + "\n\n")
    if preview.stale:
        text.append(f"stale: {preview.stale}\n", style="bold red")
        return text
    text.append("MEMORY.md\n", style="dim")
    for line in preview.diff:
        added = line.startswith("+")
        text.append(f"{'+' if added else '−'}  {line[1:]}\n", style="green" if added else "red")
    budget = preview.budget
    summary = (
        f"\n{budget.chars:,} of {budget.budget:,} characters of the prompt at a "
        f"{budget.window:,}-token window"
    )
    if budget.over:
        text.append(
            summary + ": over, its end would be cut from every prompt\n", style="bold yellow"
        )
    else:
        text.append(summary + "\n", style="dim")
    return text


class DreamReview(ModalScreen[None]):
    """The open proposals: a list, the highlighted one in full, and the keys to decide."""

    DEFAULT_CSS = """
    DreamReview {
        align: center middle;
        & > #review {
            width: 96%;
            height: 92%;
            border: round $dream-block-border;
            border-title-color: $dream-block-border;
            background: $surface;
            padding: 0 1;
        }
        & #review-list { height: auto; max-height: 8; border: none; }
        & #review-detail { height: 1fr; }
        & #review-detail > Static { height: auto; }
        & #review-edit { display: none; }
        & #review-edit.-editing { display: block; }
        & #review-note { color: $warning; height: auto; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept"),
        Binding("e", "edit", "Edit"),
        Binding("r", "reject", "Reject"),
        Binding("A", "accept_all", "Accept all"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, previews: Sequence[Preview], host: AgentHost) -> None:
        super().__init__()
        self.previews = list(previews)
        self.host = host
        self._confirm: str | None = None
        """A proposal that would outgrow MEMORY.md's budget, accepted once: again confirms."""
        self._committing = ""
        """What the decisions under way are (the note says it until the list comes back)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="review"):
            yield OptionList(id="review-list")
            with VerticalScroll(id="review-detail"):
                yield Static(id="review-text")
            yield Label("", id="review-note")
            yield Input(id="review-edit", placeholder="your wording; enter accepts, esc cancels")
        yield Footer()

    def on_mount(self) -> None:
        self._show(self.previews)

    @property
    def selected(self) -> Preview | None:
        index = self.query_one(OptionList).highlighted
        return self.previews[index] if index is not None and self.previews else None

    def _show(self, previews: Sequence[Preview], keep: str | None = None) -> None:
        self.previews = list(previews)
        box = self.query_one("#review", Vertical)
        box.border_title = f"dreaming proposes · {counted(len(previews), 'open proposal')}"
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            Option(
                f"{p.proposal.id}  {p.proposal.kind:<6} {shorten(p.proposal.text, 200)}",
                id=p.proposal.id,
            )
            for p in previews
        )
        ids = [p.proposal.id for p in previews]
        if ids:
            options.highlighted = ids.index(keep) if keep in ids else 0
        self._describe()
        options.focus()

    def _describe(self) -> None:
        preview = self.selected
        body = detail(preview) if preview else Text("Nothing waits for review.")
        self.query_one("#review-text", Static).update(body)
        self._note(self._committing)

    def _note(self, text: str) -> None:
        self.query_one("#review-note", Label).update(text)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self) -> None:
        self._confirm = None
        self._describe()

    # --- decisions -----------------------------------------------------------------------------

    def action_accept(self) -> None:
        preview = self.selected
        if preview is None or not self._idle():
            return
        if preview.budget.over and self._confirm != preview.proposal.id:
            self._confirm = preview.proposal.id
            self._note(
                f"MEMORY.md would outgrow its share of the prompt "
                f"({preview.budget.chars:,} of {preview.budget.budget:,}): press a again to "
                "accept anyway"
            )
            return
        self._decide([Decision("accept", preview.proposal.id, over_budget=preview.budget.over)])

    def action_reject(self) -> None:
        if (preview := self.selected) is not None and self._idle():
            self._decide([Decision("reject", preview.proposal.id)])

    def action_accept_all(self) -> None:
        if not self.previews or not self._idle():
            return
        fitting = [p for p in self.previews if not p.budget.over and not p.stale]
        if len(fitting) < len(self.previews):
            self._note("proposals that would outgrow MEMORY.md or are stale were left open")
        self._decide([Decision("accept", p.proposal.id) for p in fitting])

    def action_edit(self) -> None:
        if (preview := self.selected) is None or not self._idle():
            return
        editor = self.query_one("#review-edit", Input)
        editor.value = preview.proposal.text
        editor.add_class("-editing")
        editor.focus()

    @on(Input.Submitted, "#review-edit")
    def _edited(self, event: Input.Submitted) -> None:
        preview = self.selected
        self._stop_editing()
        if preview is not None and event.value.strip() and self._idle():
            self._decide(
                [Decision("accept", preview.proposal.id, event.value, preview.budget.over)]
            )

    def action_close(self) -> None:
        if self.query_one("#review-edit", Input).has_class("-editing"):
            self._stop_editing()
        else:
            self.dismiss()

    def _stop_editing(self) -> None:
        self.query_one("#review-edit", Input).remove_class("-editing")
        self.query_one(OptionList).focus()

    def _idle(self) -> bool:
        if self.host.busy:
            self._note("a turn is running: decide when it has ended")
            return False
        return True

    def _next_open(self, decided: set[str]) -> str | None:
        """The proposal to highlight once `decided` leave the list: the one after the
        highlighted, else the one before."""
        ids = [p.proposal.id for p in self.previews]
        at = ids.index(self.selected.proposal.id) if self.selected else 0
        after = [i for i in ids[at:] if i not in decided]
        before = [i for i in ids[:at] if i not in decided]
        rest = after or before[-1:]
        return rest[0] if rest else None

    @work(exclusive=True, group="review")
    async def _decide(self, decisions: list[Decision]) -> None:
        """Each decision through the app (its events reach the transcript, panes and git log),
        then the list again. The decided leave the list at once, and the note says what is
        being committed; the list the core gives after is the truth (a stale one comes back)."""
        decided = {decision.proposal_id for decision in decisions}
        keep = self._next_open(decided)
        verbs = {"accept": "accepting", "reject": "rejecting"}
        done = "; ".join(f"{verbs[d.action]} {d.proposal_id}" for d in decisions)
        self._committing = f"{done} — committing…"
        self._show([p for p in self.previews if p.proposal.id not in decided], keep)
        for decision in decisions:
            worker = self.host.run_events(functools.partial(self.host.agent.decide, decision))
            with contextlib.suppress(WorkerError):
                await worker.wait()
        previews = await asyncio.to_thread(self.host.agent.open_proposals)
        self._committing = ""
        if not previews:
            self.dismiss()
            return
        self._show(previews, keep)

"""The conversation: user messages, streamed answers, tool cards and memory blocks, in order."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from time import monotonic
from typing import TYPE_CHECKING, Any, TypeVar

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Offset, Region
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from shell.events import (
    ApprovalDecided,
    ApprovalRequested,
    CommandFinished,
    CommandOutput,
    FileEdited,
    SearchPerformed,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStopped,
)
from widgets.cards.blocks import NoticeLine, UserMessage
from widgets.cards.tool_call import ToolCallCard
from widgets.restyle import Restyler

if TYPE_CHECKING:
    from widgets.cards.reply import AssistantReply

B = TypeVar("B", bound=Widget)

STREAM_INTERVAL_S = 1 / 20
"""Deltas that come closer together than this are written to the answer together: each write
re-lays the transcript out, so a fast model (hundreds of tokens a second) would spend its time
on layouts no one sees. `bench.tui` measures it."""


class FollowMark(Static):
    """Shown while output arrives below a transcript the user scrolled up in; a click follows."""

    DEFAULT_CSS = """
    FollowMark {
        dock: bottom; display: none; width: auto; height: 1; padding: 0 1;
        background: $accent; color: $text;
    }
    """


class Transcript(VerticalScroll):
    """A scrolling column of blocks that follows the end while output arrives.

    Following: new output scrolls into view unless the user has scrolled up (wheel, scrollbar,
    PageUp); then a "new output ↓" mark shows, and ctrl+end (or a click on the mark, or scrolling
    back to the end) follows again. A child asking to be seen while the view follows (a summary
    opened) leaves the end in view.

    Streaming: the first text delta of a model call mounts an `AssistantReply`; later deltas
    are appended to it; a tool call, the final message, a retry or the end of the turn closes it.
    """

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    Transcript.-unseen > FollowMark { display: block; }
    """

    restyle_lazily = True
    """A theme switch restyles the blocks in view first, the rest between frames."""
    following: var[bool] = var(True)
    """New output scrolls into view; false once the user scrolled up, until back at the end."""
    unseen: var[bool] = var(False, toggle_class="-unseen")
    """Output arrived below the view while not following: the mark shows."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=False)
        self._reply: AssistantReply | None = None
        """The answer streaming now."""
        self._held: list[str] = []
        """Deltas not yet written to the answer (fewer than `STREAM_INTERVAL_S` ago)."""
        self._written_at = 0.0
        self._cards: dict[str, ToolCallCard] = {}
        self._echoed: list[str] = []
        self._pending: list[Widget] | None = None
        """While `holding`: the blocks added, not mounted."""
        self._queued: list[tuple[str, NoticeLine]] = []
        """Prompts sent while a turn ran, with the notice that says they wait."""

    def compose(self) -> ComposeResult:
        yield FollowMark("new output ↓  ctrl+end")

    def on_mount(self) -> None:
        self.anchor()

    @property
    def blocks(self) -> list[Widget]:
        """What the transcript shows, top to bottom (the mark is not a block)."""
        return [child for child in self.children if not isinstance(child, FollowMark)]

    def follow(self) -> None:
        """Scroll to the end and follow new output again (ctrl+end, a click on the mark)."""
        self.following, self.unseen = True, False
        self.anchor()

    def release_anchor(self) -> None:
        """Textual calls this when the user scrolls: stop following."""
        super().release_anchor()
        self.following = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if isinstance(restyler := getattr(self.app, "restyler", None), Restyler):
            self.call_after_refresh(restyler.restyle_in_view, self)
        if not self.following and new_value >= self.max_scroll_y:
            self.following, self.unseen = True, False  # back at the end (Textual re-anchors)

    def scroll_to_region(self, region: Region, *args: Any, **kwargs: Any) -> Offset:
        if self.following:  # a summary opened or a card focused: the end stays in view
            return Offset()
        return super().scroll_to_region(region, *args, **kwargs)

    def on_click(self, event: events.Click) -> None:
        if isinstance(event.widget, FollowMark):
            self.follow()

    def _output_arrived(self) -> None:
        if self.following:
            return
        if self.scroll_y >= self.max_scroll_y:
            self.follow()  # the end was in view (a scroll that could not move)
        else:
            self.unseen = True

    async def add_block(self, block: Widget) -> None:
        if self._pending is not None:
            self._pending.append(block)
            return
        self._output_arrived()
        await self.mount(block)

    @contextmanager
    def holding(self) -> Iterator[list[Widget]]:
        """Blocks added meanwhile go to the list yielded, not on screen: a resumed session's
        past is built in one pass, then mounted at once (`widgets.resume`), not one block and
        one layout at a time."""
        pending: list[Widget] = []
        self._pending = pending
        try:
            yield pending
        finally:
            self._pending = None

    def find(self, kind: type[B]) -> list[B]:
        """The blocks of `kind`, on screen or held."""
        held = [block for block in self._pending or [] if isinstance(block, kind)]
        return [*self.query(kind), *held]

    def interrupt_open_calls(self) -> int:
        """Mark every call that started and never ended as interrupted (a resumed session's
        past, where Cairn was closed mid-call); how many were."""
        open_cards = [c for c in self._cards.values() if c.finished is None and not c.stopped]
        for card in open_cards:
            card.interrupt()
        return len(open_cards)

    async def echo_user(self, text: str) -> None:
        """Show what the user submitted now, before the core confirms it with turn_started;
        sending brings the view back to the end, to follow what it starts."""
        self.follow()
        self._echoed.append(text)
        await self.add_block(UserMessage(text))
        if queued := next((entry for entry in self._queued if entry[0] == text), None):
            self._queued.remove(queued)  # it runs now: its "queued" notice has had its day
            queued[1].remove()

    async def add_queued(self, text: str, waiting: int) -> None:
        """A prompt sent while a turn runs waits: a notice says so until it runs."""
        notice = NoticeLine(f"queued ({waiting} waiting): {text}")
        self._queued.append((text, notice))
        await self.add_block(notice)

    async def drop_queued(self) -> None:
        """The waiting prompts were dropped (esc): their notices say they were not sent."""
        for text, notice in self._queued:
            notice.say(f"dropped, not sent: {text}")
        if dropped := len(self._queued):
            self._queued.clear()
            await self.add_notice(f"dropped {dropped} queued prompt(s)")

    async def add_turn_prompt(self, prompt: str) -> None:
        """A turn started: show its prompt unless the user's own echo already shows it."""
        if prompt in self._echoed:
            self._echoed.remove(prompt)
            return
        await self.add_block(UserMessage(prompt))

    def forget_echoes(self) -> None:
        """The stream ended: echoes never confirmed by turn_started (slash commands) expire."""
        self._echoed.clear()

    async def add_notice(self, text: str, level: str = "info") -> None:
        await self.add_block(NoticeLine(text, level))

    async def append_text(self, delta: str) -> None:
        if self._reply is None:
            from widgets.cards.reply import AssistantReply  # loaded by the first answer

            self._reply = AssistantReply()
            await self.add_block(self._reply)
        self._held.append(delta)
        if monotonic() - self._written_at >= STREAM_INTERVAL_S:
            await self._write_held()
        elif len(self._held) == 1:  # the rest of a burst is written when the interval ends
            self.set_timer(STREAM_INTERVAL_S, self._write_held)

    async def _write_held(self) -> None:
        if self._reply is not None and self._held:
            text = "".join(self._held)
            self._held.clear()
            self._written_at = monotonic()
            self._reply.append(text)
            self._output_arrived()

    async def finish_text(self, full_text: str | None = None) -> None:
        """Close the open answer; a complete message that was never streamed is shown whole."""
        streamed = self._reply is not None
        await self._close_stream()
        if not streamed and full_text:
            from widgets.cards.reply import AssistantReply

            await self.add_block(AssistantReply(full_text))

    async def discard_partial(self) -> None:
        """A retry voids the text streamed so far for this model call."""
        self._held.clear()
        reply = self._reply
        await self._close_stream()
        if reply is not None and self._pending is not None and reply in self._pending:
            self._pending.remove(reply)
        elif reply is not None:
            await reply.remove()

    async def cut_partial(self) -> None:
        """A cancel cut the answer streaming: it stays in view, dimmed, since it was not kept."""
        if (reply := self._reply) is not None:
            reply.add_class("-cut")
        await self._close_stream()

    async def _close_stream(self) -> None:
        await self._write_held()
        self._reply = None

    async def start_tool(self, event: ToolCallStarted) -> None:
        await self._close_stream()
        card = ToolCallCard(
            event.call_id,
            event.name,
            event.arguments,
            from_text=event.from_text,
            by_cairn=event.by_cairn,
        )
        self._cards[event.call_id] = card
        await self.add_block(card)

    async def finish_tool(self, event: ToolCallFinished) -> None:
        card = self._cards.get(event.call_id)
        if card is None:  # a trace that starts mid-call, or a finish with no start
            card = ToolCallCard(event.call_id, event.name, {})
            self._cards[event.call_id] = card
            await self.add_block(card)
        card.finish(event)

    async def stop_tool(self, event: ToolCallStopped) -> None:
        """A call the cancel stopped before it began: its card says it did not run."""
        await self._close_stream()
        card = self._cards.get(event.call_id)
        if card is None:
            card = ToolCallCard(event.call_id, event.name, event.arguments)
            self._cards[event.call_id] = card
            await self.add_block(card)
        card.stop()

    async def _card(self, call_id: str, name: str) -> ToolCallCard:
        """The card of `call_id`, or a new one (a trace that starts mid-call)."""
        card = self._cards.get(call_id)
        if card is None:
            await self._close_stream()
            card = self._cards[call_id] = ToolCallCard(call_id, name, {})
            await self.add_block(card)
        return card

    async def ask_approval(self, event: ApprovalRequested) -> ToolCallCard:
        card = await self._card(event.call_id, event.tool)
        card.ask(event)
        self._output_arrived()
        return card

    async def decide_approval(self, event: ApprovalDecided) -> None:
        (await self._card(event.call_id, event.tool)).decide(event)

    async def command_output(self, event: CommandOutput) -> None:
        (await self._card(event.call_id, "run_command")).command_output(event.text)
        self._output_arrived()

    async def command_finished(self, event: CommandFinished) -> None:
        (await self._card(event.call_id, "run_command")).command_finished(event)

    async def file_edited(self, event: FileEdited) -> None:
        card = await self._card(event.call_id, "write_file" if event.created else "edit_file")
        await card.show_edit(event)
        self._output_arrived()

    async def show_search(self, event: SearchPerformed) -> None:
        """Attach a search to the card of the call it answered, or show it on a card of its
        own (a search outside a tool call, or a trace without the call)."""
        card = self._cards.get(event.call_id) if event.call_id else None
        if card is None or card.search is not None:
            card = ToolCallCard(
                f"search-{len(self._cards)}", "memory_search", {"query": event.query}
            )
            self._cards[card.call_id] = card
            await self.add_block(card)
        card.attach_search(event)

    async def end_turn(self) -> None:
        await self._close_stream()

    async def clear_view(self) -> None:
        """Remove every block from the view (the session itself is untouched)."""
        await self._close_stream()
        self._cards.clear()
        self._queued.clear()
        await self.remove_children(self.blocks)
        self.follow()

    def describe(self) -> str:
        """A plain-text account of every block, top to bottom."""
        return "\n".join(child.describe() for child in self.children if hasattr(child, "describe"))

"""A resumed session's earlier view, shown again with the first frame, before its start.

The past is routed through the bridge in one pass with the transcript `holding` (blocks built,
not mounted: no layout per event), then only its last screenful of blocks (from a turn's start)
is mounted, at once: mounting is what costs (a Markdown reply takes 20–200 ms), a screenful's
worth is what a person sees. Earlier blocks wait in an `EarlierTurns` line at the top, which
mounts the nearest `REVEAL_BLOCKS` of them when the view reaches it (scrolled to the top, or
clicked). The cost of a resume is then that of a screenful, whatever the session's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from textual.widget import Widget
from textual.widgets import Static

from shell.events import Event, TurnStarted
from shell.heavy_import import collector_paused
from widgets.bridge import EventBridge
from widgets.cards.blocks import NoticeLine, UserMessage
from widgets.transcript import Transcript

REVEAL_BLOCKS = 30
"""Blocks an `EarlierTurns` mounts each time the view reaches it."""
FILL_CHECK_S = 0.3
"""How long after mounting (or revealing) an `EarlierTurns` looks whether it is on screen: the
view has settled (laid out, scrolled to its end) by then."""


class Shown(Protocol):
    """A session that may have been resumed: an agent, or the plan of one (`AgentPlan`)."""

    @property
    def session_id(self) -> str: ...

    def history(self) -> list[Event]: ...


async def show_history(source: Shown, bridge: EventBridge) -> None:
    """What a resumed session showed before (`source.history()`), shown again; a view that
    cannot be shown is said (the session starts all the same). The widgets get it straight
    away, not through a stream: a trace of this run holds only its own events.

    Before the first frame, the log is read on the event loop (a bounded file, ~10 ms for 50
    turns): a hop to a thread would let that frame paint without it, and a new session's
    start would wait for the hop."""
    try:
        with collector_paused():  # thousands of objects made to last: no collection walks them
            past = source.history()
            if past:
                await restore(past, bridge, source.session_id)
    except Exception as error:
        message = f"the earlier view of this session could not be shown: {error}"
        await bridge.transcript.add_notice(message, "warning")
    finally:
        bridge.live = True


async def restore(past: Sequence[Event], bridge: EventBridge, session_id: str) -> None:
    """Show `past` (what the session showed before): its counters, gate log and side effects
    whole, its last screenful of blocks mounted, the rest held above (`EarlierTurns`)."""
    transcript = bridge.transcript
    bridge.live = False  # what the past asked was answered then: no modal
    with transcript.holding() as blocks:
        for event in past:
            await bridge.route(event)
        interrupted = bridge.end_past()
    if interrupted:
        what = ", ".join(interrupted)
        blocks.append(NoticeLine(f"interrupted when the session was closed: {what}", "warning"))
    turns = sum(isinstance(event, TurnStarted) for event in past)
    blocks.append(NoticeLine(f"— resumed session {session_id}: {turns} earlier turn(s) above —"))
    height = transcript.size.height or transcript.app.size.height  # not laid out yet: the screen's
    cut = turn_cut(blocks, screenful(blocks, height))
    shown: list[Widget] = blocks[cut:]
    if cut:
        shown.insert(0, EarlierTurns(blocks[:cut]))
    # Not awaited: the blocks are in the DOM now, so the first layout holds them; awaiting the
    # mount would let a frame paint without them, then lay it all out again (pty, 200 turns:
    # 0.58 s -> 0.50 s to the mark on screen).
    transcript.mount_all(shown)
    bridge.status.show_review(0)  # what waits for review now, the start says
    transcript.call_after_refresh(bridge.side.show_decisions)  # the transcript first


def screenful(blocks: Sequence[Widget], height: int) -> int:
    """How many of the last `blocks` fill `height` rows, counting each block's fewest rows (a
    prompt two with its margin, a reply its source's non-blank lines and a margin, any other
    block one): at least a screenful."""
    total = 0
    for count, block in enumerate(reversed(blocks), start=1):
        if isinstance(block, UserMessage):
            total += 2
        elif isinstance(source := getattr(block, "source", None), str):  # a Markdown reply
            total += 1 + sum(1 for line in source.splitlines() if line.strip())
        else:
            total += 1
        if total >= height:
            return count
    return len(blocks)


def turn_cut(blocks: Sequence[Widget], keep: int) -> int:
    """Where to cut `blocks` so that at least the last `keep` are after the cut, at the start
    of a turn (its prompt); 0 when no such cut leaves anything before it."""
    last = len(blocks) - keep
    starts = [
        i for i, block in enumerate(blocks[: max(last + 1, 0)]) if isinstance(block, UserMessage)
    ]
    return starts[-1] if starts else 0


class EarlierTurns(Static):
    """The blocks of a resumed session above its last screenful, not mounted yet: one line
    that mounts the nearest of them (a turn's start at most `REVEAL_BLOCKS` up) when the view
    reaches it, and keeps what was in view in place."""

    DEFAULT_CSS = """
    EarlierTurns {
        height: auto; margin: 0 0 1 0; padding: 0 1;
        color: $muted-text; text-style: italic;
        &:hover { color: $text; }
    }
    """

    def __init__(self, blocks: list[Widget]) -> None:
        self.held = blocks
        """The blocks not shown yet, top to bottom."""
        self._revealing = False
        super().__init__(self._label())

    def _label(self) -> str:
        turns = sum(isinstance(block, UserMessage) for block in self.held)
        return f"▲ {turns} earlier turn(s) — scroll up or click to show them"

    def on_mount(self) -> None:
        if self.parent is not None:
            self.watch(self.parent, "scroll_y", self._scrolled, init=False)
        self.set_timer(FILL_CHECK_S, self._fill)

    def _fill(self) -> None:
        """This line is on screen once the view settled (what is below it does not fill the
        view, or the user is at the top): show more."""
        if self.held and self.region.height > 0 and not self._at_the_end():
            self.call_later(self.reveal)

    def _scrolled(self, scroll_y: float) -> None:
        if scroll_y <= 0 and not self._revealing and not self._at_the_end():
            self.call_later(self.reveal)

    def _at_the_end(self) -> bool:
        """The transcript follows its end and has more than a screen below this line: a glimpse
        of it at the top is the view on its way to the end (a loaded machine shows the frame
        before the scroll), not the user scrolling up."""
        parent = self.parent
        return isinstance(parent, Transcript) and parent.following and parent.max_scroll_y > 0

    async def on_click(self) -> None:
        await self.reveal()

    async def reveal(self) -> None:
        """Mount the nearest held blocks below this line (it goes once none is left); the
        blocks that were in view stay where they were on screen."""
        parent = self.parent
        if self._revealing or not self.held or not isinstance(parent, Widget):
            return
        self._revealing = True
        cut = turn_cut(self.held, REVEAL_BLOCKS)
        chunk, self.held = self.held[cut:], self.held[:cut]
        height = parent.virtual_size.height
        await parent.mount_all(chunk, after=self)
        if self.held:
            self.update(self._label())
        else:
            await self.remove()

        def keep_place() -> None:
            grown = parent.virtual_size.height - height
            parent.scroll_to(y=parent.scroll_y + grown, animate=False, release_anchor=False)

        parent.call_after_refresh(keep_place)
        self._revealing = False
        if self.held:
            self.set_timer(FILL_CHECK_S, self._fill)

    def describe(self) -> str:
        return self._label()

"""The app's one screen: the transcript scrolls from the prompt, and what is typed reaches it.

Keys (from the prompt, or anywhere on this screen): PageUp / PageDown scroll the transcript by a
page, ctrl+home goes to its top, ctrl+end to its end and follows new output again. Home and End
stay the prompt's (start and end of the line).

Approvals: `tab` opens the one waiting in the bar above the prompt (`screens/approval.py`); with
none waiting it moves the focus as usual.

Focus: whenever this screen comes back (an overlay or the review screen closed) the prompt gets
the focus, and a printable key or a paste while the focus is on no input (a pane tab, a summary,
or nothing after F2 hid the panes) goes to the prompt, with the focus, before the app routes it
(`claim`): no key of a burst is dropped or reordered.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, TextArea

from widgets.prompt import Prompt
from widgets.screens.approval import ApprovalBar
from widgets.transcript import Transcript


class MainScreen(Screen[None], inherit_bindings=False):
    # Screen's own bindings, but for ctrl+c: that is the app's (`widgets.keys`), and a screen
    # binding of it would split the app's keys in the keys panel.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pageup", "scroll_transcript('page_up')", "Page up", show=False),
        Binding("pagedown", "scroll_transcript('page_down')", "Page down", show=False),
        Binding("ctrl+home", "scroll_transcript('top')", "Top", show=False),
        Binding("ctrl+end", "scroll_transcript('end')", "End, follow", show=False),
        Binding("tab", "answer_approval", "Answer"),
        Binding("tab", "app.focus_next", "Focus next", show=False),  # what Screen's tab does
        Binding("shift+tab", "app.focus_previous", "Focus previous", show=False),
        Binding("super+c", "screen.copy_text", "Copy selected text", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_approval":  # else the next binding of tab moves the focus
            bar = self.query_one_optional(ApprovalBar)
            return bar is not None and bool(bar.waiting)
        return True

    async def action_answer_approval(self) -> None:
        await self.query_one(ApprovalBar).open()

    def action_scroll_transcript(self, where: str) -> None:
        transcript = self.query_one(Transcript)
        match where:
            case "page_up":
                transcript.scroll_page_up(animate=False)
            case "page_down":
                transcript.scroll_page_down(animate=False)
            case "top":
                transcript.scroll_home(animate=False)
            case _:
                transcript.follow()

    def focus_prompt(self) -> Prompt | None:
        """Give the prompt the focus (None when it is not on the screen yet)."""
        prompt = self.query_one_optional(Prompt)
        if prompt is not None and prompt.display:
            self.set_focus(prompt)
        return prompt

    def on_screen_resume(self) -> None:
        self.focus_prompt()

    def claim(self, event: events.Key | events.Paste) -> None:
        """Called by the app before it hands `event` to the focused widget: a printable key or a
        paste that no input would take is the prompt's, and the focus moves to the prompt now.
        The app routes each key to the widget focused when it takes the key from its queue, so
        moving the focus here (not once the key has bubbled up to this screen) sends the rest
        of a fast burst to the prompt as well, in order. A key the focused widget binds (Enter
        on a summary) stays that widget's: nothing is sent without the prompt's own Enter."""
        if isinstance(self.focused, (Input, TextArea)):
            return
        if isinstance(event, events.Key):
            if not event.is_printable:
                return
            bound = self.active_bindings.get(event.key)
            if bound is not None and bound.node not in (self, self.app):
                return
        self.focus_prompt()

    def watch_selections(self) -> None:
        self.refresh_bindings()  # the footer says whether ctrl+c copies

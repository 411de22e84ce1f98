"""Panes that follow their newest entries, the way a log viewer does."""

from __future__ import annotations

from textual.widget import Widget


def follow_end(pane: Widget) -> None:
    """Keep `pane` at its end while its content overflows it, until the user scrolls up (back
    at the end, it follows again). Content that fits stays at the top: an anchor would push it
    to the bottom. Call it on every `Resize` (sent when the content's size changes too)."""
    overflows = pane.virtual_size.height > pane.scrollable_content_region.height
    if overflows and not pane.is_anchored:
        pane.anchor()
    elif not overflows and pane.is_anchored:
        pane.anchor(False)

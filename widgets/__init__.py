"""The Textual UI: one consumer of the core's events."""

from __future__ import annotations

import mdurl

# Textual parses Markdown in executor threads, and mdurl fills its lookup tables lazily after
# publishing them: two panes parsing their first link at once could read a half-built table
# (IndexError in mdurl.encode, seen in CI on "DREAMS.md", which linkify takes for a URL).
# Building the tables once here, before any thread exists, closes the race.
mdurl.encode("")
mdurl.decode("")
mdurl.decode("", mdurl.DECODE_DEFAULT_CHARS + "%")

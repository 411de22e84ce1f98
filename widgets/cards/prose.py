"""Markdown as Cairn shows prose (the model's answers, a compaction summary, memory files).

Textual's Markdown, with a parser that keeps what a model quotes as it was written:
- raw HTML is text (`git status`'s `<file>` is shown, not dropped as a tag Textual cannot draw);
- a line break is a line break (two lines of a file quoted stay two lines);
- only links with a scheme are links (`README.md` and `calc.py` are file names, not domains);
- underscores never make emphasis (`calc/__init__.py`, `snake_case` stay as written); `*` and
  `**` still do.

A code block re-highlighted by a theme switch keeps its size, so it asks for no layout (Textual's
asks for one: on a long transcript each is a layout of the whole screen).
"""

from __future__ import annotations

from contextlib import suppress
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import Label, Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence


def _underscores_as_text(state: StateInline, silent: bool) -> bool:
    """An inline rule ahead of emphasis: a run of `_` is plain text."""
    start = state.pos
    if state.src[start] != "_":
        return False
    end = start
    while end < state.posMax and state.src[end] == "_":
        end += 1
    if not silent:
        state.pending += state.src[start:end]
    state.pos = end
    return True


def _line_breaks_kept(state: StateCore) -> None:
    """A core rule after inline parsing: each soft line break is a hard one (Textual draws a
    soft break as a space)."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


@cache
def prose_parser() -> MarkdownIt:
    """The one parser (parsing keeps no state in it); built on first use."""
    parser = MarkdownIt("gfm-like", {"html": False})
    assert parser.linkify is not None  # "gfm-like" turns it on
    parser.linkify.set({"fuzzy_link": False, "fuzzy_email": False})
    parser.inline.ruler.before("emphasis", "underscores_as_text", _underscores_as_text)
    parser.core.ruler.after("inline", "line_breaks_kept", _line_breaks_kept)
    return parser


class Fence(MarkdownFence):
    """A code block whose re-highlighting (a theme switch) keeps its size."""

    def set_content(self, content: Content) -> None:
        same_text = content.plain == self._content.plain
        self._content = content
        with suppress(NoMatches):
            self.query_one("#code-content", Label).update(content, layout=not same_text)


BLOCKS: dict[str, type[MarkdownBlock]] = {**Markdown.BLOCKS, "fence": Fence, "code_block": Fence}


class Prose(Markdown):
    """Markdown parsed by `prose_parser`, its code blocks `Fence`s."""

    BLOCKS = BLOCKS

    def __init__(
        self,
        markdown: str | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(markdown, id=id, classes=classes, parser_factory=prose_parser)

"""Markdown as Cairn shows prose (the model's answers, a compaction summary, memory files).

One widget per document (`widgets.cards.prose_layout` lays it out as lines), parsed by a parser
that keeps what a model quotes as it was written:
- raw HTML is text (`git status`'s `<file>` is shown, not dropped as a tag);
- a line break is a line break (two lines of a file quoted stay two lines);
- only links with a scheme are links (`README.md` and `calc.py` are file names, not domains);
- underscores never make emphasis (`calc/__init__.py`, `snake_case` stay as written); `*` and
  `**` still do.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.tree import SyntaxTreeNode
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from widgets.cards.prose_layout import STYLES, Line, lay_out


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
    """A core rule after inline parsing: each soft line break is a hard one."""
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


class Prose(Widget):
    """A Markdown document drawn as one widget; `append` grows it (a streamed answer).

    Laid out once per width (a resize lays it out again); a theme switch only draws it again.
    """

    DEFAULT_CSS = """
    Prose {
        width: 1fr;
        height: auto;
        padding: 0 2;
        color: $foreground;
        text-wrap: nowrap;
        text-overflow: fold;
    }
    """

    def __init__(
        self,
        markdown: str | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._source = markdown or ""
        self._tree: SyntaxTreeNode | None = None
        self._laid_out: tuple[int, list[Line], Content] | None = None
        self._written: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        """The Markdown shown."""
        return self._source

    def update(self, markdown: str) -> None:
        """Show `markdown` instead."""
        self._source = markdown
        self._changed()

    def append(self, fragment: str) -> None:
        """Add `fragment` to the end (a streamed answer's next deltas)."""
        if fragment:
            self._source += fragment
            self._changed()

    def mark_written(self, lines: frozenset[str]) -> None:
        """Highlight each block whose non-blank source lines (stripped) are all in `lines`."""
        if lines != self._written:
            self._written = lines
            self._laid_out = None
            self.refresh()

    def _changed(self) -> None:
        self._tree = None
        self._laid_out = None
        self.refresh(layout=True)

    def lines(self, width: int) -> list[Line]:
        """The document laid out `width` cells wide."""
        return self._layout(width)[1]

    def _layout(self, width: int) -> tuple[int, list[Line], Content]:
        if width < 1:  # not laid out yet, or hidden: nothing to fold a document into
            return (width, [], Content(""))
        if self._laid_out is None or self._laid_out[0] != width:
            if self._tree is None:
                self._tree = SyntaxTreeNode(prose_parser().parse(self._source))
            lines = lay_out(self._tree, width)
            if self._written:
                lines = self._marked(lines, width)
            document = Content("\n").join(line.content for line in lines)
            self._laid_out = (width, lines, document)
        return self._laid_out

    def _marked(self, lines: list[Line], width: int) -> list[Line]:
        source = self._source.splitlines()
        marked: list[Line] = []
        for line in lines:
            if line.source is not None:
                start, end = line.source
                filled = {text.strip() for text in source[start:end] if text.strip()}
                if filled and filled <= self._written:
                    content = line.content + " " * max(width - line.content.cell_length, 0)
                    line = Line(content.stylize_before(STYLES["written"]), line.source)
            marked.append(line)
        return marked

    def notify_style_update(self) -> None:
        """The theme may have changed: the lines' styles name its variables, so draw again."""
        super().notify_style_update()
        self.refresh()

    def render(self) -> Content:
        return self._layout(self.size.width)[2]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def action_link(self, href: str) -> None:
        """A link was clicked (only links with a scheme are links)."""
        self.app.open_url(href)

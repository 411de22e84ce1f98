"""Markdown laid out as lines of styled text at a width, for `Prose`: one widget per document.

Textual's Markdown is a tree of widgets (a reply with a list and a code block is ~35 of them,
~11k objects): mounting it costs 20–200 ms, and every theme switch restyles each widget in view.
Here the whole document is lines of `Content`, styled by the theme's variables (`STYLES`), so a
theme switch resolves the styles again and nothing is laid out again (component classes would
cost a DOM node each to restyle, per widget, per switch). The look follows Textual's Markdown:
headings in the theme's Markdown colours, bullets by depth, highlighted code on a tinted
background, quotes with a bar.

Each line knows the source lines of the block it shows (a paragraph, a list item's text, a code
block, a table), so a memory pane can mark the blocks a write added.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode
from rich.cells import cell_len
from textual.content import Content, Span
from textual.highlight import highlight
from textual.style import Style

STYLES = {
    **{
        f"h{level}": f"$markdown-h{level}-color on $markdown-h{level}-background"
        f" $markdown-h{level}-text-style"
        for level in range(1, 7)
    },
    "em": "italic",
    "strong": "bold",
    "s": "strike",
    "link": "underline",
    "code-inline": "$text-warning 95% on $warning 10%",
    "code": "on $foreground 5%",
    "bullet": "$text-primary",
    "quote": "on $boost",
    "quote-bar": "$text-primary 50%",
    "rule": "$secondary",
    "th": "bold",
    "written": "on $written-line",
}
"""Each role's style, in the theme's variables (Textual's Markdown colours where it has them)."""
BULLETS = ("• ", "▪ ", "‣ ", "⭑ ", "◦ ")
"""Textual's bullets, by how deep the unordered list is."""
QUOTE_BAR = "▌ "
COLUMN_GAP = " │ "
MIN_COLUMN = 3
SourceLines = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Line:
    """One row of the laid-out document, and the source lines of the block it belongs to."""

    content: Content
    source: SourceLines | None = None


BLANK = Line(Content(""))


def lay_out(tree: SyntaxTreeNode, width: int) -> list[Line]:
    """The document as rows no wider than `width` cells."""
    width = max(width, 1)
    lines = _blocks(tree.children, width, 0, gap=True)
    return [piece for line in lines for piece in _fit(line, width)]


def _fit(line: Line, width: int) -> list[Line]:
    """`line` folded to `width` (deep nesting in a narrow pane can overrun the indents)."""
    content = line.content
    if content.cell_length <= width:
        return [line]
    if width < 2:  # `Content.fold` folds to two cells at the least
        return [Line(content[at : at + 1], line.source) for at in range(len(content))]
    return [Line(piece, line.source) for piece in content.fold(width)]


def _blocks(nodes: Sequence[SyntaxTreeNode], width: int, depth: int, *, gap: bool) -> list[Line]:
    """Blocks one after the other, a blank row between them when `gap` (but none under a
    heading: it belongs to what follows)."""
    lines: list[Line] = []
    after_heading = False
    for node in nodes:
        block = _block(node, width, depth)
        if not block:
            continue
        if lines and gap and not after_heading:
            lines.append(BLANK)
        lines.extend(block)
        after_heading = node.type == "heading"
    return lines


def _block(node: SyntaxTreeNode, width: int, depth: int) -> list[Line]:
    kind = node.type
    source = _source(node)
    if kind == "paragraph":
        return [Line(row, source) for row in _wrap(_inline_of(node), width)]
    if kind == "heading":
        return _heading(node, width, source)
    if kind in ("fence", "code_block"):
        return _code(node.content, node.info.strip().split(" ")[0], width, source)
    if kind == "hr":
        return [Line(Content.styled("─" * width, STYLES["rule"]), source)]
    if kind == "blockquote":
        return _quote(node, width, depth)
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, width, depth)
    if kind == "table":
        return _table(node, width, source)
    if kind == "inline":  # text straight under a container (a tight list's item)
        return [Line(row, source) for row in _wrap(_inline(node.token), width)]
    return []


def _source(node: SyntaxTreeNode) -> SourceLines | None:
    mapped = node.map
    return (mapped[0], mapped[1]) if mapped else None


def _wrap(content: Content, width: int) -> list[Content]:
    return content.wrap(width) if content else [Content("")]


def _heading(node: SyntaxTreeNode, width: int, source: SourceLines | None) -> list[Line]:
    style = STYLES[node.tag]
    rows = _wrap(_inline_of(node), width)
    if node.tag == "h1":  # centred on a band, as Textual draws it
        rows = [row.center(width) for row in rows]
    return [Line(row.stylize_before(style), source) for row in rows]


def _code(code: str, language: str, width: int, source: SourceLines | None) -> list[Line]:
    """Highlighted code on its background, one space either side; long lines fold."""
    inner = max(width - 2, 1)
    lines: list[Line] = []
    for row in _highlighted(code.rstrip("\n"), language).split("\n", allow_blank=True):
        for piece in row.expand_tabs(4).fold(inner) if row.cell_length > inner else [row]:
            padded = Content(" ") + piece + " " * max(width - 1 - piece.cell_length, 0)
            lines.append(Line(padded.stylize_before(STYLES["code"]), source))
    return lines


@lru_cache(maxsize=512)
def _highlighted(code: str, language: str) -> Content:
    """Pygments through Textual, by the theme's variables (a theme switch needs no new run)."""
    return highlight(code, language=language or None)


def _quote(node: SyntaxTreeNode, width: int, depth: int) -> list[Line]:
    bar = Content.styled(QUOTE_BAR, STYLES["quote-bar"])
    inner = _blocks(node.children, max(width - cell_len(QUOTE_BAR), 1), depth, gap=True)
    quoted: list[Line] = []
    for line in inner or [BLANK]:
        row = bar + line.content
        row = row + " " * max(width - row.cell_length, 0)
        quoted.append(Line(row.stylize_before(STYLES["quote"]), line.source))
    return quoted


def _list(node: SyntaxTreeNode, width: int, depth: int) -> list[Line]:
    items = node.children
    if node.type == "ordered_list":
        start = int(str(node.attrs.get("start", 1)))
        numbers = [f"{number}. " for number in range(start, start + len(items))]
        size = max(len(number) for number in numbers)
        markers = [number.rjust(size) for number in numbers]
        nested = depth
    else:
        markers = [BULLETS[depth % len(BULLETS)]] * len(items)
        nested = depth + 1
    lines: list[Line] = []
    for marker, item in zip(markers, items, strict=True):
        indent = cell_len(marker)
        loose = any(child.type == "paragraph" and not child.hidden for child in item.children)
        inner = _blocks(item.children, max(width - indent, 1), nested, gap=loose)
        first, *rest = inner or [Line(Content(""), _source(item))]
        lines.append(Line(Content.styled(marker, STYLES["bullet"]) + first.content, first.source))
        lines += [Line(Content(" " * indent) + line.content, line.source) for line in rest]
    return lines


def _table(node: SyntaxTreeNode, width: int, source: SourceLines | None) -> list[Line]:
    """Columns as wide as their widest cell, the widest narrowed until the table fits."""
    rows: list[tuple[bool, list[Content]]] = []
    for section in node.children:
        for row in section.children:
            cells = [_inline_of(cell) for cell in row.children]
            rows.append((section.type == "thead", cells))
    if not rows:
        return []
    count = max(len(cells) for _, cells in rows)
    widths = [
        max([MIN_COLUMN, *(cells[i].cell_length for _, cells in rows if i < len(cells))])
        for i in range(count)
    ]
    room = max(width - cell_len(COLUMN_GAP) * (count - 1), count)
    while sum(widths) > room and max(widths) > 1:
        widest = widths.index(max(widths))
        widths[widest] -= 1
    gap = Content.styled(COLUMN_GAP, STYLES["rule"])
    lines: list[Line] = []
    for header, cells in rows:
        wrapped = [
            _wrap(cells[i] if i < len(cells) else Content(""), widths[i]) for i in range(count)
        ]
        for y in range(max(len(column) for column in wrapped)):
            parts = [column[y] if y < len(column) else Content("") for column in wrapped]
            padded = [part.pad_right(widths[i] - part.cell_length) for i, part in enumerate(parts)]
            text = gap.join(padded).rstrip()
            lines.append(Line(text.stylize_before(STYLES["th"]) if header else text, source))
        if header:
            rule = Content("─┼─").join(Content("─" * column) for column in widths)
            lines.append(Line(rule.stylize(STYLES["rule"]), source))
    return lines


def _inline_of(node: SyntaxTreeNode) -> Content:
    """The inline text of a block node (a paragraph, a heading, a table cell)."""
    for child in node.children:
        if child.type == "inline":
            return _inline(child.token)
    return Content("")


INLINE_STYLES = {"em_open": STYLES["em"], "strong_open": STYLES["strong"], "s_open": STYLES["s"]}


def _inline(token: Token | None) -> Content:
    """Inline Markdown as styled text (Textual's rules: runs of white space are one space)."""
    if token is None or not token.children:
        return Content("")
    text: list[str] = []
    spans: list[Span] = []
    opened: list[tuple[list[Style | str], int]] = []
    position = 0

    def add(piece: str) -> None:
        nonlocal position
        text.append(piece)
        position += len(piece)

    def close() -> None:
        if opened:
            styles, start = opened.pop()
            spans.extend(Span(start, position, style) for style in styles)

    for child in token.children:
        kind = child.type
        if kind == "text":
            add(re.sub(r"\s+", " ", child.content))
        elif kind in ("hardbreak", "softbreak"):
            add("\n" if kind == "hardbreak" else " ")
        elif kind == "code_inline":
            start = position
            add(child.content)
            spans.append(Span(start, position, STYLES["code-inline"]))
        elif kind in INLINE_STYLES:
            opened.append(([INLINE_STYLES[kind]], position))
        elif kind == "link_open":
            href = str(child.attrs.get("href", ""))
            click = Style.from_meta({"@click": f"link({href!r})"})
            opened.append(([STYLES["link"], click], position))
        elif kind == "image":
            add(f"🖼  ({child.content})" if child.content else "🖼 ")
        elif kind.endswith("_close"):
            close()
    while opened:
        close()
    return Content("".join(text), spans=spans)

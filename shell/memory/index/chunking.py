"""Markdown chunking along the document's structure, counted in real tokens.

A file is read as Markdown blocks: a heading, a list item (with its continuation lines), a
paragraph, a fenced code block. Each block is one unit of recall, so a bullet is matched on its
own and never averaged with unrelated neighbours (the fault of fixed-size windows: six facts in
one 220-token chunk each scored as their average). A block longer than `max_tokens` is split at
line boundaries; a line longer than that is cut into segments that keep its line number.

Each unit also carries the tail of the unit before it as `context`. The keyword leg searches
`context + text`, so a dialogue turn like "Yes, it was yesterday" is still found by the words of
the turn it answers; the vector is made from the unit's own text. The context a hit is *shown*
with is built at search time (see `shell.memory.search.windows`). Line numbers are 1-based.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shell.text.tokens import count_tokens

TokenCounter = Callable[[str], int]

UNIT_TOKENS, CONTEXT_TOKENS = 120, 100
"""A unit holds at most 120 tiktoken tokens (a long paragraph becomes several units); the
keyword context is at most the last 100 tokens of the previous unit. Together they stay under the
256 word pieces all-MiniLM-L6-v2 reads."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One unit of recall: a block (or part of one) of a memory file.

    Attributes:
        id: Stable id, `"{path}:{start_line}:{end_line}:{hash[:12]}"`.
        path: Workspace-relative POSIX path, e.g. `memory/2026-11-30.md`.
        start_line: First line, 1-based.
        end_line: Last line, inclusive.
        text: The unit's lines joined with "\\n".
        hash: sha256 hex of `embed_text`; the embedding cache key.
        context: The tail of the previous unit of the file ("" for the first).
        tokens: Tokens of `text`, one extra per line for its newline.
        heading: The nearest heading above the unit ("" when none, or the unit is one).
        follows: How alike the unit is to the one before it in its file: the cosine of their
            vectors, their heading's share left out (`shell.memory.index.coherence`); 0 for the
            first unit and until the writer knows the vectors.
    """

    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    hash: str
    context: str = ""
    tokens: int = 0
    heading: str = ""
    follows: float = 0.0

    @property
    def embed_text(self) -> str:
        """What the vector is made from: the unit under its heading, so a paragraph keeps the
        topic its section names ("# Deploy procedure" over "merge to main, then …")."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text

    @property
    def search_text(self) -> str:
        """What the keyword leg matches: the context, then the unit."""
        return f"{self.context}\n{self.text}" if self.context else self.text


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_chunk(
    path: str,
    start_line: int,
    end_line: int,
    text: str,
    context: str = "",
    tokens: int = 0,
    heading: str = "",
) -> Chunk:
    """Build a Chunk with its hash and stable id."""
    digest = text_hash(f"{heading}\n{text}" if heading else text)
    return Chunk(
        f"{path}:{start_line}:{end_line}:{digest[:12]}",
        path,
        start_line,
        end_line,
        text,
        digest,
        context,
        tokens,
        heading,
    )


def _cut(line: str, width: int) -> list[str]:
    """Cut into pieces of at most `width` chars, preferring a space near each piece's end."""
    pieces: list[str] = []
    start = 0
    while start < len(line):
        end = min(len(line), start + width)
        if end < len(line):
            space = line.rfind(" ", start + width * 4 // 5, end)
            if space > start:
                end = space + 1
        pieces.append(line[start:end])
        start = end
    return pieces


def _split_long_line(line: str, limit: int, count: TokenCounter) -> list[tuple[str, int]]:
    # Cut by characters at the text's own chars-per-token ratio (slicing tokens and decoding
    # could break multi-byte characters), then re-cut any piece the estimate got wrong.
    # Returns (piece, tokens) pairs, every piece within `limit` tokens.
    result: list[tuple[str, int]] = []
    pending = [(line, count(line))]
    while pending:
        piece, tokens = pending.pop()
        if tokens <= limit or len(piece) <= 1:
            result.append((piece, tokens))
            continue
        width = max(1, min(len(piece) - 1, int(len(piece) * limit / tokens * 0.9)))
        pending.extend(reversed([(p, count(p)) for p in _cut(piece, width)]))
    return result


Line = tuple[int, str]  # (1-based number, text)


def heading_text(line: str) -> str:
    """A heading line as the units under it record it (`Chunk.heading`)."""
    return line.strip()[:200]


def is_heading(text: str) -> bool:
    """True when `text` is a Markdown ATX heading line ("# Title" to "###### Title")."""
    return _HEADING.match(text) is not None


def _lines(content: str) -> Iterator[str]:
    """The file's lines, one at a time (a huge file is never split into one list)."""
    start = 0
    while start < len(content):
        end = content.find("\n", start)
        if end < 0:
            end = len(content)
        yield content[start:end]
        start = end + 1


def markdown_blocks(content: str) -> Iterator[list[Line]]:
    """The file's blocks in order: headings, list items, paragraphs, fenced code.

    Blank lines separate blocks and belong to none; a line that is not a heading, item or fence
    continues the block before it (a wrapped paragraph or an item's continuation). Blocks are
    made as they are read, so a caller that stops early reads only the head of the file.
    """
    current: list[Line] = []
    fence: str | None = None
    for number, line in enumerate(_lines(content), start=1):
        opener = _FENCE.match(line)
        if fence is not None:
            current.append((number, line))
            if opener and opener.group(1) == fence:
                fence = None
                yield current
                current = []
        elif opener:
            if current:
                yield current
            current = [(number, line)]
            fence = opener.group(1)
        elif not line.strip():
            if current:
                yield current
            current = []
        elif _HEADING.match(line):
            if current:
                yield current
            current = []
            yield [(number, line)]
        elif _ITEM.match(line):
            if current:
                yield current
            current = [(number, line)]
        else:
            current.append((number, line))
    if current:
        yield current


def _units(block: list[Line], max_tokens: int, count: TokenCounter) -> list[list[tuple[Line, int]]]:
    """A block as units of at most `max_tokens`, each line costing its tokens plus one."""
    units: list[list[tuple[Line, int]]] = []
    current: list[tuple[Line, int]] = []
    used = 0
    for number, line in block:
        tokens = count(line) if line else 0
        if tokens + 1 > max_tokens:
            segments = [(p, n + 1) for p, n in _split_long_line(line, max_tokens - 1, count)]
        else:
            segments = [(line, tokens + 1)]
        for segment, size in segments:
            if current and used + size > max_tokens:
                units.append(current)
                current, used = [], 0
            current.append(((number, segment), size))
            used += size
    if current:
        units.append(current)
    return units


def _tail(units: list[tuple[Line, int]], budget: int) -> str:
    """The last lines of a unit that fit in `budget` tokens (at least part of the last one)."""
    kept: list[str] = []
    used = 0
    for (_, line), size in reversed(units):
        if used + size > budget:
            if not kept:
                kept.append(line[-budget * 3 :])
            break
        kept.append(line)
        used += size
    return "\n".join(reversed(kept))


def chunk_markdown(
    path: str,
    content: str,
    *,
    max_tokens: int = UNIT_TOKENS,
    context_tokens: int = CONTEXT_TOKENS,
    count: TokenCounter = count_tokens,
    limit: int | None = None,
) -> list[Chunk]:
    """Split a file's text into units along its Markdown structure.

    Args:
        path: Workspace-relative path, recorded in each chunk.
        content: The file's text.
        max_tokens: Upper bound on a unit's tokens (each line counts one extra for its newline).
        context_tokens: Tokens of the previous unit kept as the next unit's keyword context.
        count: Token counter; tiktoken's o200k by default.
        limit: Most units to make: the file is read no further than the last of them.

    Returns:
        The units in file order; whitespace-only units are dropped. An empty file gives none.
    """
    max_tokens = max(8, max_tokens)
    chunks: list[Chunk] = []
    previous: list[tuple[Line, int]] = []
    heading = ""
    for block in markdown_blocks(content):
        heading_block = len(block) == 1 and is_heading(block[0][1])
        for unit in _units(block, max_tokens, count):
            text = "\n".join(line for (_, line), _ in unit)
            if not text.strip():
                continue
            context = _tail(previous, context_tokens) if previous and context_tokens > 0 else ""
            tokens = sum(size for _, size in unit)
            first, last = unit[0][0][0], unit[-1][0][0]
            under = "" if heading_block else heading
            chunks.append(make_chunk(path, first, last, text, context, tokens, under))
            if len(chunks) == limit:
                return chunks
            previous = unit
        if heading_block:
            heading = heading_text(block[0][1])
    return chunks

"""Line-based Markdown chunking with overlap (OpenClaw's `chunkMarkdown`, counting real tokens).

Lines accumulate into a chunk until the next line would pass `max_tokens`; the chunk is then
emitted and its trailing lines, up to `overlap_tokens`, start the next one. A line longer than
`max_tokens` is cut into segments that keep its line number. Line numbers are 1-based.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from shell.context import count_tokens

TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of lines of one memory file.

    Attributes:
        id: Stable id, `"{path}:{start_line}:{end_line}:{hash[:12]}"`.
        path: Workspace-relative POSIX path, e.g. `memory/2026-11-30.md`.
        start_line: First line, 1-based.
        end_line: Last line, inclusive.
        text: The lines joined with "\\n".
        hash: sha256 hex of `text`; the embedding cache key.
    """

    id: str
    path: str
    start_line: int
    end_line: int
    text: str
    hash: str


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_chunk(path: str, start_line: int, end_line: int, text: str) -> Chunk:
    """Build a Chunk with its hash and stable id."""
    digest = text_hash(text)
    return Chunk(
        f"{path}:{start_line}:{end_line}:{digest[:12]}", path, start_line, end_line, text, digest
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


CHUNK_TOKENS, OVERLAP_TOKENS = 220, 44
"""all-MiniLM-L6-v2 reads only 256 of its own tokens. OpenClaw's 400-token chunks lose ~40% of
their text to that truncation before the vector is made; 220 tiktoken tokens (~235 BERT tokens)
lose none. The overlap keeps OpenClaw's one-fifth."""


def chunk_markdown(
    path: str,
    content: str,
    *,
    max_tokens: int = CHUNK_TOKENS,
    overlap_tokens: int = OVERLAP_TOKENS,
    count: TokenCounter = count_tokens,
) -> list[Chunk]:
    """Split a file's text into overlapping line-based chunks.

    Args:
        path: Workspace-relative path, recorded in each chunk.
        content: The file's text.
        max_tokens: Upper bound on a chunk's tokens (each line counts one extra for its newline).
        overlap_tokens: Tokens of trailing lines carried into the next chunk (at most half of
            `max_tokens`).
        count: Token counter; tiktoken's o200k by default.

    Returns:
        The chunks in file order; chunks holding only whitespace are dropped. An empty file
        gives no chunks.
    """
    if not content:
        return []
    max_tokens = max(8, max_tokens)
    overlap_budget = max(0, min(overlap_tokens, max_tokens // 2))
    chunks: list[Chunk] = []
    current: list[tuple[int, str, int]] = []  # (line number, segment, tokens incl. newline)
    current_tokens = 0

    def flush() -> None:
        text = "\n".join(segment for _, segment, _ in current)
        if text.strip():
            chunks.append(make_chunk(path, current[0][0], current[-1][0], text))

    def carry_overlap() -> None:
        nonlocal current, current_tokens
        kept: list[tuple[int, str, int]] = []
        budget = 0
        for entry in reversed(current):
            if budget + entry[2] > overlap_budget:
                break
            kept.append(entry)
            budget += entry[2]
        current = kept[::-1]
        current_tokens = budget

    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()  # the empty "line" after the final newline is not a line of the file
    for number, line in enumerate(lines, start=1):
        tokens = count(line) if line else 0
        if tokens + 1 > max_tokens:
            segments = [(p, n + 1) for p, n in _split_long_line(line, max_tokens - 1, count)]
        else:
            segments = [(line, tokens + 1)]
        for segment, size in segments:
            if current and current_tokens + size > max_tokens:
                flush()
                carry_overlap()
                if current_tokens + size > max_tokens:
                    current, current_tokens = [], 0  # the overlap alone would repeat a chunk
            current.append((number, segment, size))
            current_tokens += size
    if current:
        flush()
    return chunks

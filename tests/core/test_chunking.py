"""Line-based chunking with overlap, counted in real tokens."""

from __future__ import annotations

import hashlib
from itertools import pairwise

from shell.context import count_tokens
from shell.memory.chunking import chunk_markdown, make_chunk


def _numbered(lines: int) -> str:
    return "".join(f"line {i} says something about topic {i % 7}\n" for i in range(1, lines + 1))


def test_small_file_is_one_chunk_with_1_based_lines() -> None:
    chunks = chunk_markdown("MEMORY.md", "# Memory\n\n- first fact\n- second fact\n")

    assert len(chunks) == 1
    chunk = chunks[0]
    assert (chunk.start_line, chunk.end_line) == (1, 4)
    assert chunk.text == "# Memory\n\n- first fact\n- second fact"
    assert chunk.path == "MEMORY.md"


def test_chunks_respect_the_budget_overlap_and_cover_every_line() -> None:
    content = _numbered(60)
    chunks = chunk_markdown("memory/2026-11-30.md", content, max_tokens=40, overlap_tokens=12)
    lines = content.split("\n")

    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        tokens = sum(count_tokens(line) + 1 for line in chunk.text.split("\n"))
        assert tokens <= 40
    for previous, following in pairwise(chunks):
        assert following.start_line <= previous.end_line  # overlapping lines
        assert following.start_line > previous.start_line  # but always moving forward
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 60


def test_no_overlap_gives_adjacent_chunks() -> None:
    chunks = chunk_markdown("m.md", _numbered(30), max_tokens=40, overlap_tokens=0)

    for previous, following in pairwise(chunks):
        assert following.start_line == previous.end_line + 1


def test_long_line_is_split_into_segments_on_the_same_line() -> None:
    long_line = " ".join(f"word{i}" for i in range(800))
    content = f"intro\n{long_line}\noutro\n"
    chunks = chunk_markdown("m.md", content, max_tokens=50, overlap_tokens=0)

    assert len([c for c in chunks if c.start_line == c.end_line == 2]) >= 10
    # Without overlap, the chunks hold every character exactly once, in order.
    assert "".join(c.text.replace("\n", "") for c in chunks) == content.replace("\n", "")
    assert all(count_tokens(c.text) <= 50 for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 3


def test_long_line_of_multibyte_text_stays_intact() -> None:
    long_line = "記憶は石塚のように積み上がる。" * 200
    chunks = chunk_markdown("m.md", long_line, max_tokens=64, overlap_tokens=0)

    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == long_line


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunk_markdown("m.md", "") == []
    assert chunk_markdown("m.md", "\n\n   \n") == []


def test_hash_and_id_are_stable() -> None:
    first = chunk_markdown("memory/a.md", _numbered(40), max_tokens=60, overlap_tokens=10)
    second = chunk_markdown("memory/a.md", _numbered(40), max_tokens=60, overlap_tokens=10)
    chunk = first[1]

    assert first == second
    assert chunk.hash == hashlib.sha256(chunk.text.encode()).hexdigest()
    assert chunk.id == f"memory/a.md:{chunk.start_line}:{chunk.end_line}:{chunk.hash[:12]}"
    assert make_chunk("memory/a.md", chunk.start_line, chunk.end_line, chunk.text) == chunk

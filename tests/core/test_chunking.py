"""Chunking along the Markdown structure, counted in real tokens."""

from __future__ import annotations

import hashlib
from itertools import pairwise

from shell.memory.index.chunking import chunk_markdown, make_chunk
from shell.text.tokens import count_tokens

FACTS = [
    "My sister lives in Tromsø.",
    "The API gateway runs on Envoy.",
    "Backups go to the s3 bucket cairn-backups-eu.",
    "I drink green tea every morning.",
    "The design review for project Heron is on 9 December.",
    "I'm learning Rust this winter.",
]


def _paragraph(lines: int) -> str:
    return "".join(f"line {i} says something about topic {i % 7}\n" for i in range(1, lines + 1))


def test_each_bullet_is_its_own_unit_under_its_heading() -> None:
    content = "# Facts\n\n" + "".join(f"- {fact}\n" for fact in FACTS)
    chunks = chunk_markdown("memory/2026-12-01.md", content)

    assert [c.text for c in chunks] == ["# Facts"] + [f"- {fact}" for fact in FACTS]
    assert [(c.start_line, c.end_line) for c in chunks[1:]] == [(n, n) for n in range(3, 9)]
    assert chunks[0].heading == "" and all(c.heading == "# Facts" for c in chunks[1:])
    assert chunks[2].embed_text == "# Facts\n- The API gateway runs on Envoy."
    # the keyword leg also sees the unit before, the vector only the unit and its heading
    assert chunks[2].context == "- My sister lives in Tromsø."
    assert chunks[2].search_text == "- My sister lives in Tromsø.\n- The API gateway runs on Envoy."


def test_blocks_follow_markdown_items_paragraphs_and_fences() -> None:
    content = (
        "- an item\n  that wraps\n- next item\nA paragraph\nthat wraps.\n\n"
        "```\ncode\n\n# not a heading\n```\nafter\n"
    )
    chunks = chunk_markdown("m.md", content)

    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 5), (7, 11), (12, 12)]
    assert chunks[2].text == "```\ncode\n\n# not a heading\n```"
    assert all(c.heading == "" for c in chunks)


def test_a_long_paragraph_is_split_at_lines_within_the_budget() -> None:
    content = _paragraph(60)
    chunks = chunk_markdown("memory/2026-11-30.md", content, max_tokens=40)
    lines = content.split("\n")

    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.tokens == sum(count_tokens(line) + 1 for line in chunk.text.split("\n"))
        assert chunk.tokens <= 40
    for previous, following in pairwise(chunks):
        assert following.start_line == previous.end_line + 1  # every line once, in order
        assert following.context and previous.text.endswith(following.context)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 60


def test_long_line_is_split_into_segments_on_the_same_line() -> None:
    long_line = " ".join(f"word{i}" for i in range(800))
    content = f"intro\n\n{long_line}\n\noutro\n"
    chunks = chunk_markdown("m.md", content, max_tokens=50)

    assert len([c for c in chunks if c.start_line == c.end_line == 3]) >= 10
    assert "".join(c.text for c in chunks) == content.replace("\n", "")
    assert all(count_tokens(c.text) <= 50 for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 5


def test_long_line_of_multibyte_text_stays_intact() -> None:
    long_line = "記憶は石塚のように積み上がる。" * 200
    chunks = chunk_markdown("m.md", long_line, max_tokens=64)

    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == long_line


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunk_markdown("m.md", "") == []
    assert chunk_markdown("m.md", "\n\n   \n") == []


def test_hash_and_id_are_stable() -> None:
    content = "# Notes\n\n" + _paragraph(40)
    first = chunk_markdown("memory/a.md", content, max_tokens=60)
    second = chunk_markdown("memory/a.md", content, max_tokens=60)
    chunk = first[1]

    assert first == second
    assert chunk.hash == hashlib.sha256(chunk.embed_text.encode()).hexdigest()
    assert chunk.id == f"memory/a.md:{chunk.start_line}:{chunk.end_line}:{chunk.hash[:12]}"
    rebuilt = make_chunk(
        "memory/a.md",
        chunk.start_line,
        chunk.end_line,
        chunk.text,
        chunk.context,
        chunk.tokens,
        chunk.heading,
    )
    assert rebuilt == chunk

"""Markdown laid out as lines for the one-widget `Prose`: no row wider than the width at any
width, nothing the source says lost, code kept as written, lists indented by depth, and each
row knowing the source lines of its block."""

from __future__ import annotations

import re

import pytest
from markdown_it.tree import SyntaxTreeNode

from widgets.cards.prose import prose_parser
from widgets.cards.prose_layout import STYLES, Line, lay_out

DOCUMENT = """\
# Deploying billing

The window is **Friday 14:00**; see calc/__init__.py and `make test`.
A second line stays a line of its own.

- the build server `ci-7.internal` is green
- Priya has signed off
  - with the rollback plan attached

1. Tag the release.
2. Run the migration in a dry run first, then watch the error rate for ten minutes.

```python
def deploy(service: str) -> int:
    return   len(service)
```

> If the error rate doubles, roll back at once.

| host | role |
|---|---|
| ci-7.internal | build server |

---
"""


def rows(source: str, width: int) -> list[Line]:
    return lay_out(SyntaxTreeNode(prose_parser().parse(source)), width)


def plain(lines: list[Line]) -> list[str]:
    return [line.content.plain for line in lines]


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 13, 21, 40, 80])
def test_no_row_is_wider_than_the_width_and_no_word_is_lost(width: int) -> None:
    assert all(line.content.cell_length <= width for line in rows(DOCUMENT, width))
    prose = DOCUMENT.split("| host")[0].replace("```python", "```")  # a table's cells interleave
    shown = re.sub(r"[\s▌]+", "", "".join(plain(rows(prose, width))))  # and the quote's bar
    for word in re.findall(r"[\w.:/()-]+", prose.replace("**", "").replace("`", "")):
        assert word in shown, (width, word)


def test_code_keeps_its_spaces_and_lists_indent_by_depth() -> None:
    text = plain(rows(DOCUMENT, 60))
    assert "     return   len(service)" in "\n".join(text)  # a space of padding, then as written
    assert "• Priya has signed off" in text
    assert "  ▪ with the rollback plan attached" in text
    assert any(row.startswith("2. Run the migration") for row in text)
    assert any(row.startswith("   in a dry run") or row.startswith("   ") for row in text)
    assert "A second line stays a line of its own." in text  # a line break is a line break
    assert "ci-7.internal │ build server" in text


def test_each_row_knows_its_block_and_the_roles_are_theme_variables() -> None:
    source = DOCUMENT.splitlines()
    for line in rows(DOCUMENT, 50):
        if line.source is None:
            assert not line.content.plain.strip()  # only the blank rows between blocks
            continue
        start, end = line.source
        block = "\n".join(source[start:end])
        words = re.findall(r"\w+", line.content.plain)
        assert not words or any(word in block for word in words)
    assert all("$" in STYLES[f"h{n}"] for n in range(1, 7))


def test_nothing_is_laid_out_into_no_width() -> None:
    assert rows("", 40) == []
    folded = plain(rows("word " * 50, 1))
    assert max(map(len, folded)) == 1 and "".join(folded) == "word" * 50

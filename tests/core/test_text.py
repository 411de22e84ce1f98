"""shell.text.shorten, the one ellipsis rule of the core and the TUI."""

from __future__ import annotations

import pytest

from shell.text import ELLIPSIS, shorten, trim_middle


def test_text_within_the_limit_is_unchanged() -> None:
    assert shorten("", 0) == ""
    assert shorten("abc", 3) == "abc"
    assert shorten("abc", 80) == "abc"


def test_longer_text_is_cut_to_exactly_the_limit_with_an_ellipsis() -> None:
    assert shorten("abcdef", 4) == "abc…"
    assert len(shorten("x" * 500, 120)) == 120
    assert shorten("abcdef", 1) == ELLIPSIS


def test_zero_limit_leaves_only_the_ellipsis() -> None:
    assert shorten("abc", 0) == ELLIPSIS


def test_cuts_mid_word_and_keeps_whitespace_as_it_is() -> None:
    assert shorten("one two\nthree", 6) == "one t…"
    assert shorten("ab  \ncd", 5) == "ab  …"


def test_a_marker_of_our_own_ends_the_cut_text_within_the_limit() -> None:
    marker = "\n...[truncated]..."
    cut = shorten("x" * 500, 100, marker)
    assert len(cut) == 100 and cut.endswith(marker) and cut.startswith("x" * 80)


@pytest.mark.parametrize("limit", [40, 100, 1_500, 20_000])
def test_the_middle_goes_and_the_head_and_tail_stay_within_the_limit(limit: int) -> None:
    text = "".join(f"line {n}\n" for n in range(5_000))
    trimmed = trim_middle(text, limit)
    assert len(trimmed) <= limit
    if limit >= 100:
        head, _, tail = trimmed.partition("\n...[")
        assert text.startswith(head) and text.endswith(tail.split("]...\n", 1)[1])
        assert len(head) > 3 * len(tail.split("]...\n", 1)[1])  # 70% head, 20% tail
        cut = len(text) - len(head) - len(tail.split("]...\n", 1)[1])
        assert f"[{cut:,} chars trimmed]" in trimmed
    assert trim_middle("short", limit) == "short"


@pytest.mark.parametrize("limit", [100, 1_500])
def test_at_lines_the_head_ends_and_the_tail_starts_at_a_line_end(limit: int) -> None:
    text = "".join(f"line {n}\n" for n in range(5_000))
    trimmed = trim_middle(text, limit, at_lines=True)
    assert len(trimmed) <= limit
    head, _, rest = trimmed.partition("\n...[")
    tail = rest.split("]...\n", 1)[1]
    assert head.endswith("\n") and text.startswith(head)
    assert tail.startswith("line ") and text.endswith("\n" + tail)
    whole_words = "no newline " * 50
    assert trim_middle(whole_words, 100, at_lines=True) == trim_middle(whole_words, 100)

"""shell.text.shorten, the one ellipsis rule of the core and the TUI."""

from __future__ import annotations

from shell.text import ELLIPSIS, shorten


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

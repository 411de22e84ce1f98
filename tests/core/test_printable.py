"""`shell.text.printable`: what a terminal is given holds nothing it would obey."""

from __future__ import annotations

import json
import time
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shell.text.printable import printable, unsafe

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"copy {ESC}]52;c;aGk={BEL}me", "copy me"),  # OSC 52: the clipboard
        (f"copy {ESC}]52;c;aGk={ST}me", "copy me"),  # ended by ST
        (f"copy {ESC}]52;c;aGk=\x9cme", "copy me"),  # ended by the 8-bit ST
        (f"{ESC}]0;owned{BEL}title", "title"),  # the window's title
        (f"{ESC}]8;;https://x.example{ST}link{ESC}]8;;{ST}", "link"),  # a hyperlink
        (f"shown {ESC}[8mhidden{ESC}[0m", "shown hidden"),  # SGR 8: concealed
        (f"{ESC}[31mred{ESC}[m", "red"),
        (f"{ESC}[2J{ESC}[H{ESC}[3;12Hmoved{ESC}[?25l", "moved"),  # erase, home, move, hide
        (f"{ESC}[1K{ESC}[2Aup", "up"),
        (f"{ESC}P1$r{ST}dcs", "dcs"),  # DCS
        (f"{ESC}_apc{ST}{ESC}^pm{ST}{ESC}Xsos{ST}ok", "ok"),  # APC, PM, SOS
        (f"{ESC}7{ESC}(B{ESC}c{ESC}=saved", "saved"),  # short sequences: save, charset, reset
        (f"lone{ESC}", "lone"),
        (f"{ESC}]0;never ended", "0;never ended"),  # an unended string: only its introducer
        (f"{ESC}{ESC}[1mbold", "bold"),
        ("bell\x07", "bell"),
        ("safe\rEVIL", "safeEVIL"),  # \r would print over the line
        ("rm -rf /\b\b\b\b\b\b\b\bls", "rm -rf /ls"),  # \b as well
        ("a\x00b\x0bc\x0cd\x7fe", "abcd\\u007fe"),
        ("crlf\r\nline", "crlf\nline"),
        ("csi\x9b2Jx", "csi\\u009b2Jx"),  # C1, shown as JSON writes it
        ("osc\x9d0;t\x9cx", "osc\\u009d0;t\\u009cx"),
        ("file\u202etxt.exe", "file\\u202etxt.exe"),  # Trojan Source: read backwards
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        (
            "ünïcødé 日本語 \u200f mark",
            "ünïcødé 日本語 \u200f mark",
        ),  # RLM is text, not an override
    ],
)
def test_each_escape_is_removed_and_the_words_stay(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert unsafe(raw) == (raw != shown)


def test_without_escape_the_c1_and_bidi_controls_are_removed() -> None:
    assert printable("csi\x9b2J file\u202etxt \x7f", escape=False) == "csi2J filetxt "


def _control(char: str) -> bool:
    return unicodedata.category(char) == "Cc" and char not in "\n\t"


BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@given(st.text())
def test_what_comes_out_holds_no_control_but_newline_and_tab(text: str) -> None:
    for escape in (True, False):
        out = printable(text, escape=escape)
        assert not any(_control(char) or char in BIDI for char in out)
        assert printable(out, escape=escape) == out


@given(st.text(st.characters(blacklist_categories=("Cc",)).filter(lambda c: c not in BIDI)))
def test_printable_text_passes_unchanged(text: str) -> None:
    assert printable(text) == text
    assert printable(text + "\n\t" + text) == text + "\n\t" + text


@given(
    st.recursive(
        st.text() | st.integers(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_a_json_line_stays_the_same_json(value: object) -> None:
    for ensure_ascii in (True, False):
        line = json.dumps(value, ensure_ascii=ensure_ascii, indent=2)
        assert json.loads(printable(line)) == value


def test_an_unended_sequence_costs_no_more_than_a_pass() -> None:
    text = (f"{ESC}]" + "x" * 50) * 20_000 + f"{ESC}P" * 100_000 + "\x9d" * 100_000
    started = time.perf_counter()
    printable(text)
    assert time.perf_counter() - started < 1.0


def test_the_headless_stream_writes_printable_text_and_flushes() -> None:
    import io

    from shell.headless.output import Printable

    class Flushed(io.StringIO):
        flushes = 0

        def flush(self) -> None:
            self.flushes += 1

    stream = Flushed()
    out = Printable(stream)
    assert out.write(f"a{ESC}]52;c;aGk={BEL}b\n") == len(f"a{ESC}]52;c;aGk={BEL}b\n")
    out.flush()
    assert (stream.getvalue(), stream.flushes) == ("ab\n", 1)

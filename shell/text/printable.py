"""Text made safe to print to a terminal: what a memory file, a tool result, an MCP server or git
says is shown, never obeyed.

A terminal obeys escape sequences wherever they come from: OSC 52 writes the clipboard, OSC 0
sets the title, SGR 8 hides text, CSI moves the cursor and erases, `\\r` and `\\b` print over a
line, and a bidi override (U+202E) makes a name read backwards (Trojan Source). `printable`
removes the ESC-introduced sequences (CSI, OSC, DCS, SOS, PM, APC and the short ones, a lone ESC
too) and the C0 controls but `\\n` and `\\t`. DEL, the C1 controls (U+0080 to U+009F, among them
the 8-bit CSI U+009B) and the bidi embeddings, overrides and isolates are written as `\\u202e`:
visible, and exactly what JSON would write, so a `--json` line passes through unchanged (JSON
escapes every C0 control, ESC included, but leaves these raw). `escape=False` removes them
instead, for a screen whose cells are already laid out (the TUI).

No library does this: `strip-ansi` on PyPI (2020) takes CSI and nothing else, and none knows the
C1 controls or bidi.
"""

from __future__ import annotations

import re

__all__ = ["printable", "unsafe"]

_SEQUENCE = re.compile(
    r"""
    \x1b
    (?:
        [P\]X^_] [^\x07\x1b\x9c]* (?: \x07 | \x1b\\ | \x9c )  # DCS, OSC, SOS, PM, APC, ended
      | \[ [0-?]* [ -/]* [@-~]                               # CSI: parameters, intermediates, end
      | [ -/]* [0-~]                                         # ESC ( B, ESC 7, an unended ESC ]
    )?                                                       # or a lone ESC
    | [\x00-\x08\x0b-\x1f]                                   # C0 but \t and \n
    """,
    re.VERBOSE,
)
"""What is removed. A string sequence without its end loses only its introducer: a terminal
would have swallowed the rest, here the rest is shown, inert."""
_SHOWN = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What is written as `\\uXXXX`: DEL, C1, and the bidi controls that reorder a run of text."""
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def unsafe(text: str) -> bool:
    """Whether `printable` would change `text`."""
    return _UNSAFE.search(text) is not None


def printable(text: str, *, escape: bool = True) -> str:
    """`text` with nothing a terminal would obey (see the module).

    Args:
        text: what is about to be printed.
        escape: write DEL, the C1 and the bidi controls as `\\uXXXX` (True), or remove them.
    """
    if not unsafe(text):
        return text
    text = _SEQUENCE.sub("", text)
    return _SHOWN.sub(_escaped if escape else "", text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"

"""`cairn` in a real terminal, its MEMORY.md holding escapes: the bytes the terminal gets (and
`cairn serve`'s xterm.js, which is sent the same) hold the words and none of the escapes."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

from bench.startup import CAIRN, terminal_environment

MEMORY = (
    "# Memory\n\n- The codeword is heron\x1b]52;c;aGk=\x07, titled\x1b]0;owned\x07,"
    " hidden\x1b[8m, csi\x9b2J, reversed\u202etxt, ringing\x07.\n"
)
OBEYED = ("\x1b]52", "\x1b]0;owned", "\x1b[8m", "\x9b", "\u202e")


def test_the_terminal_gets_the_words_of_memory_and_none_of_its_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    env = {
        **terminal_environment(ws),
        **{"COLUMNS": "120", "LINES": "30"},  # wide enough for the side panes
        **{"HOME": str(tmp_path), "CAIRN_CONFIG": str(tmp_path / "none.toml")},
        "CAIRN_SCOPES_ENABLED": "off",  # the panes show this MEMORY.md, not a project's
    }
    subprocess.run([*CAIRN, "init", str(ws)], env=env, check=True, capture_output=True)
    (ws / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    process = subprocess.Popen(
        [*CAIRN, "--demo"], env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    seen, quit_sent, deadline = b"", False, time.monotonic() + 60
    poller = select.poll()
    poller.register(master, select.POLLIN)
    try:
        while time.monotonic() < deadline:
            if poller.poll(100):
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's other end closed: the process is gone
                    break
                if not chunk:
                    break
                seen += chunk
                if not quit_sent and b"ringing" in seen:  # the end of the line: all of it drawn
                    os.write(master, b"\x11")  # ctrl+q
                    quit_sent = True
            elif process.poll() is not None:
                break
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        os.close(master)
    text = seen.decode(errors="replace")
    assert quit_sent, text[-2000:]
    assert "The codeword is heron" in text
    assert [obeyed for obeyed in OBEYED if obeyed in text] == []

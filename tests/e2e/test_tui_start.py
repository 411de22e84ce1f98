"""`cairn` opening its TUI in a terminal: the agent is built after the first frame, and the session
it resumes is found before it, so what fails in either must still end with one clear line, as
before the TUI existed."""

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


def test_a_session_that_does_not_exist_is_one_clear_line(
    tmp_path: Path,
) -> None:
    env = terminal_environment(tmp_path / "ws")
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [*CAIRN, "--demo", "--session", "no-such-session"],
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 60
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
            elif process.poll() is not None:
                break
        assert process.wait(timeout=30) == 1
    finally:
        process.kill()
        os.close(master)
    text = seen.decode(errors="replace")
    assert "cairn: error: no session 'no-such-session'" in text
    assert "Traceback" not in text

"""The one door for what Cairn keeps or prints outside memory: redacted, and private on disk.

Everything Cairn writes of its own (a session's transcript, record and view log, a trace, a kept
command output, dreaming's proposals, a commit's message) and every event a headless command
prints passes here: text and JSON-like values through `redacted`, an event through
`event_line`, both the detector's (`shell.secrets.detect`) whatever the memory files' `secrets`
policy says. A command's output, which comes in chunks, is redacted line by line as it is
spooled (`Redactor`).

Files under `.cairn/` are the user's alone: `private_folder` makes each folder from `.cairn`
down 0700, `open_private` and `write_private` make a file 0600, whatever the umask and
whatever mode an older Cairn left.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

from shell.events import BaseEvent
from shell.fsio import write_atomically
from shell.secrets import detect

__all__ = [
    "STATE_FOLDER",
    "Redactor",
    "event_line",
    "open_private",
    "private_folder",
    "redacted",
    "write_private",
]

STATE_FOLDER = ".cairn"
FOLDER_MODE = 0o700
FILE_MODE = 0o600
MAX_CARRY = 64 * 1024
"""The longest partial line `Redactor` holds back; a longer one is redacted as it stands."""
_BEGIN_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_END_KEY = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


@overload
def redacted(value: str) -> str: ...
@overload
def redacted(value: dict[str, Any]) -> dict[str, Any]: ...
@overload
def redacted(value: Any) -> Any: ...
def redacted(value: Any) -> Any:
    """`value` (text, or JSON-like: a transcript entry, a tool call's arguments) with every
    credential replaced by `[REDACTED <kind>]`; a string holding a JSON object stays JSON."""
    return detect.redact_values(value)


def event_line(event: BaseEvent) -> str:
    """`event` as one JSON line (`shell.events.from_json` reads it back), redacted: what a
    trace, a view log and a headless command's output hold."""
    return detect.redacted_json(event)


class Redactor:
    """Redacts text that comes in pieces (a command's output), line by line as each line ends:
    a partial last line waits for its end (up to `MAX_CARRY`), and a private key is cut from
    its BEGIN line to its END line whichever pieces they come in. Lines shorter than a secret
    can be (under 8 characters, as for `redacted`) pass as they are, and a line seen before is
    not scanned again (a chatty command repeats itself)."""

    def __init__(self) -> None:
        self._carry = ""
        self._in_key = False
        self._seen: dict[str, str] = {}

    def feed(self, text: str) -> str:
        """What of `text` (and of what was held back) can be written now, redacted."""
        lines = (self._carry + text).split("\n")
        self._carry = lines.pop()
        out = [self._line(line, ended=True) for line in lines]
        if len(self._carry) > MAX_CARRY:
            out.append(self._line(self._carry, ended=False))
            self._carry = ""
        return "".join(out)

    def close(self) -> str:
        """The held-back rest, redacted."""
        rest, self._carry = self._carry, ""
        return self._line(rest, ended=False) if rest else ""

    def _line(self, line: str, *, ended: bool) -> str:
        newline = "\n" if ended else ""
        if self._in_key:
            end = _END_KEY.search(line)
            if end is None:
                return ""  # inside the key: nothing of it is kept
            self._in_key = False
            line = line[end.end() :]  # its BEGIN line said "[REDACTED Private Key]"
        if begins := list(_BEGIN_KEY.finditer(line)):
            if not _END_KEY.search(line, begins[-1].end()):
                self._in_key = True
                newline = ""  # the redaction runs on to the END line
            return str(detect.redact(line)[0]) + newline
        if len(line) < 8:
            return line + newline
        if (done := self._seen.get(line)) is None:
            if len(self._seen) >= 4096:
                self._seen.clear()
            done = self._seen[line] = str(detect.redact(line)[0])
        return done + newline


def private_folder(folder: Path) -> Path:
    """`folder`, made if missing, and each folder from the `.cairn` it is in down to it, 0700
    (only `folder` itself when it is in no `.cairn`)."""
    folder.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    parts = folder.parts
    start = len(parts) - 1
    if STATE_FOLDER in parts:
        start = len(parts) - 1 - parts[::-1].index(STATE_FOLDER)
    for end in range(start, len(parts)):
        with contextlib.suppress(PermissionError):  # a folder that is not ours: left as it is
            os.chmod(Path(*parts[: end + 1]), FOLDER_MODE)
    return folder


@overload
def open_private(path: Path, how: Literal["ab", "wb"]) -> BinaryIO: ...
@overload
def open_private(path: Path, how: Literal["a"]) -> TextIO: ...
def open_private(path: Path, how: Literal["ab", "wb", "a"]) -> IO[Any]:
    """`path` opened to append ("ab", "a": text in UTF-8) or to be written from empty ("wb"),
    created 0600 and made 0600 if it was not. Its folder must exist."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
    flags |= os.O_TRUNC if how == "wb" else os.O_APPEND
    descriptor = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)
    except BaseException:
        os.close(descriptor)
        raise
    if how == "a":
        return open(descriptor, "a", encoding="utf-8")
    return open(descriptor, how)


def write_private(path: Path, data: bytes | str) -> None:
    """Replace `path` atomically (`shell.fsio.write_atomically`) with a 0600 file, its folder
    made private first."""
    private_folder(path.parent)
    write_atomically(path, data, mode=FILE_MODE)

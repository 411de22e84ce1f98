"""What a command printed, as `run_command` keeps it: spooled whole to its output file
(`shell.tools.project.outputs.Spool`, redacted there), a head and a tail in memory for the
result, and sampled to the card as `CommandOutput` events."""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable

from shell.events import Event
from shell.events.tools import CommandOutput
from shell.text import byte_size
from shell.tools.project.outputs import Spool

HEAD_BYTES = 8 * 1024
"""The start of the output the result keeps."""
TAIL_BYTES = 24 * 1024
"""The end of the output the result keeps (the end says most: the error, the summary)."""
DISK_CAP = 64 * 1024 * 1024
"""Bytes spooled to the output file; past it they are counted and dropped."""
EMIT_INTERVAL = 0.1
"""Seconds between two `CommandOutput` events of one call, at least."""
EMIT_BYTES = 4 * 1024
"""At most this much output in one event; faster output is sampled (its latest tail)."""
EMIT_BUDGET = 256 * 1024
"""After this much output shown, events come once a second: a chatty command that runs for
half an hour must not fill the card and the session's view log."""


class Capture:
    """A command's output: spooled to disk (up to `DISK_CAP`), a head and a tail kept in memory,
    and sampled to the card as `CommandOutput` events."""

    def __init__(self, spool: Spool, emit: Callable[[Event], None], call_id: str) -> None:
        self.spool = spool
        self._emit = emit
        self._call_id = call_id
        self.total = 0
        self.spooled = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._pending = bytearray()
        self._dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._resync = False
        self._held = ""
        """The start of a line the last event left for the next."""
        self._shown = 0
        self._last_emit = -1e9

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.spooled < DISK_CAP:
            kept = chunk[: DISK_CAP - self.spooled]
            self.spool.write(kept)
            self.spooled += len(kept)
        self._pending += chunk
        head_room = HEAD_BYTES - len(self._head)
        if head_room > 0:
            self._head += chunk[:head_room]
            chunk = chunk[head_room:]
        self._tail += chunk
        if len(self._tail) > 2 * TAIL_BYTES:
            del self._tail[:-TAIL_BYTES]
        if len(self._pending) > EMIT_BYTES:
            self._dropped += len(self._pending) - EMIT_BYTES
            del self._pending[:-EMIT_BYTES]
            self._decoder.reset()
            self._resync = True
        self.flush(due_only=True)

    def flush(self, *, due_only: bool = False) -> None:
        """Emit the waiting output (with a note of what was skipped), unless `due_only` and the
        last event was too recent.

        Each event ends at a line's end when it can: a partial last line waits for the next
        interval, so a token is not cut in two events (each redacted alone where it is kept,
        neither half known as a token). Output cut by the sampling shows from its next line."""
        now = time.monotonic()
        interval = EMIT_INTERVAL if self._shown < EMIT_BUDGET else 1.0
        if not (self._pending or self._held) or (due_only and now - self._last_emit < interval):
            return
        fresh = bool(self._pending)
        data = bytes(self._pending)
        if self._resync:
            data = _from_char_start(data)
        new = self._decoder.decode(data)
        if self._resync:
            new, self._held = new[new.find("\n") + 1 :], ""
        if self._dropped:
            new = f"\n… {byte_size(self._dropped)} not shown …\n{new}"
        text, self._held = self._held + new, ""
        if due_only and fresh and 0 < (cut := text.rfind("\n") + 1) < len(text):
            text, self._held = text[:cut], text[cut:]
        self._pending.clear()
        self._dropped, self._resync, self._last_emit = 0, False, now
        if text:
            self._shown += len(text)
            self._emit(CommandOutput(self._call_id, text))

    def result_text(self, ref: str) -> tuple[str, bool]:
        """The output as the model sees it: whole, or its head and tail around a note of the
        cut (True)."""
        if self.total <= HEAD_BYTES + TAIL_BYTES:
            return (self._head + self._tail).decode("utf-8", "replace"), False
        # cut at line ends where there are some: a token cut in two is no longer known as one
        # where the transcript is redacted
        head, tail = bytes(self._head), bytes(self._tail[-TAIL_BYTES:])
        head = head[: head.rfind(b"\n") + 1] or head
        tail = tail[tail.find(b"\n") + 1 :] or tail
        cut = self.total - len(head) - len(tail)
        whole = "the whole output"
        if self.spooled != self.total:
            whole = f"its first {byte_size(DISK_CAP)}"
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(head)
        tail_text = _from_char_start(tail).decode("utf-8", "replace")
        note = f'\n… {cut} bytes cut; read_output(ref="{ref}") reads {whole} …\n'
        return head_text + note + tail_text, True

    def spool_note(self) -> str:
        if self.spooled == self.total:
            return ""
        lost = byte_size(self.total - self.spooled)
        return f"output past {byte_size(DISK_CAP)} not kept ({lost})"


def _from_char_start(data: bytes) -> bytes:
    """`data` without the UTF-8 continuation bytes a cut left at its start."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]

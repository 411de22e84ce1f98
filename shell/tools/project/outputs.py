"""Whole outputs kept beside the transcript, so a cut result can be read on.

A tool result too big for the context is cut before it enters the transcript
(`shell.tools.fitting`), and a command's output is spooled as it streams (`Spool`); either way
the whole text is kept here, under the call's id, and `read_output(ref="output:<call id>",
from, lines)` reads it on (so does `read_file` with the same ref, when the project tools are
offered). The files live in the workspace's git-ignored state folder, 0600 in a 0700 folder,
with every credential redacted before it is written (`shell.secrets.door`): a `cat .env` keeps
`[REDACTED …]`, never the key. They are pruned to the newest `KEEP`, and to `MAX_BYTES` in all.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from shell.secrets.door import Redactor, open_private, private_folder, redacted, write_private
from shell.tools.toolbox import ToolError
from shell.tools.window import Window, window

PREFIX = "output:"
KEEP = 50
MAX_BYTES = 256 * 1024 * 1024
"""What the kept outputs may take in all; past it the oldest go (the newest always stays)."""
BACKLOG = 4 * 1024 * 1024
"""Output not yet redacted and written that a command may be ahead by; past it the command's
output is read only as fast as it is redacted (its pipe fills, and it waits)."""
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-output-spool")
"""The thread that redacts and writes every spool (about 1 MB/s of new lines), in order, off
the event loop."""


class OutputStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, call_id: str) -> Path:
        """Where the whole output of `call_id` is kept (the folder is made on demand)."""
        private_folder(self.folder)
        return self.folder / f"{_SAFE_ID.sub('_', call_id) or 'call'}.txt"

    @staticmethod
    def ref(call_id: str) -> str:
        """How the model names the kept output: "output:<call id>"."""
        return f"{PREFIX}{call_id}"

    def keep(self, call_id: str, text: str) -> str:
        """Keep `text`, redacted (unless the call spooled its output already), and return its
        ref."""
        path = self.path(call_id)
        if not path.exists():
            write_private(path, redacted(text))
        self.prune()
        return self.ref(call_id)

    def spool(self, call_id: str) -> Spool:
        """A new file for the output of `call_id` as it streams."""
        return Spool(self.path(call_id))

    def find(self, ref: str) -> Path:
        """The file of an "output:<call id>" ref.

        Raises:
            ToolError: no output is kept under that id.
        """
        call_id = ref.removeprefix(PREFIX).strip()
        path = self.folder / f"{_SAFE_ID.sub('_', call_id)}.txt"
        if not call_id or not path.is_file():
            raise ToolError(f"no output is kept as {ref!r} (outputs are kept for recent calls)")
        return path

    def read(self, ref: str, from_line: int, count: int, max_chars: int) -> Window:
        """A window of the output kept as `ref` (see `shell.tools.window`).

        Raises:
            ToolError: no output is kept under that id.
        """
        data = self.find(ref).read_bytes()
        return window(data.decode("utf-8", errors="replace"), from_line, count, max_chars)

    def prune(self, *, max_bytes: int = MAX_BYTES) -> None:
        """The newest `KEEP` outputs kept, fewer when they take over `max_bytes` together."""
        sized = []
        for path in self.folder.glob("*.txt"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            sized.append((stat.st_mtime, stat.st_size, path))
        total = 0
        for index, (_, size, old) in enumerate(sorted(sized, key=lambda s: s[0], reverse=True)):
            total += size
            if index >= KEEP or (index and total > max_bytes):
                old.unlink(missing_ok=True)


class Spool:
    """A command's output file, written as the output comes: each chunk redacted line by line
    (`shell.secrets.door.Redactor`) and written on the spool thread, so nothing unredacted is
    ever on disk and the event loop never scans. Bytes that are not UTF-8 are kept as they
    came."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open_private(path, "wb")
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._redactor = Redactor()
        self._lock = threading.Lock()
        self._backlog = 0
        self._failure: OSError | None = None
        self._last: Future[None] | None = None

    def write(self, chunk: bytes) -> None:
        """Queue `chunk`.

        Raises:
            OSError: an earlier chunk could not be written (a full disk).
        """
        if self._failure is not None:
            raise self._failure
        with self._lock:
            self._backlog += len(chunk)
        self._last = _WRITER.submit(self._write, chunk)

    async def drained(self) -> None:
        """Return once the output queued is under `BACKLOG`."""
        if self._backlog > BACKLOG and self._last is not None:
            await asyncio.wrap_future(self._last)

    def close(self) -> Future[None]:
        """Write what the redactor held back and close the file, after the queued chunks."""
        return _WRITER.submit(self._close)

    def _write(self, chunk: bytes) -> None:
        try:
            if self._failure is None:
                self._put(self._redactor.feed(self._decoder.decode(chunk)))
        except OSError as error:
            self._failure = error
        finally:
            with self._lock:
                self._backlog -= len(chunk)

    def _close(self) -> None:
        try:
            if self._failure is None:
                self._put(self._redactor.feed(self._decoder.decode(b"", final=True)))
                self._put(self._redactor.close())
        except OSError as error:
            self._failure = error
        finally:
            self._file.close()

    def _put(self, text: str) -> None:
        if text:
            self._file.write(text.encode("utf-8", "surrogateescape"))

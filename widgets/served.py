"""A TUI that `cairn serve` started for a browser connection (`widgets.serve.tui_argv`)."""

from __future__ import annotations

import os
import signal
import threading
import time


def main() -> None:
    """A served TUI: `cairn` itself, and a watch on the server. Textual's web driver reads
    end-of-file from a closed pipe in a loop, so a TUI whose server went away would spin at full
    CPU for ever (seen: a TUI whose browser left at once outlived its stopped server, spinning);
    the watch asks it to quit when the server is gone, then makes sure."""
    server = os.getppid()

    def watch() -> None:
        while os.getppid() == server:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)  # the web driver's handler quits the app
        time.sleep(5)
        os._exit(0)

    threading.Thread(target=watch, name="server-watch", daemon=True).start()
    from widgets.cli import main as cairn_main  # after the watch: 90 ms of imports

    cairn_main()

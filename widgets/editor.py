"""F4: the memory file in view (the focused pane's, else the memory tabs' active one) opened in
the user's editor, the app suspended meanwhile; the saved file then goes to the core
(`AgentSource.edited_by_user`), which commits it as the user's edit and re-indexes it.

The editor is `$EDITOR`, else `$VISUAL`, else `nano` when it is on the PATH, else `vi`; the
variable is split like a shell would (`code -w`). An editor that cannot start or exits with a
failure is a notice, and nothing is committed: the file is as the editor left it.

A headless app (Pilot tests) cannot suspend: the editor then runs with no terminal, which is
what a test's script editor needs. Elsewhere without suspend (a browser through `cairn serve`)
the notice names the file to edit by other means; the watcher commits that edit.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from textual.app import SuspendNotSupported
from textual.notifications import SeverityLevel

from widgets.host import AgentHost
from widgets.panes.side import SidePanes
from widgets.transcript import Transcript


class EditorHost(AgentHost, Protocol):
    """What F4 needs of the app besides the agent: the panes, the transcript, and the
    terminal to hand over (`CairnApp` has this shape)."""

    @property
    def side_panes(self) -> SidePanes: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def is_headless(self) -> bool: ...

    def notify(
        self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...
    ) -> None: ...

    def suspend(self) -> AbstractContextManager[None]: ...


def editor_command(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The editor to run, as arguments (the file's path goes after them)."""
    for name in ("EDITOR", "VISUAL"):
        if value := environ.get(name, "").strip():
            return shlex.split(value)
    return ["nano" if shutil.which("nano") else "vi"]


def run_editor(command: list[str], path: Path, *, terminal: bool = True) -> str | None:
    """Run `command` on `path` and wait for it. Returns why it failed, or None."""
    stdin = None if terminal else subprocess.DEVNULL
    try:
        done = subprocess.run([*command, str(path)], check=False, stdin=stdin)
    except OSError as error:  # not found, not executable
        return f"{command[0]} could not start: {error.strerror or error}"
    if done.returncode != 0:
        return f"{shlex.join(command)} exited with status {done.returncode}"
    return None


async def edit_memory(app: EditorHost) -> None:
    """Open the memory file in view in the editor; commit what was saved."""
    if app.agent.playback is not None:
        app.notify("A replay shows a past session: it edits no memory.", timeout=3)
        return
    if app.busy:
        app.notify("A turn is under way: edit when it ends.", severity="warning", timeout=3)
        return
    side = app.side_panes
    path = side.active_file()
    if not path.is_relative_to(side.workspace):
        app.notify(
            "F4 edits this project's memory; the global one, in a session without a project.",
            severity="warning",
            timeout=4,
        )
        return
    rel = path.relative_to(side.workspace).as_posix()
    command = editor_command()
    try:
        with app.suspend():
            failure = run_editor(command, path)
    except SuspendNotSupported:
        if not app.is_headless:
            app.notify(f"This screen cannot hand over to an editor: edit {path} outside Cairn.")
            return
        failure = await asyncio.to_thread(run_editor, command, path, terminal=False)
    if failure is not None:
        await app.transcript.add_notice(f"{failure}; nothing committed for {rel}", "warning")
        return
    app.run_events(lambda: app.agent.edited_by_user(rel))

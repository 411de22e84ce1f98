"""What a tool card shows beyond its name: the key argument of a project or MCP tool, the
approval, and a running command's output tail with how it ended."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from shell.events import ApprovalDecided, CommandFinished
from shell.text import byte_size, shorten
from widgets.format import duration, one_line

TAIL_LINES = 12
"""How many of a command's last output lines its card shows."""
MCP_SEPARATOR = "__"


def _flat(text: str) -> str:
    """One line with single spaces: the card's header splits its status off at a double space."""
    return " ".join(str(text).split())


def key_argument(name: str, arguments: dict[str, Any]) -> str | None:
    """What a project tool's header shows of its call ("src/app.py:10-59", "$ pytest -q");
    None for the tools whose arguments show as they are (memory tools, MCP tools)."""
    path = _flat(arguments.get("path") or "")
    match name:
        case "read_file":
            start, count = arguments.get("from"), arguments.get("lines")
            if start is None and count is None:
                return path
            first = int(start or 1)
            return f"{path}:{first}-{first + int(count) - 1}" if count else f"{path}:{first}-"
        case "list_files" | "grep":
            glob = _flat(arguments.get("glob") or "")
            where = " ".join(part for part in (glob, f"in {path}" if path else "") if part)
            if name == "list_files":
                return where or "."
            pattern = _flat(arguments.get("pattern") or "")
            return f"/{pattern}/ {where}".strip()
        case "edit_file" | "write_file":
            return path
        case "run_command":
            return f"$ {_flat(arguments.get('command') or '')}"
    return None


def mcp_parts(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool's name `<server>__<tool>`; None for any other tool."""
    server, separator, tool = name.partition(MCP_SEPARATOR)
    return (server, tool) if separator and server and tool else None


def approval_text(event: ApprovalDecided) -> str:
    """How a call was decided, in words: "allowed once by you", "denied: not now"."""
    if event.allowed:
        match event.by:
            case "user" if event.choice == "allow_session":
                return "allowed for this session by you"
            case "user":
                return "allowed once by you"
            case "session":
                return "allowed for this session"
            case "rule":
                return f"allowed by {event.reason.removeprefix('allow ')}"
            case "yes":
                return "allowed by --yes"
        return f"allowed ({event.by})"
    match event.by:
        case "user":
            return f"denied: {event.reason}" if event.reason else "denied by you"
        case "cancel":
            return "denied: the turn was cancelled while it waited"
        case "headless":
            return "denied: no one to ask (headless)"
    return f"denied: {event.reason or event.by}"


def command_ending(event: CommandFinished) -> str:
    """How a command ended: "exit 0 · 12 ms · 3 B", "killed at timeout · 2.0 s · …"."""
    match event.ended:
        case "exited":
            how = f"exit {event.exit_code}"
        case "timeout":
            how = "killed at timeout"
        case "cancelled":
            how = "stopped (esc)"
        case _:
            how = f"failed to start: {event.detail}" if event.detail else "failed to start"
    parts = [how, duration(event.duration_ms), byte_size(event.output_bytes)]
    if event.output_ref:
        parts.append(f"whole output: read_output {event.output_ref}")
    return " · ".join(parts)


class CommandTail(Static):
    """A running command's last `TAIL_LINES` lines of output, then how it ended."""

    DEFAULT_CSS = """
    CommandTail {
        height: auto;
        display: none;
        color: $muted-text;
        background: $background;
        padding: 0 1;
        &.-shown { display: block; }
        &.-failed { border-left: outer $error; }
    }
    """

    def __init__(self) -> None:
        super().__init__("", classes="tool-call--command")
        self.tail = ""
        self.ending: CommandFinished | None = None

    def append(self, text: str) -> None:
        lines = (self.tail + text).replace("\r\n", "\n").split("\n")
        lines = [line.rsplit("\r", 1)[-1] for line in lines]  # a progress bar: its last state
        self.tail = "\n".join(lines[-TAIL_LINES - 1 :])  # the last may be a line still open
        self._show()

    def finish(self, event: CommandFinished) -> None:
        self.ending = event
        failed = event.ended != "exited" or event.exit_code != 0
        self.set_class(failed, "-failed")
        self._show()

    @property
    def lines(self) -> list[str]:
        return self.tail.rstrip("\n").split("\n")[-TAIL_LINES:] if self.tail.strip() else []

    def _show(self) -> None:
        self.add_class("-shown")
        text = Text(no_wrap=True, overflow="ellipsis")
        for line in self.lines:
            text.append_text(Text.from_ansi(line, no_wrap=True))
            text.append("\n")
        if self.ending is not None:
            text.append(f"⏹ {command_ending(self.ending)}", style="bold")
        else:
            text.rstrip()
        self.update(text)

    def describe(self) -> str:
        parts = [f"output: {shorten(one_line(line, 200), 200)}" for line in self.lines]
        if self.ending is not None:
            parts.append(command_ending(self.ending))
        return "\n".join(parts)

"""The slash commands: one registry that the core, `cairn run` and the TUI all read.

`COMMANDS` lists every command once, with its argument hint, a one-line help and its key in the
TUI. `Agent.submit` sends its text through `parse` first: a command runs as a command, never as
chat, and an unknown one is an `Error` with the nearest match, not a prompt for the model.

What counts as a command: the text's first word is `/` and a lower-case name
(`^/[a-z][a-z-]*$`). A known name runs with the rest of the text as its argument
("/compact the API design"); an unknown name alone ("/foo") is an unknown command; anything else
is a prompt ("/usr/bin is a folder", "/etc holds the configs": a path, or an unknown word
followed by more text, goes to the model as written).

Commands marked `tui_only` (/review, /history, /conflicts, /clear, /exit) act on the screen:
the TUI handles them itself; the core answers them with a notice that says where they work. The
TUI's command palette and its /help view are built from `COMMANDS` as well.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from shell.events import CommandHelp, Error, Event, HelpShown, Notice


@dataclass(frozen=True)
class Command:
    """One slash command.

    Attributes:
        name: With its slash, e.g. "/compact".
        args: The argument hint, e.g. "[focus]"; "" when it takes none.
        help: One line: what it does.
        key: Its key in the TUI (Textual's spelling, e.g. "f3", "ctrl+l"), or None.
        tui_only: Acts on the TUI's screen; the core does not run it.
        aliases: Other names that run it, each with its slash.
    """

    name: str
    args: str
    help: str
    key: str | None = None
    tui_only: bool = False
    aliases: tuple[str, ...] = ()

    def usage(self) -> str:
        """The name with its argument hint: "/compact [focus]"."""
        return f"{self.name} {self.args}".strip()

    def describe(self) -> CommandHelp:
        return CommandHelp(self.name, self.args, self.help, self.key, self.tui_only)


COMMANDS: tuple[Command, ...] = (
    Command("/help", "", "list the slash commands and their keys"),
    Command("/compact", "[focus]", "flush memory if due, then summarise the conversation"),
    Command("/flush", "", "save what is worth keeping to today's note now"),
    Command("/new", "", "flush memory if due, then start a new session"),
    Command("/context", "", "what the next prompt holds and how it was counted"),
    Command("/dream", "", "run a dreaming sweep: proposals for MEMORY.md"),
    Command("/sync", "[redact]", "pull then push; redact [apply]: unblock a stopped push"),
    Command("/tools", "", "the model's tools, their approvals, the MCP servers"),
    Command("/review", "", "review dreaming's proposals", key="f3", tui_only=True),
    Command("/history", "", "memory history: diffs and revert", key="f5", tui_only=True),
    Command("/conflicts", "", "resolve the open sync conflicts", key="f6", tui_only=True),
    Command(
        "/why", "[FILE:LINE]", "where a memory line came from: commit, session, turn", "f7", True
    ),
    Command("/clear", "", "clear the transcript view (the session stays)", "ctrl+l", True),
    Command("/exit", "", "save the session and quit", "ctrl+q", True, aliases=("/quit",)),
)
"""Every slash command, in the order /help lists them."""

COMMAND_NAME = re.compile(r"^/[a-zA-Z][a-zA-Z-]*$")
"""A command's name as typed: case does not matter (`/Help` is `/help`)."""


@dataclass(frozen=True)
class Invocation:
    """A command as typed: `command` is None when `name` is no command we know."""

    name: str
    argument: str
    command: Command | None


def find(name: str) -> Command | None:
    """The command called `name` (or one of its aliases), with its slash."""
    return next((c for c in COMMANDS if name == c.name or name in c.aliases), None)


def parse(text: str) -> Invocation | None:
    """`text` as a command, or None when it is a prompt for the model (see the module's rules)."""
    name, _, argument = text.strip().partition(" ")
    if not COMMAND_NAME.match(name):
        return None
    name = name.lower()
    command = find(name)
    if command is None and argument.strip():
        return None  # "/etc holds the configs": words after an unknown name make it a prompt
    return Invocation(name, argument.strip(), command)


def suggestion(name: str) -> str | None:
    """The known command closest to `name`, if any is close: a typo (`/hepl`, `/compcat`),
    not a name that shares a letter or two (`/foo` is not `/tools`). Compared without the
    slash, which every name shares."""
    names = {n.removeprefix("/"): n for c in COMMANDS for n in (c.name, *c.aliases)}
    near = difflib.get_close_matches(name.removeprefix("/"), list(names), n=1, cutoff=0.7)
    return names[near[0]] if near else None


def unknown(name: str) -> Error:
    """An unknown command, with the nearest match: it is not sent to the model."""
    near = suggestion(name)
    hint = f"did you mean {near}?" if near else "/help lists them"
    return Error("command", f"unknown command {name} — {hint}")


def help_shown() -> HelpShown:
    return HelpShown([command.describe() for command in COMMANDS])


class CommandTarget(Protocol):
    """What the commands run on: the agent (`shell.agent.Agent`)."""

    def compact(self, focus: str | None = None) -> AsyncGenerator[Event]: ...

    def flush(self) -> AsyncGenerator[Event]: ...

    def new_session(self) -> AsyncGenerator[Event]: ...

    def context_report(self) -> AsyncGenerator[Event]: ...

    def dream(self) -> AsyncGenerator[Event]: ...

    def tools_listing(self) -> AsyncGenerator[Event]: ...

    def sync_now(self) -> AsyncGenerator[Event]: ...

    def redact_unpushed(self, apply: bool = False) -> AsyncGenerator[Event]: ...


async def run_command(target: CommandTarget, invocation: Invocation) -> AsyncGenerator[Event]:
    """The events of one command on `target`."""
    command = invocation.command
    if command is None:
        yield unknown(invocation.name)
        return
    match command.name:
        case "/help":
            yield help_shown()
            return
        case "/compact":
            stream = target.compact(invocation.argument or None)
        case "/flush":
            stream = target.flush()
        case "/new":
            stream = target.new_session()
        case "/context":
            stream = target.context_report()
        case "/dream":
            stream = target.dream()
        case "/tools":
            stream = target.tools_listing()
        case "/sync":
            match invocation.argument.split():
                case []:
                    stream = target.sync_now()
                case ["redact"]:
                    stream = target.redact_unpushed()
                case ["redact", "apply"]:
                    stream = target.redact_unpushed(apply=True)
                case _:
                    yield Error("command", "/sync takes nothing, redact, or redact apply")
                    return
        case _:
            key = f" ({command.key})" if command.key else ""
            yield Notice(f"{command.name} works in the TUI only{key}.")
            return
    async with contextlib.aclosing(stream) as events:
        async for event in events:
            yield event
